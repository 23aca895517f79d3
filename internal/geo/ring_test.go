package geo_test

import (
	"math"
	"slices"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

func TestInRing(t *testing.T) {
	square := []geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 10}, {Lat: 10, Lon: 10}, {Lat: 10, Lon: 0}}
	closed := append(slices.Clone(square), square[0])
	clockwise := slices.Clone(square)
	slices.Reverse(clockwise)
	// a U opening north: the notch (lat 3..10, lon 4..6) is outside
	u := []geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 10}, {Lat: 10, Lon: 10}, {Lat: 10, Lon: 6}, {Lat: 3, Lon: 6}, {Lat: 3, Lon: 4}, {Lat: 10, Lon: 4}, {Lat: 10, Lon: 0}}
	fiji := []geo.Point{{Lat: -15, Lon: 177}, {Lat: -15, Lon: -178}, {Lat: -20, Lon: -178}, {Lat: -20, Lon: 177}}
	bow := []geo.Point{{Lat: 0, Lon: 0}, {Lat: 10, Lon: 10}, {Lat: 10, Lon: 0}, {Lat: 0, Lon: 10}} // self-intersecting
	for _, tt := range []struct {
		name string
		ring []geo.Point
		p    geo.Point
		want bool
	}{
		{"inside", square, geo.Point{Lat: 5, Lon: 5}, true},
		{"outside east", square, geo.Point{Lat: 5, Lon: 11}, false},
		{"outside west", square, geo.Point{Lat: 5, Lon: -1}, false},
		{"outside north", square, geo.Point{Lat: 11, Lon: 5}, false},
		{"closed ring", closed, geo.Point{Lat: 5, Lon: 5}, true},
		{"clockwise", clockwise, geo.Point{Lat: 5, Lon: 5}, true},
		{"in the U's arm", u, geo.Point{Lat: 8, Lon: 2}, true},
		{"in the U's notch", u, geo.Point{Lat: 8, Lon: 5}, false},
		{"in the U's base", u, geo.Point{Lat: 1, Lon: 5}, true},
		{"across the antimeridian, east side", fiji, geo.Point{Lat: -17, Lon: 179}, true},
		{"across the antimeridian, west side", fiji, geo.Point{Lat: -17, Lon: -179}, true},
		{"across the antimeridian, outside", fiji, geo.Point{Lat: -17, Lon: 170}, false},
		{"across the antimeridian, far outside", fiji, geo.Point{Lat: -17, Lon: 0}, false},
		{"bow tie, a lobe", bow, geo.Point{Lat: 2, Lon: 5}, true},
		{"bow tie, beside the lobes", bow, geo.Point{Lat: 5, Lon: 1}, false},
		{"two vertices", square[:2], geo.Point{}, false},
		{"no vertices", nil, geo.Point{}, false},
		{"NaN", square, geo.Point{Lat: math.NaN(), Lon: 5}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := geo.InRing(tt.ring, tt.p); got != tt.want {
				t.Errorf("InRing(%v, %v) = %v, want %v", tt.ring, tt.p, got, tt.want)
			}
		})
	}
}

func TestCollinear(t *testing.T) {
	for _, tt := range []struct {
		name string
		ring []geo.Point
		want bool
	}{
		{"triangle", []geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 1}, {Lat: 1, Lon: 0}}, false},
		{"on a parallel", []geo.Point{{Lat: 5, Lon: 0}, {Lat: 5, Lon: 1}, {Lat: 5, Lon: 2}}, true},
		{"on a diagonal", []geo.Point{{Lat: 0, Lon: 0}, {Lat: 1, Lon: 1}, {Lat: 2, Lon: 2}}, true},
		{"triangle across the antimeridian", []geo.Point{{Lat: 0, Lon: 179}, {Lat: 0, Lon: -179}, {Lat: 1, Lon: 179}}, false},
		{"on the equator across the antimeridian", []geo.Point{{Lat: 0, Lon: 179}, {Lat: 0, Lon: -179}, {Lat: 0, Lon: -178}}, true},
		{"on a line, out of order", []geo.Point{{Lat: 0, Lon: 0}, {Lat: 2, Lon: 2}, {Lat: 1, Lon: 1}, {Lat: 3, Lon: 3}}, true},
		{"repeated first vertex", []geo.Point{{Lat: 0, Lon: 0}, {Lat: 0, Lon: 0}, {Lat: 1, Lon: 1}, {Lat: 2, Lon: 2}}, true},
		// two lobes of equal area: a signed area of 0, yet each lobe holds points
		{"bow tie", []geo.Point{{Lat: 0, Lon: 0}, {Lat: 1, Lon: 1}, {Lat: 0, Lon: 1}, {Lat: 1, Lon: 0}}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := geo.Collinear(tt.ring); got != tt.want {
				t.Errorf("Collinear(%v) = %v, want %v", tt.ring, got, tt.want)
			}
		})
	}
}
