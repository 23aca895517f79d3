package redislog_test

import (
	"context"
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/redislog"
)

// testPrefix is a key prefix of this test alone: other tests (and other
// packages' tests) share the Redis database, so a test deletes its own
// keys instead of flushing.
func testPrefix(t *testing.T) string {
	return fmt.Sprintf("fleethub:test:%s:%d:", t.Name(), time.Now().UnixNano())
}

func mustEpoch(t *testing.T, l *redislog.Log, id string) string {
	t.Helper()
	e, err := l.Epoch(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func mustAppend(t *testing.T, l *redislog.Log, id string, data ...string) int64 {
	t.Helper()
	b := make([][]byte, len(data))
	for i, d := range data {
		b[i] = []byte(d)
	}
	last, err := l.Append(context.Background(), id, b)
	if err != nil {
		t.Fatal(err)
	}
	return last
}

var epochForm = regexp.MustCompile(`^[0-9a-f]{16}$`)

// A stream never appended already has the epoch its first append keeps,
// the same on every node.
func TestEpochStableBeforeFirstAppend(t *testing.T) {
	rdb := newClient(t)
	p := testPrefix(t)
	a, b := newLogOn(t, rdb, p), newLogOn(t, rdb, p)
	e := mustEpoch(t, a, "s")
	if !epochForm.MatchString(e) {
		t.Fatalf("epoch %q", e)
	}
	if again, other := mustEpoch(t, a, "s"), mustEpoch(t, b, "s"); again != e || other != e {
		t.Fatalf("epochs %q, %q, %q: not stable", e, again, other)
	}
	if last := mustAppend(t, b, "s", "a", "b"); last != 2 {
		t.Fatalf("first append ends at %d, want 2", last)
	}
	if got := mustEpoch(t, a, "s"); got != e {
		t.Fatalf("epoch %q after the first append, want %q", got, e)
	}
	<-a.Wait("s", 1) // a follows: its mirror answers
	if got := mustEpoch(t, a, "s"); got != e {
		t.Fatalf("followed epoch %q, want %q", got, e)
	}
	if other := mustEpoch(t, a, "t"); other == e {
		t.Fatal("two streams share an epoch")
	}
}

// When a stream's keys are lost (the test deletes them, as FLUSHDB would),
// the next append starts a new epoch; offsets start again at 1 when the
// sequence was lost and go on when only the epoch was. A node that follows
// the stream resets its mirror to the new history.
func TestEpochAfterHistoryLost(t *testing.T) {
	for _, tc := range []struct {
		name     string
		lose     []string // key suffixes deleted
		restarts bool     // offsets start again at 1
	}{
		{"flushed", []string{"seq", "log", "epoch"}, true},
		{"sequence lost", []string{"seq"}, true},
		{"epoch lost", []string{"epoch"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			rdb := newClient(t)
			p := testPrefix(t)
			writer, reader, direct := newLogOn(t, rdb, p), newLogOn(t, rdb, p), newLogOn(t, rdb, p)
			mustAppend(t, writer, "s", "a", "b", "c")
			old := mustEpoch(t, writer, "s")
			for _, l := range []*redislog.Log{reader, direct} {
				<-l.Wait("s", 3) // follows from offset 3
				if got := mustEpoch(t, l, "s"); got != old {
					t.Fatalf("follower's epoch %q, want %q", got, old)
				}
			}

			keys := make([]string, len(tc.lose))
			for i, k := range tc.lose {
				keys[i] = p + "{s}:" + k
			}
			if err := rdb.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
			last := mustAppend(t, writer, "s", "x", "y")
			first := int64(1)
			if !tc.restarts {
				first = 4
			}
			if last != first+1 {
				t.Fatalf("append after the loss ends at %d, want %d", last, first+1)
			}
			cur := mustEpoch(t, writer, "s")
			if cur == old || !epochForm.MatchString(cur) {
				t.Fatalf("epoch %q after the loss (was %q)", cur, old)
			}
			if again := mustEpoch(t, newLogOn(t, rdb, p), "s"); again != cur {
				t.Fatalf("another node's epoch %q, want %q", again, cur)
			}
			checkEntries(t, writer, first, tc.restarts)

			// a read from Redis (offsets older than the mirror) sees the
			// new history, and the node's Epoch names it from then on
			checkEntries(t, direct, first, tc.restarts)
			if got := mustEpoch(t, direct, "s"); got != cur {
				t.Fatalf("epoch %q after reading the new history, want %q", got, cur)
			}

			// the follower notices within a round of its XREAD and wakes
			// its waiters when it resets the mirror
			for mustEpoch(t, reader, "s") != cur {
				n, err := reader.Last(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				select {
				case <-reader.Wait("s", n+1):
				case <-time.After(5 * time.Second):
					t.Fatal("the follower never saw the new history")
				}
			}
			for {
				n, err := reader.Last(ctx, "s")
				if err != nil {
					t.Fatal(err)
				}
				if n == last {
					break
				}
				select {
				case <-reader.Wait("s", n+1):
				case <-time.After(5 * time.Second):
					t.Fatalf("reader's last stays %d, want %d", n, last)
				}
			}
			checkEntries(t, reader, first, tc.restarts)
		})
	}
}

// checkEntries reads a stream from offset 1: the entries "x" and "y" at
// first and first+1, after "a", "b", "c" when the history went on.
func checkEntries(t *testing.T, l *redislog.Log, first int64, restarted bool) {
	t.Helper()
	ents, err := l.Read(context.Background(), "s", 1, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"x", "y"}
	if !restarted {
		want = []string{"a", "b", "c", "x", "y"}
	}
	if len(ents) != len(want) {
		t.Fatalf("read %d entries, want %v", len(ents), want)
	}
	for i, e := range ents {
		off := int64(i + 1)
		if restarted {
			off = first + int64(i)
		}
		if e.Offset != off || string(e.Data) != want[i] {
			t.Fatalf("entry %d: offset %d %q, want %d %q", i, e.Offset, e.Data, off, want[i])
		}
	}
}
