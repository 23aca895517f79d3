package roadspeed

import (
	"context"
	"math"
	"testing"
	"time"
)

// TestObserved: speeds are kept per organization, edge, direction and
// hour of the week; an edge needs MinSamples observations over the
// hours asked; old observations are forgotten; a full table refuses new
// cells until the old ones can be swept.
func TestObserved(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC) // a Tuesday
	clock := now
	tb := New(Config{Now: func() time.Time { return clock }, MaxCells: 4})
	tue9 := HourOfWeek(now)
	if tue9 != 24+9 {
		t.Fatalf("Tuesday 09:30 is hour %d", tue9)
	}
	for _, v := range []float64{20, 30, 40} {
		tb.Observe("a", 5, false, now, v)
	}
	tb.Observe("a", 5, true, now, 50)                 // the other direction
	tb.Observe("a", 5, false, now.Add(time.Hour), 60) // the next hour
	tb.Observe("b", 5, false, now, 90)                // another organization
	s := tb.Observed(ctx, "a", []int{tue9})
	if v, ok := s.Speed(5, false); !ok || math.Abs(v-30) > 1e-6 || s.Edges != 1 {
		t.Errorf("forward at 09:00: %v %v, %d edges", v, ok, s.Edges)
	}
	if _, ok := s.Speed(5, true); ok {
		t.Errorf("backward has one observation of the three needed")
	}
	s = tb.Observed(ctx, "a", []int{tue9, tue9 + 1, tue9 + HoursPerWeek})
	if v, _ := s.Speed(5, false); math.Abs(v-37.5) > 1e-6 {
		t.Errorf("09:00 and 10:00 together: %v, want the mean of 20, 30, 40, 60", v)
	}
	if s := tb.Observed(ctx, "b", []int{tue9}); s.Edges != 0 {
		t.Errorf("b has one observation: %d edges", s.Edges)
	}
	if s := tb.Observed(ctx, "c", []int{tue9}); s.Edges != 0 {
		t.Errorf("c has none: %d edges", s.Edges)
	}
	// the table holds 4 cells: a fifth is refused
	tb.Observe("a", 6, false, now, 10)
	if cells, refused := tb.Stats(); cells != 4 || refused != 1 {
		t.Errorf("cells %d, refused %d", cells, refused)
	}
	// four weeks and a day later the cells are past the retention: not
	// read, swept to make room, and restarted by a new observation
	clock = now.Add(DefaultRetention + 24*time.Hour)
	if s := tb.Observed(ctx, "a", []int{tue9}); s.Edges != 0 {
		t.Errorf("old observations read: %d edges", s.Edges)
	}
	later := now.Add(4 * 7 * 24 * time.Hour) // the same hour of the week
	for range 3 {
		tb.Observe("a", 7, false, later, 15)
	}
	if cells, _ := tb.Stats(); cells != 1 {
		t.Errorf("after the sweep %d cells, want 1", cells)
	}
	clock = later
	if v, ok := tb.Observed(ctx, "a", []int{tue9}).Speed(7, false); !ok || v != 15 {
		t.Errorf("new observations: %v %v", v, ok)
	}
}

// TestWeight: past Weight observations a cell follows the newest ones.
func TestWeight(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tb := New(Config{Now: func() time.Time { return now }})
	for range Weight {
		tb.Observe("a", 1, false, now, 50)
	}
	for range 3 * Weight {
		tb.Observe("a", 1, false, now, 20)
	}
	if v, _ := tb.Observed(ctx, "a", []int{HourOfWeek(now)}).Speed(1, false); v > 22 {
		t.Errorf("after %d observations at 20 km/h the mean is %.1f", 3*Weight, v)
	}
	tb.Observe("a", 1, false, now, -1)
	tb.Observe("a", 1, false, now, math.NaN())
	tb.Observe("a", 1, false, now, 400)
	if v, _ := tb.Observed(ctx, "a", []int{HourOfWeek(now)}).Speed(1, false); v > 22 {
		t.Errorf("speeds out of range counted: %.1f", v)
	}
}

// BenchmarkObserve: one matched point's speed counted (the road
// matcher's share of real_time_traffic), over 10,000 edges.
func BenchmarkObserve(b *testing.B) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tb := New(Config{Now: func() time.Time { return now }})
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		tb.Observe("org", i%10000, i%3 == 0, now, 30)
		i++
	}
}

// BenchmarkObserved: an optimization's read of ten hours of 10,000 edges.
func BenchmarkObserved(b *testing.B) {
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tb := New(Config{Now: func() time.Time { return now }})
	var hours []int
	for h := range 10 {
		at := now.Add(time.Duration(h) * time.Hour)
		hours = append(hours, HourOfWeek(at))
		for e := range 10000 {
			for range 3 {
				tb.Observe("org", e, false, at, 30)
			}
		}
	}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if tb.Observed(ctx, "org", hours).Edges != 10000 {
			b.Fatal("edges")
		}
	}
}
