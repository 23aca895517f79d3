package pipeline

import (
	"context"

	"github.com/fleethub/fleethub/hub/streams"
)

// StreamKey is the key of an event id a deduplicating stream's log took,
// in the set of KeepStreamIDs.
func StreamKey(streamID, eventID string) string {
	return streamID + "\x00" + eventID
}

// TakenSet answers whether a deduplicating stream's log holds an event
// id (a dedup.Compact that Warm filled).
type TakenSet interface {
	Has(key string) bool
}

// KeepStreamIDs gives the pipeline the event ids each deduplicating
// stream's log held when the node started, for a log that does not keep
// them itself (the embedded one; redislog keeps them with its entries),
// as Warm rebuilt them from the logs. An event a stream's log held then
// is not appended to it again, whatever the organization's window says:
// after a crash that window starts empty, while the logs know what each
// stream took. Ids appended since the start need no entry here: the
// organization's window, which runs from the start, stops their copies.
// Call before Run.
func (p *Pipeline) KeepStreamIDs(s TakenSet) { p.taken = s }

// filterTaken drops from a deduplicating stream's entries those whose
// event id its log held at start.
func (p *Pipeline) filterTaken(_ context.Context, e *streams.Entry, data [][]byte, ids []string) ([][]byte, []string) {
	if p.taken == nil || ids == nil || !dedups(e) {
		return data, ids
	}
	var keepData [][]byte
	var keepIDs []string
	for i, id := range ids {
		if id != "" && p.taken.Has(StreamKey(e.Rec.ID, id)) {
			if keepData == nil { // the first one dropped: copy what came before
				keepData, keepIDs = append([][]byte{}, data[:i]...), append([]string{}, ids[:i]...)
			}
			continue
		}
		if keepData != nil {
			keepData, keepIDs = append(keepData, data[i]), append(keepIDs, id)
		}
	}
	if keepData == nil {
		return data, ids
	}
	p.reg.Count(e.Rec.ID, "duplicates_suppressed", int64(len(data)-len(keepData)))
	return keepData, keepIDs
}
