package dedup

import (
	"fmt"
	"math/rand"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }
func newFakeClock() *fakeClock           { return &fakeClock{t: time.Unix(1_700_000_000, 0)} }
func compactAt(c *fakeClock, size int, ttl time.Duration) *Compact {
	w := NewCompact(size, ttl)
	w.now, w.base = c.now, c.now()
	return w
}

func mustSeen(t *testing.T, w Window, id string) bool {
	t.Helper()
	dup, err := w.Seen(t.Context(), id)
	if err != nil {
		t.Fatalf("Seen(%q): %v", id, err)
	}
	return dup
}

// TestCompactTTL: an id is forgotten once its TTL passed since it was
// first seen; a repeat does not extend it.
func TestCompactTTL(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 10, 300*time.Millisecond)
	mustSeen(t, w, "a")
	clk.add(100 * time.Millisecond)
	if !mustSeen(t, w, "a") {
		t.Fatal("a forgotten before its TTL")
	}
	clk.add(199 * time.Millisecond)
	if !mustSeen(t, w, "a") {
		t.Fatal("a forgotten 1 ms before its TTL")
	}
	clk.add(time.Millisecond)
	if mustSeen(t, w, "a") {
		t.Error("a is still a dup after its TTL (a repeat extended it?)")
	}
	if !mustSeen(t, w, "a") {
		t.Error("a is not a dup right after it was seen again")
	}
	if w.Len() != 1 {
		t.Errorf("Len = %d, want 1", w.Len())
	}
}

// TestCompactDoneRenews: Done of a recorded id starts its TTL again, as
// Local's and Redis's Done do.
func TestCompactDoneRenews(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 10, time.Minute)
	mustSeen(t, w, "a")
	clk.add(50 * time.Second)
	if err := w.Done(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	clk.add(50 * time.Second)
	if st, _ := w.Claim(t.Context(), "a"); st != Duplicate {
		t.Errorf("Claim 50 s after a renewing Done = %v, want Duplicate", st)
	}
	if w.Len() != 1 {
		t.Errorf("Len = %d, want 1", w.Len())
	}
}

// TestCompactLease: a claim its holder never finished lapses after the
// lease, and lapsed claims are dropped before the map grows.
func TestCompactLease(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 10, time.Minute)
	ctx := t.Context()
	for i := range minSweep {
		if st, err := w.Claim(ctx, "old"+strconv.Itoa(i)); err != nil || st != Unseen {
			t.Fatalf("Claim = %v, %v", st, err)
		}
	}
	clk.add(DefaultLease)
	if st, _ := w.Claim(ctx, "a"); st != Unseen {
		t.Fatal("Claim(a) not Unseen")
	}
	w.mu.Lock()
	n := w.claims.n
	w.mu.Unlock()
	if n != 1 {
		t.Errorf("%d claims after a sweep, want only a's", n)
	}
	if st, _ := w.Claim(ctx, "old0"); st != Unseen {
		t.Errorf("Claim of an id whose claim lapsed = %v, want Unseen", st)
	}
	clk.add(DefaultLease - time.Millisecond)
	if st, _ := w.Claim(ctx, "a"); st != InFlight {
		t.Fatalf("Claim(a) within its lease = %v, want InFlight", st)
	}
	clk.add(time.Millisecond)
	if st, _ := w.Claim(ctx, "a"); st != Unseen {
		t.Fatalf("Claim(a) after its lease = %v, want Unseen", st)
	}
}

// TestCompactRecordAt: an id recorded at a past time expires a TTL after
// that time; one older than the TTL is not recorded; an id recorded
// already keeps its time.
func TestCompactRecordAt(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 10, time.Minute)
	ctx := t.Context()
	mustSeen(t, w, "kept")
	if err := w.RecordAt(ctx, clk.now().Add(-50*time.Second), "past", "kept"); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordAt(ctx, clk.now().Add(-time.Minute), "expired"); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordAt(ctx, clk.now().Add(time.Hour), "future"); err != nil {
		t.Fatal(err)
	}
	if err := w.RecordAt(ctx, clk.now(), "x", ""); err != ErrEmptyID {
		t.Errorf("RecordAt with an empty id = %v, want ErrEmptyID", err)
	}
	if w.Len() != 3 {
		t.Errorf("Len = %d, want 3 (kept, past, future)", w.Len())
	}
	clk.add(9 * time.Second)
	for _, id := range []string{"past", "kept", "future"} {
		if st, _ := w.Claim(ctx, id); st != Duplicate {
			t.Errorf("Claim(%s) = %v, want Duplicate", id, st)
		}
	}
	clk.add(time.Second)
	if mustSeen(t, w, "past") {
		t.Error("past is a dup a TTL after the time it was recorded at")
	}
	if mustSeen(t, w, "expired") {
		t.Error("an id recorded at a time older than the TTL is a dup")
	}
	if !mustSeen(t, w, "kept") || !mustSeen(t, w, "future") {
		t.Error("kept or future forgotten before a TTL after now")
	}
	clk.add(50 * time.Second)
	if mustSeen(t, w, "kept") || mustSeen(t, w, "future") {
		t.Error("RecordAt moved kept's time, or future was recorded later than now")
	}
}

// refWindow is an obviously correct model of Compact's records: a FIFO
// of (id, time), scanned linearly.
type refWindow struct {
	size int
	ttl  int64
	fifo []refEntry
}

type refEntry struct {
	id    string
	t     int64
	alive bool
}

func (r *refWindow) find(id string) int {
	for i := range r.fifo {
		if r.fifo[i].alive && r.fifo[i].id == id {
			return i
		}
	}
	return -1
}

func (r *refWindow) expire(now int64) {
	for len(r.fifo) > 0 && (!r.fifo[0].alive || r.fifo[0].t+r.ttl <= now) {
		r.fifo = r.fifo[1:]
	}
}

func (r *refWindow) push(id string, t int64) {
	if len(r.fifo) == r.size {
		r.fifo = r.fifo[1:]
	}
	r.fifo = append(r.fifo, refEntry{id, t, true})
}

func (r *refWindow) seen(id string, now int64) bool {
	r.expire(now)
	if i := r.find(id); i >= 0 {
		if r.fifo[i].t+r.ttl > now {
			return true
		}
		r.fifo[i].alive = false
	}
	r.push(id, now)
	return false
}

func (r *refWindow) done(id string, now int64) {
	r.expire(now)
	if i := r.find(id); i >= 0 {
		r.fifo[i].alive = false
	}
	r.push(id, now)
}

func (r *refWindow) forget(id string) {
	if i := r.find(id); i >= 0 {
		r.fifo[i].alive = false
	}
}

func (r *refWindow) len() int {
	n := 0
	for _, e := range r.fifo {
		if e.alive {
			n++
		}
	}
	return n
}

// TestCompactModel runs random Seen, RecordAll, Done and Forget calls, with the
// clock moving on, against Compact and the model, and compares every
// answer and the number of ids held. The larger sizes make the table
// grow and the ring wrap around chunks it frees and allocates again.
func TestCompactModel(t *testing.T) {
	for _, tc := range []struct{ size, ids, ops int }{
		{1, 4, 2000},
		{7, 20, 20000},
		{100, 300, 20000},
		{500, 2000, 100000}, // the table's first 1024 slots, up to half full
		{3 * chunkSize / 2, 4 * chunkSize, 60000},
	} {
		t.Run(fmt.Sprint(tc.size), func(t *testing.T) {
			seed := time.Now().UnixNano()
			rng := rand.New(rand.NewSource(seed))
			clk := newFakeClock()
			ttl := 2 * time.Second
			w := compactAt(clk, tc.size, ttl)
			ref := &refWindow{size: tc.size, ttl: int64(ttl)}
			ctx := t.Context()
			for op := range tc.ops {
				if rng.Intn(4) == 0 {
					clk.add(time.Duration(rng.Intn(int(ttl / 50))))
				}
				now := int64(clk.now().Sub(w.base))
				id := "evt_" + strconv.Itoa(rng.Intn(tc.ids))
				switch k := rng.Intn(10); {
				case k < 6:
					got, want := mustSeen(t, w, id), ref.seen(id, now)
					if got != want {
						t.Fatalf("seed %d, op %d: Seen(%s) = %v, model says %v", seed, op, id, got, want)
					}
				case k < 7:
					// RecordAll is Seen of each id in turn
					ids := []string{id}
					for range rng.Intn(4) {
						ids = append(ids, "evt_"+strconv.Itoa(rng.Intn(tc.ids)))
					}
					states := make([]State, len(ids))
					if err := w.RecordAll(ctx, ids, states); err != nil {
						t.Fatal(err)
					}
					for j, id := range ids {
						if got, want := states[j] == Duplicate, ref.seen(id, now); got != want || states[j] == InFlight {
							t.Fatalf("seed %d, op %d: RecordAll(%v)[%d] = %v, model says seen %v", seed, op, ids, j, states[j], want)
						}
					}
				case k < 9:
					if err := w.Done(ctx, id); err != nil {
						t.Fatal(err)
					}
					ref.done(id, now)
				default:
					if err := w.Forget(ctx, id); err != nil {
						t.Fatal(err)
					}
					ref.forget(id)
				}
				if got, want := w.Len(), ref.len(); got != want {
					t.Fatalf("seed %d, op %d: Len = %d, model holds %d", seed, op, got, want)
				}
			}
		})
	}
}

// TestCompactFreesExpiredChunks: once every id expired, the ring keeps
// at most the chunk its next id goes to.
func TestCompactFreesExpiredChunks(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 10*chunkSize, time.Minute)
	for i := range 5 * chunkSize {
		mustSeen(t, w, "evt_"+strconv.Itoa(i))
	}
	clk.add(time.Minute)
	mustSeen(t, w, "last")
	n := 0
	for _, c := range w.chunks {
		if c != nil {
			n++
		}
	}
	if n != 1 || w.Len() != 1 {
		t.Errorf("%d chunks allocated, %d ids held after every id but one expired; want 1 and 1", n, w.Len())
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// fillCompact records n distinct ids of 56 bytes (org, env and a
// UUID-length event id, as the pipeline's keys are) and returns the heap
// bytes the window holds.
func fillCompact(tb testing.TB, n int) (*Compact, uint64) {
	before := heapAfterGC()
	w := NewCompact(n, time.Hour)
	buf := make([]byte, 0, 64)
	for i := range n {
		buf = append(buf[:0], "org_0123456789\x00live\x00evt_00000000-0000-0000-0000-"...)
		buf = strconv.AppendInt(buf, int64(1e11+i), 10)
		if err := w.Done(tb.Context(), string(buf)); err != nil {
			tb.Fatal(err)
		}
	}
	if w.Len() != n {
		tb.Fatalf("Len = %d after %d distinct ids", w.Len(), n)
	}
	after := heapAfterGC()
	runtime.KeepAlive(w)
	return w, after - min(before, after) + w.mappedBytes()
}

// TestCompactMemory: the window's memory per id (heap, and its table
// where that is mapped on its own) stays far below Local's
// 130 bytes (about 40 to 56: a 24-byte place in the ring, 8-byte slots
// at most half full). BenchmarkCompactMemory10M measures ten million.
func TestCompactMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("fills a window of a million ids")
	}
	const n = 1 << 20
	_, bytes := fillCompact(t, n)
	perID := float64(bytes) / n
	t.Logf("%d ids: %d heap bytes, %.1f per id", n, bytes, perID)
	if perID > 56 {
		t.Errorf("%.1f heap bytes per id, want at most 56", perID)
	}
}

// BenchmarkCompactMemory10M fills a window of ten million ids, the size
// cmd/fleethub uses, and reports its bytes per id and in all (the heap's,
// and the table's where that is mapped on its own: heap-B counts both).
func BenchmarkCompactMemory10M(b *testing.B) {
	const n = 10_000_000
	for b.Loop() {
		_, bytes := fillCompact(b, n)
		b.ReportMetric(float64(bytes)/n, "heap-B/id")
		b.ReportMetric(float64(bytes)/(1<<20), "heap-MiB")
	}
}

// TestCompactHas: Has answers for recorded, unexpired ids and records
// nothing.
func TestCompactHas(t *testing.T) {
	c := NewCompact(10, time.Hour)
	if c.Has("a") {
		t.Fatal("an empty window has a")
	}
	if err := c.Done(t.Context(), "a"); err != nil {
		t.Fatal(err)
	}
	if !c.Has("a") || c.Has("b") || c.Has("") {
		t.Fatal("Has after Done(a): want a only")
	}
	if c.Len() != 1 {
		t.Fatalf("Has recorded something: %d ids", c.Len())
	}
	if st, _ := c.Claim(t.Context(), "b"); st != Unseen {
		t.Fatalf("b after Has(b) = %v, want Unseen", st)
	}
}

// TestCompactBucketOverflow: ids that share a home bucket (hashes made to
// collide) spill over several buckets; each stays found while recorded,
// none is found once forgotten or evicted, and once all are gone every
// bucket's overflow count is back to zero, so look-ups stop at their
// home again.
func TestCompactBucketOverflow(t *testing.T) {
	const n = 40 // more than five buckets' worth
	w := NewCompact(n, time.Hour)
	w.mu.Lock()
	defer w.mu.Unlock()
	hs := make([]hkey, n)
	for i := range hs {
		hs[i] = hkey{a: uint64(i) + 1, b: uint64(i+1)<<32 | 5} // home bucket 5 in any table
		w.push(hs[i], w.clock())
	}
	found := func(h hkey) bool { _, _, ok := w.find(h); return ok }
	for i, h := range hs {
		if !found(h) {
			t.Fatalf("id %d of %d sharing a bucket not found", i, n)
		}
	}
	for i := 0; i < n; i += 2 {
		w.remove(hs[i])
	}
	for i, h := range hs {
		if found(h) != (i%2 == 1) {
			t.Fatalf("after removing the even ids: id %d found = %v", i, found(h))
		}
	}
	// a full ring evicts the oldest as new ids come: the odd ones go
	for i := range n {
		w.push(hkey{a: uint64(1000 + i), b: uint64(1000+i)<<32 | uint64(i)}, w.clock())
	}
	for i, h := range hs {
		if found(h) {
			t.Fatalf("id %d found after the ring moved past it", i)
		}
	}
	for p := w.head; p < w.tail; p++ {
		w.remove(w.entry(uint32(p % w.size)).h)
	}
	if w.used != 0 {
		t.Fatalf("%d slots used after every id was removed", w.used)
	}
	for b := range len(w.slots) / bucketSlots {
		if c := w.slots[b*bucketSlots+bucketIDs]; c != 0 {
			t.Fatalf("bucket %d: overflow count %d with the table empty", b, c)
		}
	}
}
