package order_test

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/order"
)

// step pushes seq from src at time ms (or, with expire, calls Expire at
// ms) and expects the released items, written "src:seq" with " late" or
// " skip<n>" flags and the value checked to be "src/seq".
type step struct {
	expire bool
	src    string
	seq    int64
	ms     int
	want   []string
}

func push(src string, seq int64, ms int, want ...string) step {
	return step{src: src, seq: seq, ms: ms, want: want}
}

func expire(ms int, want ...string) step { return step{expire: true, ms: ms, want: want} }

func format(items []order.Item[string]) []string {
	out := []string{}
	for _, it := range items {
		s := fmt.Sprintf("%s:%d", it.Source, it.Seq)
		if it.Late {
			s += " late"
		}
		if it.Skipped != 0 {
			s += fmt.Sprintf(" skip%d", it.Skipped)
		}
		out = append(out, s)
	}
	return out
}

func TestSequencer(t *testing.T) {
	cfg := order.Config{MaxBuffered: 3, MaxWait: 100 * time.Millisecond}
	tests := []struct {
		name  string
		steps []step
	}{
		{"in order", []step{
			push("a", 1, 0, "a:1"), push("a", 2, 1, "a:2"), push("a", 3, 2, "a:3"), expire(500),
		}},
		{"first seq starts the sequence", []step{
			push("a", 41, 0, "a:41"), push("a", 42, 1, "a:42"),
		}},
		{"swapped pairs", []step{
			push("a", 1, 0, "a:1"),
			push("a", 3, 1), push("a", 2, 2, "a:2", "a:3"),
			push("a", 5, 3), push("a", 4, 4, "a:4", "a:5"),
			expire(500),
		}},
		{"gap that fills", []step{
			push("a", 1, 0, "a:1"),
			push("a", 4, 10), push("a", 3, 20), expire(50),
			push("a", 2, 60, "a:2", "a:3", "a:4"),
			expire(500),
		}},
		{"gap that times out", []step{
			push("a", 1, 0, "a:1"),
			push("a", 3, 10), push("a", 4, 20),
			expire(109),
			expire(110, "a:3 skip1", "a:4"),
			push("a", 5, 120, "a:5"),
			push("a", 2, 130, "a:2 late"),
		}},
		{"gap times out on the newest waiting item", []step{
			// 8 arrives before 5: when 8 has waited MaxWait, 5 goes with it.
			push("a", 1, 0, "a:1"),
			push("a", 8, 0), push("a", 5, 50),
			expire(100, "a:5 skip3", "a:8 skip2"),
		}},
		{"second gap keeps its own time", []step{
			push("a", 1, 0, "a:1"),
			push("a", 3, 0), push("a", 6, 80),
			expire(100, "a:3 skip1"),
			expire(179),
			expire(180, "a:6 skip2"),
		}},
		{"overflow", []step{
			push("a", 1, 0, "a:1"),
			push("a", 3, 1), push("a", 5, 2), push("a", 6, 3),
			push("a", 8, 4, "a:3 skip1"),
			push("a", 9, 5, "a:5 skip1", "a:6"),
			push("a", 4, 6, "a:4 late"),
			push("a", 7, 7, "a:7", "a:8", "a:9"),
		}},
		{"late and copies", []step{
			push("a", 10, 0, "a:10"),
			push("a", 9, 1, "a:9 late"),
			push("a", 10, 2, "a:10 late"),
			// a copy of a buffered number leaves right after it
			push("a", 12, 3), push("a", 12, 4), push("a", 14, 4),
			push("a", 11, 5, "a:11", "a:12", "a:12"),
			push("a", 14, 6),
			expire(200, "a:14 skip1", "a:14"),
		}},
		{"sources are independent", []step{
			push("a", 1, 0, "a:1"), push("b", 7, 0, "b:7"),
			push("a", 3, 10), push("b", 9, 20),
			push("b", 8, 30, "b:8", "b:9"),
			push("c", 5, 40, "c:5"), push("c", 7, 40),
			expire(140, "a:3 skip1", "c:7 skip1"),
		}},
		{"negative sequence numbers", []step{
			push("a", -2, 0, "a:-2"), push("a", 0, 1), push("a", -1, 2, "a:-1", "a:0"),
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := order.New[string](cfg)
			if err != nil {
				t.Fatal(err)
			}
			t0 := time.Unix(1_700_000_000, 0)
			for i, st := range tt.steps {
				now := t0.Add(time.Duration(st.ms) * time.Millisecond)
				var got []order.Item[string]
				if st.expire {
					got = s.Expire(now)
				} else {
					got = s.Push(st.src, st.seq, fmt.Sprintf("%s/%d", st.src, st.seq), now)
				}
				for _, it := range got {
					if it.Value != fmt.Sprintf("%s/%d", it.Source, it.Seq) {
						t.Errorf("step %d: item %+v carries the wrong value", i, it)
					}
				}
				want := st.want
				if want == nil {
					want = []string{}
				}
				if f := format(got); !slices.Equal(f, want) {
					t.Fatalf("step %d (%+v): released %v, want %v", i, st, f, want)
				}
			}
		})
	}
}

func TestSequencerMaxBufferedOne(t *testing.T) {
	s, _ := order.New[int](order.Config{MaxBuffered: 1})
	now := time.Now()
	s.Push("a", 1, 1, now)
	if got := s.Push("a", 3, 3, now); len(got) != 0 {
		t.Fatalf("released %v", got)
	}
	if got := format(toStrings(s.Push("a", 5, 5, now))); !slices.Equal(got, []string{"a:3 skip1"}) {
		t.Fatalf("released %v", got)
	}
	if s.Buffered() != 1 {
		t.Fatalf("Buffered = %d", s.Buffered())
	}
}

func toStrings(items []order.Item[int]) []order.Item[string] {
	out := make([]order.Item[string], len(items))
	for i, it := range items {
		out[i] = order.Item[string]{Source: it.Source, Seq: it.Seq, Late: it.Late, Skipped: it.Skipped}
	}
	return out
}

func TestSequencerForgetsIdleSource(t *testing.T) {
	s, _ := order.New[int](order.Config{MaxWait: time.Second, IdleTimeout: time.Minute})
	t0 := time.Unix(1_700_000_000, 0)
	s.Push("a", 1, 0, t0)
	s.Push("a", 2, 0, t0)
	if got := format(toStrings(s.Push("a", 1, 0, t0))); !slices.Equal(got, []string{"a:1 late"}) {
		t.Errorf("before idle: %v", got)
	}
	// An idle source is forgotten by Expire: a restarted numbering is not late.
	s.Expire(t0.Add(time.Minute))
	if got := format(toStrings(s.Push("a", 1, 0, t0.Add(time.Minute)))); !slices.Equal(got, []string{"a:1"}) {
		t.Errorf("after idle: %v", got)
	}
}

func TestNew(t *testing.T) {
	for _, cfg := range []order.Config{{MaxBuffered: -1}, {MaxWait: -1}, {IdleTimeout: -time.Second}} {
		if _, err := order.New[int](cfg); !errors.Is(err, order.ErrInvalid) {
			t.Errorf("New(%+v) = %v, want ErrInvalid", cfg, err)
		}
	}
}

// TestSequencerRandom shuffles sequences within a window and checks that
// every item comes out exactly once and, apart from late ones, in order.
func TestSequencerRandom(t *testing.T) {
	s, _ := order.New[int](order.Config{MaxBuffered: 8, MaxWait: 50 * time.Millisecond})
	t0 := time.Unix(1_700_000_000, 0)
	const n = 5000
	seqs := make([]int64, n)
	for i := range seqs {
		seqs[i] = int64(i)
	}
	// Local shuffles: swap within distance 4, deterministic.
	for i := 1; i < n; i++ {
		j := i - int((uint64(i)*2654435761)%5)
		if j > 0 {
			seqs[i], seqs[j] = seqs[j], seqs[i]
		}
	}
	seen := map[int64]int{}
	var last int64 = -1
	record := func(items []order.Item[int]) {
		for _, it := range items {
			seen[it.Seq]++
			if !it.Late {
				if it.Seq <= last {
					t.Fatalf("%d released after %d", it.Seq, last)
				}
				last = it.Seq
			}
		}
	}
	for i, seq := range seqs {
		now := t0.Add(time.Duration(i) * time.Millisecond)
		record(s.Push("v", seq, int(seq), now))
		if i%10 == 0 {
			record(s.Expire(now))
		}
	}
	record(s.Expire(t0.Add(time.Hour)))
	for i := range int64(n) {
		if seen[i] != 1 {
			t.Fatalf("seq %d released %d times", i, seen[i])
		}
	}
}

func BenchmarkSequencerInOrder(b *testing.B) {
	s, _ := order.New[int](order.Config{})
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Push("veh_1", int64(i), i, now)
	}
}

func BenchmarkSequencerSwappedPairs(b *testing.B) {
	s, _ := order.New[int](order.Config{})
	now := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		s.Push("veh_1", int64(i^1), i, now)
	}
}

// TestMaxSources: a new source beyond MaxSources forgets the source
// pushed to least recently, releasing what it buffered; the others keep
// their place in the sequence.
func TestMaxSources(t *testing.T) {
	s, err := order.New[string](order.Config{MaxSources: 2, MaxWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_700_000_000, 0)
	s.Push("a", 1, "a1", now)
	s.Push("b", 1, "b1", now)
	if got := s.Push("a", 3, "a3", now); len(got) != 0 { // a waits for 2
		t.Fatalf("a:3 released %v at once", got)
	}
	s.Push("b", 3, "b3", now) // b waits for 2; a is now the least recent
	got := s.Push("c", 1, "c1", now)
	var vals []string
	for _, it := range got {
		vals = append(vals, it.Value)
	}
	if want := []string{"a3", "c1"}; !slices.Equal(vals, want) {
		t.Fatalf("a new source beyond the cap released %v, want %v (a's buffer, then c:1)", vals, want)
	}
	if n := s.Sources(); n != 2 {
		t.Fatalf("%d sources remembered, want 2", n)
	}
	if got := s.Push("b", 2, "b2", now); len(got) != 2 || got[0].Value != "b2" || got[1].Value != "b3" {
		t.Fatalf("b kept its sequence: got %v", got)
	}
}

// TestKeepWith: a value buffered behind a gap is the one keep returned
// (the caller may reuse the memory of what it pushed); a value released
// by its own push, or late, is the one pushed.
func TestKeepWith(t *testing.T) {
	s, err := order.New[*string](order.Config{})
	if err != nil {
		t.Fatal(err)
	}
	kept := map[*string]bool{}
	s.KeepWith(func(v *string) *string {
		c := new(string)
		*c = *v + " kept"
		kept[c] = true
		return c
	})
	now := time.Unix(0, 0)
	mem := new(string) // the caller's memory, reused for every push
	pushOne := func(seq int64) []order.Item[*string] {
		*mem = fmt.Sprint(seq)
		out := s.AppendPush(nil, "v", seq, mem, now)
		*mem = "reused"
		return out
	}
	if out := pushOne(1); len(out) != 1 || out[0].Value != mem {
		t.Fatalf("push 1 released %v, want the pushed value", out)
	}
	if out := pushOne(3); len(out) != 0 {
		t.Fatalf("push 3 released %d items, want it buffered", len(out))
	}
	out := pushOne(2)
	if len(out) != 2 || out[0].Value != mem || !kept[out[1].Value] || *out[1].Value != "3 kept" {
		t.Fatalf("push 2 released %d items (second kept: %v), want 2 as pushed, then the copy of 3", len(out), len(out) == 2 && kept[out[1].Value])
	}
	if out := pushOne(2); len(out) != 1 || !out[0].Late || out[0].Value != mem {
		t.Fatalf("late push of 2 released %v, want it late, as pushed", out)
	}
}
