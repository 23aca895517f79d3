package fence_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
)

func format(ts []fence.Transition) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Change.String()+" "+t.AreaID)
	}
	return out
}

func TestTracker(t *testing.T) {
	depot := fence.Area{ID: "depot", Polygon: pts(0, 0, 0, 2, 2, 2, 2, 0)}
	yard := fence.Area{ID: "yard", Polygon: pts(1, 1, 1, 3, 3, 3, 3, 1)} // overlaps depot
	customer := circle(10, 10, 50_000)
	customer.ID = "customer"
	tr, err := fence.NewTracker([]fence.Area{depot, yard, customer})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	steps := []struct {
		lat, lon float64
		sec      int
		want     []string
	}{
		{0.5, 0.5, 0, nil}, // first point: inside depot, no transition
		{0.6, 0.6, 1, nil}, // still inside
		{1.5, 1.5, 2, []string{"enter yard"}},
		{2.5, 2.5, 3, []string{"exit depot"}},
		{10, 10, 4, []string{"exit yard", "enter customer"}},
		{5, 5, 3, nil},       // older than the last point: ignored
		{10.1, 10.1, 5, nil}, // still at the customer
		{0.5, 0.5, 6, []string{"exit customer", "enter depot"}},
		{91, 0.5, 7, nil},  // invalid point: ignored
		{0.5, 0.5, 7, nil}, // same time as the last point
		{50, 50, 8, []string{"exit depot"}},
	}
	for i, st := range steps {
		got := tr.Update("veh_1", fence.Point{Lat: st.lat, Lon: st.lon}, t0.Add(time.Duration(st.sec)*time.Second))
		want := st.want
		if want == nil {
			want = []string{}
		}
		if f := format(got); !slices.Equal(f, want) {
			t.Fatalf("step %d (%v, %v): %v, want %v", i, st.lat, st.lon, f, want)
		}
		for _, tr := range got {
			if tr.VehicleID != "veh_1" || !tr.At.Equal(t0.Add(time.Duration(st.sec)*time.Second)) || tr.Point.Lat != st.lat {
				t.Errorf("step %d: transition %+v", i, tr)
			}
		}
	}
	// Vehicles are independent: veh_2's first point returns nothing, and
	// its next one leaves both areas it was in.
	if got := tr.Update("veh_2", fence.Point{Lat: 1.5, Lon: 1.5}, t0); len(got) != 0 {
		t.Errorf("first point of veh_2: %v", format(got))
	}
	if got := format(tr.Update("veh_2", fence.Point{Lat: 50, Lon: 50}, t0.Add(time.Second))); !slices.Equal(got, []string{"exit depot", "exit yard"}) {
		t.Errorf("veh_2 leaving: %v", got)
	}
}

func TestTrackerManyAreas(t *testing.T) {
	// 130 areas: the state spans three words.
	var areas []fence.Area
	for i := range 130 {
		a := circle(0, float64(i), 1000)
		a.ID = fmt.Sprint("a", i)
		areas = append(areas, a)
	}
	tr, err := fence.NewTracker(areas)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	tr.Update("v", fence.Point{Lat: 10, Lon: 0}, t0)
	for i := range 130 {
		got := tr.Update("v", fence.Point{Lat: 0, Lon: float64(i)}, t0.Add(time.Duration(i+1)*time.Second))
		want := []string{fmt.Sprint("enter a", i)}
		if i > 0 {
			want = []string{fmt.Sprint("exit a", i-1), fmt.Sprint("enter a", i)}
		}
		if f := format(got); !slices.Equal(f, want) {
			t.Fatalf("at %d: %v, want %v", i, f, want)
		}
	}
}

func TestNewTrackerErrors(t *testing.T) {
	ok := circle(0, 0, 10)
	ok.ID = "a"
	bad := circle(0, 0, -1)
	bad.ID = "b"
	anon := circle(0, 0, 10)
	tests := []struct {
		areas []fence.Area
		field string
	}{
		{[]fence.Area{ok, bad}, "areas[1].radius_meters"},
		{[]fence.Area{ok, anon}, "areas[1].id"},
		{[]fence.Area{ok, ok}, "areas[1].id"},
	}
	for _, tt := range tests {
		_, err := fence.NewTracker(tt.areas)
		var fe *fence.FieldError
		if !errors.As(err, &fe) || fe.Field != tt.field {
			t.Errorf("NewTracker = %v, want a *FieldError on %s", err, tt.field)
		}
	}
}

func BenchmarkTrackerUpdate1000Areas(b *testing.B) {
	var areas []fence.Area
	for i := range 1000 {
		lat, lon := 30+float64(i%40)*0.5, -120+float64(i/40)*0.5
		var a fence.Area
		if i%2 == 0 {
			a = circle(lat, lon, 2000)
		} else {
			a = fence.Area{Polygon: pts(lat, lon, lat, lon+0.02, lat+0.02, lon+0.02, lat+0.02, lon)}
		}
		a.ID = fmt.Sprint("area_", i)
		areas = append(areas, a)
	}
	tr, err := fence.NewTracker(areas)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Unix(0, 0)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		th := float64(i) * 0.001
		tr.Update("veh_1", fence.Point{Lat: 40 + 5*math.Sin(th), Lon: -110 + 5*math.Cos(th)}, t0.Add(time.Duration(i)*time.Second))
	}
}

// A tracker rebuilt for changed areas carries each vehicle's side of the
// areas it keeps: a vehicle inside an area that was resized, or beside an
// area that was added, still leaves it; the added area reports nothing at
// the vehicle's first point for it.
func TestTrackerCarry(t *testing.T) {
	depot := fence.Area{ID: "depot", Polygon: pts(0, 0, 0, 2, 2, 2, 2, 0)}
	gone := circle(20, 20, 1000)
	gone.ID = "gone"
	old, err := fence.NewTracker([]fence.Area{gone, depot})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0)
	old.Update("veh_1", fence.Point{Lat: 5, Lon: 5}, t0)
	if got := format(old.Update("veh_1", fence.Point{Lat: 1, Lon: 1}, t0.Add(time.Second))); !slices.Equal(got, []string{"enter depot"}) {
		t.Fatalf("entering: %v", got)
	}
	// the depot grows, a yard is added around the vehicle, gone is deleted
	depot.Polygon = pts(0, 0, 0, 3, 3, 3, 3, 0)
	yard := fence.Area{ID: "yard", Polygon: pts(0.5, 0.5, 0.5, 1.5, 1.5, 1.5, 1.5, 0.5)}
	tr, err := fence.NewTracker([]fence.Area{depot, yard})
	if err != nil {
		t.Fatal(err)
	}
	tr.Carry(old)
	if got := tr.Update("veh_1", fence.Point{Lat: 1.1, Lon: 1.1}, t0); len(got) != 0 {
		t.Errorf("a point older than the last one carried: %v", format(got))
	}
	if got := tr.Update("veh_1", fence.Point{Lat: 1.2, Lon: 1.2}, t0.Add(2*time.Second)); len(got) != 0 {
		t.Errorf("inside the grown depot and the new yard: %v, want nothing", format(got))
	}
	if got := format(tr.Update("veh_1", fence.Point{Lat: 2.5, Lon: 2.5}, t0.Add(3*time.Second))); !slices.Equal(got, []string{"exit yard"}) {
		t.Errorf("leaving the yard inside the grown depot: %v", got)
	}
	if got := format(tr.Update("veh_1", fence.Point{Lat: 10, Lon: 10}, t0.Add(4*time.Second))); !slices.Equal(got, []string{"exit depot"}) {
		t.Errorf("leaving the depot: %v", got)
	}
	// a vehicle the old tracker never saw starts fresh
	if got := tr.Update("veh_2", fence.Point{Lat: 1, Lon: 1}, t0); len(got) != 0 {
		t.Errorf("first point of veh_2: %v", format(got))
	}
	// a shrunk area no longer holding the vehicle is left at its next point
	small := fence.Area{ID: "depot", Polygon: pts(0, 0, 0, 0.5, 0.5, 0.5, 0.5, 0)}
	tr2, err := fence.NewTracker([]fence.Area{small})
	if err != nil {
		t.Fatal(err)
	}
	tr2.Carry(tr)
	if got := format(tr2.Update("veh_2", fence.Point{Lat: 1, Lon: 1}, t0.Add(time.Second))); !slices.Equal(got, []string{"exit depot"}) {
		t.Errorf("the depot shrunk away from veh_2: %v", got)
	}
}
