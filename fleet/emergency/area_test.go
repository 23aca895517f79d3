package emergency

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

func TestCorridor(t *testing.T) {
	// One leg along the 40th parallel, 0.2° (about 17 km) long.
	c := &corridor{pts: [][]geo.Point{{{Lat: 40, Lon: -83.2}, {Lat: 40, Lon: -83.0}}}, m: 1000}
	for _, tc := range []struct {
		lat, lon float64
		want     bool
	}{
		{40, -83.1, true},       // on the leg
		{40.008, -83.1, true},   // about 890 m beside it
		{40.01, -83.1, false},   // about 1.1 km beside it
		{40, -82.99, true},      // about 850 m past its end
		{40, -82.98, false},     // about 1.7 km past it
		{39.995, -83.205, true}, // near the start
		{41, -83.1, false},      // far away
	} {
		if got := c.Contains(tc.lat, tc.lon); got != tc.want {
			t.Errorf("%v, %v: %v", tc.lat, tc.lon, got)
		}
	}
	if d := geo.SegmentDistance(geo.Point{Lat: 40.01, Lon: -83.1}, geo.Point{Lat: 40, Lon: -83.2}, geo.Point{Lat: 40, Lon: -83.0}); math.Abs(d-1112) > 5 {
		t.Errorf("0.01° north of the leg is %.0f m, want about 1112", d)
	}
}

func TestBoxAround(t *testing.T) {
	box := boxAround([]geo.Point{{Lat: 40, Lon: -83}, {Lat: 40.1, Lon: -82.9}}, 2)
	for _, tc := range []struct {
		lat, lon float64
		want     bool
	}{
		{40.05, -82.95, true},
		{39.985, -83.0, true},  // 1.7 km south of the southern point
		{39.97, -83.0, false},  // 3.3 km south
		{40.05, -82.88, true},  // 1.7 km east
		{40.05, -82.86, false}, // 3.4 km east
	} {
		if got := box.Contains(tc.lat, tc.lon); got != tc.want {
			t.Errorf("%v, %v: %v", tc.lat, tc.lon, got)
		}
	}
}
