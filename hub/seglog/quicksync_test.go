package seglog

import (
	"testing"
	"time"
)

func TestQuickSyncFollowsTheDisk(t *testing.T) {
	var none *quickSync
	if none.quick() {
		t.Fatal("a log without a quickSync made a quick call")
	}
	q := new(quickSync)
	if !q.quick() {
		t.Fatal("a new log's first sync is not a quick call")
	}
	// a disk that turns slow: within a few syncs they block as usual
	n := 0
	for q.quick() {
		q.observe(5 * time.Millisecond)
		if n++; n > 8 {
			t.Fatalf("still quick calls after %d syncs of 5 ms (mean %v)", n, time.Duration(q.mean.Load()))
		}
	}
	// a single quick sync does not bring it back
	q.observe(80 * time.Microsecond)
	if q.quick() {
		t.Fatalf("quick again after one fast sync among slow ones (mean %v)", time.Duration(q.mean.Load()))
	}
	// the disk fast again: quick calls again
	for range 40 {
		q.observe(80 * time.Microsecond)
	}
	if !q.quick() {
		t.Fatalf("not quick after 40 syncs of 80 µs (mean %v)", time.Duration(q.mean.Load()))
	}
}
