package mapmatch

import (
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// TestSameStreet: the simulation's right street. Main Street is cut
// into two ways at a junction where Oak Avenue leaves it; a fix taken
// 3 m into the second way and placed 3 m before the junction, on the
// first, is on its street (6 m behind where it was taken), but not
// where the second way has another name, class or limit, none, where
// the drive turned onto Oak Avenue there, nor where it is placed on the
// first way's other direction.
func TestSameStreet(t *testing.T) {
	for _, tc := range []struct {
		name   string
		second func(e *handEdge) // the second way of the street
		names  map[int64]routing.WayName
		turn   bool // the drive turns onto Oak Avenue at the junction
		back   bool // the fix is placed on the first way's other direction
		want   bool
	}{
		{name: "the next way of the street", want: true},
		{name: "another name", names: map[int64]routing.WayName{1: {Name: "Main Street"}, 2: {Name: "Elm Street"}}},
		{name: "the same name, another ref", names: map[int64]routing.WayName{1: {Name: "Main Street", Ref: "OH 3"}, 2: {Name: "Main Street"}}},
		{name: "no name", names: map[int64]routing.WayName{}},
		{name: "another class", second: func(e *handEdge) { e.class = routing.ClassTertiary }},
		{name: "another limit", second: func(e *handEdge) { e.kmh = [2]float64{30, 30} }},
		{name: "a turn onto a way of the same name", turn: true,
			names: map[int64]routing.WayName{1: {Name: "Main Street"}, 2: {Name: "Main Street"}, 3: {Name: "Main Street"}}},
		{name: "the other direction", back: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h handNet
			h.road(1, 0, 1, 50, [2]float64{0, 0}, [2]float64{100, 0})
			second := h.road(2, 1, 2, 50, [2]float64{100, 0}, [2]float64{200, 0})
			if tc.second != nil {
				tc.second(second)
			}
			h.road(3, 1, 3, 50, [2]float64{100, 0}, [2]float64{100, 100})
			names := tc.names
			if names == nil {
				names = map[int64]routing.WayName{1: {Name: "Main Street"}, 2: {Name: "Main Street"}, 3: {Name: "Oak Avenue"}}
			}
			n := New(&h, routing.Auto, Config{}).net
			tp := trip{path: []int32{0, 2}, ends: []float64{100, 200}, at: []float64{103}, ways: []int64{2}}
			if tc.turn {
				tp.path, tp.ways = []int32{0, 4}, []int64{3}
			}
			mt := Match{Matched: true, Edge: 0, WayID: 1, off: 97}
			if tc.back {
				mt.Backward, mt.off = true, 3
			}
			got, along := sameStreet(n, names, &tp, 0, mt)
			if got != tc.want {
				t.Errorf("on the street it was taken on: %v, want %v", got, tc.want)
			}
			if tc.want && (along < -6.01 || along > -5.99) {
				t.Errorf("placed %.2f m along the drive from where it was taken, want -6", along)
			}
		})
	}
}
