package bustest

import (
	"context"
	"fmt"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/feed"
)

// reader is the bus under test as a feed.Reader: every bus reads its
// topics by offset for the feed.
func reader(t *testing.T, b hub.Bus) feed.Reader {
	t.Helper()
	r, ok := b.(feed.Reader)
	if !ok {
		t.Fatalf("%T is not a feed.Reader", b)
	}
	return r
}

// readerReadsAtOffsets: the partitions' bounds hold every message
// published, a read from the first offset returns them in offset order
// with no gap, a read from the middle starts there, and a read at the end
// returns nothing.
func readerReadsAtOffsets(t *testing.T, f Factory) {
	const partitions, keys, perKey = 3, 6, 10
	b := f.Storage(t, partitions)(t)
	publish(t, b, keys, 0, perKey)
	r := reader(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	n, err := r.Partitions(ctx, Topic)
	if err != nil || n != partitions {
		t.Fatalf("Partitions: %d, %v; want %d", n, err, partitions)
	}
	var all [][2]int64
	if ab, ok := r.(feed.AllBounds); ok { // an optional ability: it must agree with Bounds
		if all, err = ab.AllBounds(ctx, Topic); err != nil || len(all) != n {
			t.Fatalf("AllBounds: %v, %v", all, err)
		}
	}
	seen := map[string]bool{}
	for p := range n {
		first, end, err := r.Bounds(ctx, Topic, p)
		if err != nil || first > end {
			t.Fatalf("Bounds of %d: %d, %d, %v", p, first, end, err)
		}
		if all != nil && all[p] != [2]int64{first, end} {
			t.Fatalf("partition %d: AllBounds %v, Bounds %d, %d", p, all[p], first, end)
		}
		msgs, err := r.ReadAt(ctx, Topic, p, first, 1000)
		if err != nil || int64(len(msgs)) != end-first {
			t.Fatalf("partition %d [%d,%d): read %d messages, %v", p, first, end, len(msgs), err)
		}
		for i, m := range msgs {
			if m.Offset != first+int64(i) || m.Partition != p || m.Topic != Topic || seen[string(m.Value)] {
				t.Fatalf("partition %d message %d: %s/%d offset %d value %s", p, i, m.Topic, m.Partition, m.Offset, m.Value)
			}
			seen[string(m.Value)] = true
		}
		if end-first >= 3 {
			mid, err := r.ReadAt(ctx, Topic, p, first+1, 2)
			if err != nil || len(mid) != 2 || mid[0].Offset != first+1 || mid[1].Offset != first+2 || string(mid[0].Value) != string(msgs[1].Value) {
				t.Fatalf("partition %d from %d: %v, %v", p, first+1, mid, err)
			}
		}
		if rest, err := r.ReadAt(ctx, Topic, p, end, 10); err != nil || len(rest) != 0 {
			t.Fatalf("partition %d at its end: %d messages, %v", p, len(rest), err)
		}
	}
	if len(seen) != keys*perKey {
		t.Fatalf("the partitions hold %d messages, %d were published", len(seen), keys*perKey)
	}
}

// readerWaitsForANewMessage: a wait at a partition's end returns once a
// message lands there; a wait below the end returns at once.
func readerWaitsForANewMessage(t *testing.T, f Factory) {
	const partitions = 2
	b := f.Storage(t, partitions)(t)
	publish(t, b, 4, 0, 1)
	r := reader(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	ends := make([]int64, partitions)
	for p := range partitions {
		first, end, err := r.Bounds(ctx, Topic, p)
		if err != nil {
			t.Fatal(err)
		}
		if end > first {
			if err := r.Wait(ctx, Topic, p, end-1); err != nil {
				t.Fatalf("wait below the end of %d: %v", p, err)
			}
		}
		ends[p] = end
	}
	woke := make(chan int, partitions)
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	for p := range partitions {
		go func() {
			if err := r.Wait(wctx, Topic, p, ends[p]); err == nil {
				woke <- p
			}
		}()
	}
	publish(t, b, 1, 1, 2)
	select {
	case p := <-woke:
		if _, end, err := r.Bounds(ctx, Topic, p); err != nil || end <= ends[p] {
			t.Fatalf("the wait of partition %d returned, its end is %d (was %d), %v", p, end, ends[p], err)
		}
	case <-ctx.Done():
		t.Fatal(fmt.Sprint("no wait returned after a publish within ", waitLimit))
	}
	// a wait whose ctx ends returns its error
	wcancel()
	gone, gcancel := context.WithCancel(ctx)
	gcancel()
	if err := r.Wait(gone, Topic, 0, 1<<40); err == nil {
		t.Fatal("a wait with an ended ctx returned nil")
	}
}
