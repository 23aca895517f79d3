package pipeline

import (
	"context"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/ingest/streams"
)

// StreamKey is the key of an event id a deduplicating stream's log took,
// in the window of KeepStreamIDs.
func StreamKey(streamID, eventID string) string {
	return streamID + "\x00" + eventID
}

// KeepStreamIDs gives the pipeline the window of the event ids each
// deduplicating stream's log holds, for a log that does not keep them
// itself (the embedded one; redislog keeps them with its entries). An
// event the stream's log already holds is not appended to it again,
// whatever the organization's window says: after a crash the
// organization's window starts empty while the stream logs, and this
// window rebuilt from them (Warm), know what each stream took. Call
// before Run.
func (p *Pipeline) KeepStreamIDs(w dedup.Window) { p.taken = w }

// pending is what filterTaken claimed for one append: recorded once the
// append succeeded, given up otherwise.
type pending []string

// filterTaken drops from a deduplicating stream's entries those whose
// event id its log already holds, and claims the others' ids.
func (p *Pipeline) filterTaken(ctx context.Context, e *streams.Entry, data [][]byte, ids []string) ([][]byte, []string, pending) {
	if p.taken == nil || ids == nil || !dedups(e) {
		return data, ids, nil
	}
	var claimed pending
	keepData, keepIDs := data[:0:0], ids[:0:0]
	for i, id := range ids {
		if id != "" {
			key := StreamKey(e.Rec.ID, id)
			st, err := p.taken.Claim(ctx, key)
			if err == nil && st == dedup.Duplicate {
				continue
			}
			if err == nil && st == dedup.Unseen {
				claimed = append(claimed, key)
			}
		}
		keepData, keepIDs = append(keepData, data[i]), append(keepIDs, id)
	}
	if n := len(data) - len(keepData); n > 0 {
		p.reg.Count(e.Rec.ID, "duplicates_suppressed", int64(n))
	}
	return keepData, keepIDs, claimed
}

// settleTaken records the claimed ids after a successful append, or
// gives them up.
func (p *Pipeline) settleTaken(ctx context.Context, ok bool, ps ...pending) {
	for _, keys := range ps {
		if len(keys) == 0 {
			continue
		}
		if ok {
			if err := p.taken.Done(ctx, keys...); err != nil {
				p.logger.Warn("recording a stream's event ids failed", "error", err)
			}
			continue
		}
		for _, k := range keys {
			_ = p.taken.Forget(ctx, k) // the claim lapses after its lease otherwise
		}
	}
}
