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

// takenEach is the optional ability of a TakenSet to look up a stream's
// ids at once (dedup.Compact): it appends to found the index of each id
// for which Has(prefix+id) holds.
type takenEach interface {
	HasEach(prefix string, ids []string, found []int) []int
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
// event id its log held at start: all of the stream's ids are looked up
// at once when the set can.
func (p *Pipeline) filterTaken(_ context.Context, e *streams.Entry, data [][]byte, ids []string) ([][]byte, []string) {
	if p.taken == nil || ids == nil || !dedups(e) {
		return data, ids
	}
	var held []int // indexes in ids
	if te, ok := p.taken.(takenEach); ok {
		held = te.HasEach(StreamKey(e.Rec.ID, ""), ids, nil)
	} else {
		for i, id := range ids {
			if id != "" && p.taken.Has(StreamKey(e.Rec.ID, id)) {
				held = append(held, i)
			}
		}
	}
	if len(held) == 0 {
		return data, ids
	}
	keepData := make([][]byte, 0, len(data)-len(held))
	keepIDs := make([]string, 0, len(data)-len(held))
	for i := range ids {
		if len(held) > 0 && held[0] == i {
			held = held[1:]
			continue
		}
		keepData, keepIDs = append(keepData, data[i]), append(keepIDs, ids[i])
	}
	p.reg.Count(e.Rec.ID, "duplicates_suppressed", int64(len(data)-len(keepData)))
	return keepData, keepIDs
}
