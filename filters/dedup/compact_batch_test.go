package dedup

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCompactClaimAllFull: in a full window whose ids leave by size and
// by age, ClaimAll and Done answer as one id at a time would (what they
// read ahead changes nothing), and expiry drops runs longer than it
// reads ahead at once.
func TestCompactClaimAllFull(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 1000, time.Hour)
	ctx := context.Background()
	id := func(i int) string { return fmt.Sprintf("full_%d", i) }
	for i := range 1500 { // id(i) recorded at i s
		if err := w.Done(ctx, id(i)); err != nil {
			t.Fatal(err)
		}
		clk.add(time.Second)
	}
	// at 1500 s: 500..1499 are held
	ids := make([]string, 0, 600)
	for i := 400; i < 1000; i++ {
		ids = append(ids, id(i))
	}
	states := make([]State, len(ids))
	if err := w.ClaimAll(ctx, ids, states); err != nil {
		t.Fatal(err)
	}
	for j, st := range states {
		want := Duplicate
		if j < 100 {
			want = Unseen // evicted for size
		}
		if st != want {
			t.Fatalf("ClaimAll: %s is %v, want %v", ids[j], st, want)
		}
	}
	clk.add(1000 * time.Second)
	if err := w.Done(ctx, ids[:100]...); err != nil { // 400..499 at 2500 s
		t.Fatal(err)
	}
	// recording them evicted 500..599
	for _, c := range []struct {
		i    int
		want State
	}{{400, Duplicate}, {499, Duplicate}, {500, Unseen}, {599, Unseen}, {600, Duplicate}, {1499, Duplicate}} {
		if st, _ := w.Claim(ctx, id(c.i)); st != c.want {
			t.Errorf("after Done: %s is %v, want %v", id(c.i), st, c.want)
		}
	}
	// at 5200 s 600..1499 have expired (900 ids, several runs), 400..499
	// have not
	clk.add(2700 * time.Second)
	if err := w.Done(ctx, "late"); err != nil {
		t.Fatal(err)
	}
	if n := w.Len(); n != 101 {
		t.Errorf("Len = %d after the others expired, want 101", n)
	}
	for _, c := range []struct {
		i    int
		want State
	}{{400, Duplicate}, {499, Duplicate}, {1000, Unseen}, {1499, Unseen}} {
		if st, _ := w.Claim(ctx, id(c.i)); st != c.want {
			t.Errorf("at 5200 s: %s is %v, want %v", id(c.i), st, c.want)
		}
	}
}

// TestCompactRecordAll: RecordAll records new ids at once, answers
// Duplicate for recorded ones and for an id listed twice, InFlight for a
// claimed one without recording it, and ForgetAll makes its ids new
// again; in a full window it evicts the oldest ids as Done would.
func TestCompactRecordAll(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 4, time.Hour)
	ctx := context.Background()
	if err := w.Done(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if st, _ := w.Claim(ctx, "claimed"); st != Unseen {
		t.Fatalf("Claim = %v", st)
	}
	ids := []string{"new", "old", "claimed", "new"}
	states := make([]State, len(ids))
	if err := w.RecordAll(ctx, ids, states); err != nil {
		t.Fatal(err)
	}
	if want := []State{Unseen, Duplicate, InFlight, Duplicate}; !slices.Equal(states, want) {
		t.Fatalf("RecordAll(%v) = %v, want %v", ids, states, want)
	}
	if !w.Has("new") || w.Has("claimed") {
		t.Errorf("after RecordAll: Has(new) = %v, Has(claimed) = %v; want true, false", w.Has("new"), w.Has("claimed"))
	}
	if err := w.ForgetAll(ctx, "new"); err != nil {
		t.Fatal(err)
	}
	if w.Has("new") {
		t.Error("a forgotten id is still recorded")
	}
	// the ring: old, new (forgotten, its place kept), a, b, c: c evicts
	// old; d and e evict new's place and a
	for _, id := range []string{"a", "b", "c"} {
		if err := w.Done(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	clk.add(time.Second)
	if err := w.RecordAll(ctx, []string{"d", "e"}, states); err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]bool{"old": false, "a": false, "b": true, "c": true, "d": true, "e": true} {
		if got := w.Has(id); got != want {
			t.Errorf("full window after RecordAll: Has(%s) = %v, want %v", id, got, want)
		}
	}
	if err := w.RecordAll(ctx, []string{"x", ""}, states); err != ErrEmptyID {
		t.Errorf("RecordAll with an empty id = %v, want ErrEmptyID", err)
	}
	if w.Has("x") {
		t.Error("RecordAll refused for an empty id recorded the others")
	}
}

// TestCompactHasEach: HasEach finds what Has finds for prefix+id, empty
// ids never, expired ids no more, and answers an empty window at once.
func TestCompactHasEach(t *testing.T) {
	clk := newFakeClock()
	w := compactAt(clk, 100, time.Hour)
	ctx := context.Background()
	if got := w.HasEach("s1\x00", []string{"a"}, nil); len(got) != 0 {
		t.Fatalf("an empty window found %v", got)
	}
	if err := w.Done(ctx, "s1\x00a", "s1\x00c", "s2\x00b", "s1\x00"); err != nil {
		t.Fatal(err)
	}
	clk.add(30 * time.Minute)
	if err := w.Done(ctx, "s1\x00d"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Claim(ctx, "s1\x00e"); err != nil {
		t.Fatal(err)
	}
	ids := []string{"a", "b", "c", "", "d", "e", "f"}
	found := w.HasEach("s1\x00", ids, []int{-1})
	if want := []int{-1, 0, 2, 4}; !slices.Equal(found, want) {
		t.Fatalf("HasEach = %v, want %v (appended after what was passed)", found, want)
	}
	for i, id := range ids {
		if want := slices.Contains(found, i); id != "" && w.Has("s1\x00"+id) != want {
			t.Errorf("Has(s1 %s) = %t, HasEach says %t", id, !want, want)
		}
	}
	clk.add(30 * time.Minute) // a and c expire, d does not
	if got, want := w.HasEach("s1\x00", ids, nil), []int{4}; !slices.Equal(got, want) {
		t.Errorf("half an hour later HasEach = %v, want %v", got, want)
	}
	long := strings.Repeat("x", 300) // longer than the key buffer
	if err := w.Done(ctx, "s1\x00"+long); err != nil {
		t.Fatal(err)
	}
	if got := w.HasEach("s1\x00", []string{long}, nil); len(got) != 1 {
		t.Errorf("a 300-byte id recorded is not found: %v", got)
	}
}
