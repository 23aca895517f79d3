package feed

import (
	"context"
	"fmt"
)

// Last reads the newest n entries (1..MaxLimit) of the tenant that q.Match
// takes, oldest first, with Next at the end of what was read, so a reader
// that continues from Next gets what follows with no gap and no
// duplicate. q.After and q.Wait are not used. It reads back from the end
// of every partition in growing windows until it has n entries, reached
// the oldest retained message, or looked at scanBudget messages; with a
// filter that takes few messages it may answer fewer than n.
func (f *Feed) Last(ctx context.Context, q Query, n int) (Page, error) {
	if n < 1 || n > MaxLimit {
		return Page{}, fmt.Errorf("feed: last %d: must be 1 to %d", n, MaxLimit)
	}
	bounds := make(map[string][][2]int64, len(q.Topics))
	parts := 0
	for _, t := range q.Topics {
		bs, err := f.topicBounds(ctx, t)
		if err != nil {
			return Page{}, err
		}
		bounds[t], parts = bs, parts+len(bs)
	}
	back := int64(max(n*2, readChunk))
	for {
		pos, whole := Position{}, true
		for t, bs := range bounds {
			pos[t] = make([]int64, len(bs))
			for i, b := range bs {
				pos[t][i] = max(b[0], b[1]-back)
				whole = whole && pos[t][i] == b[0]
			}
		}
		entries, err := f.tail(ctx, q, pos, n)
		if err != nil {
			return Page{}, err
		}
		if len(entries) >= n || whole || back*int64(parts) >= scanBudget {
			return Page{Entries: entries, Next: pos.Cursor(q.Topics)}, nil
		}
		back *= 4
	}
}

// tail reads from pos to the end, keeping the last n entries; pos moves
// past what was read.
func (f *Feed) tail(ctx context.Context, q Query, pos Position, n int) ([]Entry, error) {
	q.Limit = readChunk
	var keep []Entry
	for {
		es, err := f.read(ctx, q, pos)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			return keep, nil
		}
		keep = append(keep, es...)
		if len(keep) > n {
			keep = append(keep[:0:0], keep[len(keep)-n:]...)
		}
	}
}
