package trips

import (
	"math"
	"testing"
)

// TestMatchPointCarriesSpeed: a point's speed and heading reach the road
// matcher (the speed in m/s, for its smoother; the heading for its
// candidates); a point without them carries none.
func TestMatchPointCarriesSpeed(t *testing.T) {
	mp := matchPoint(Point{TS: 1_800_000_000_000, Lat: 40, Lon: -83, Speed: 36, Heading: 270, Accuracy: 5})
	if !mp.HasSpeed || math.Abs(mp.Speed-10) > 1e-9 || !mp.HasHeading || mp.Heading != 270 || mp.Accuracy != 5 || mp.Time != 1.8e9 {
		t.Errorf("36 km/h: %+v", mp)
	}
	if mp := matchPoint(Point{Lat: 40, Lon: -83, Speed: math.NaN(), Heading: math.NaN(), Accuracy: math.NaN()}); mp.HasSpeed || mp.HasHeading || mp.Accuracy != 0 {
		t.Errorf("no speed: %+v", mp)
	}
}
