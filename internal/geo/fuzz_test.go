package geo_test

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

// FuzzDistance checks that Distance is symmetric, non-negative, finite, at
// most half the circumference, and zero from a point to itself, for any two
// valid points. Out-of-range coordinates are folded into range so that the
// fuzzer's values are not wasted. Seeds are in testdata/fuzz/FuzzDistance.
func FuzzDistance(f *testing.F) {
	f.Fuzz(func(t *testing.T, lat1, lon1, lat2, lon2 float64) {
		a := geo.Point{Lat: fold(lat1, 90), Lon: fold(lon1, 180)}
		b := geo.Point{Lat: fold(lat2, 90), Lon: fold(lon2, 180)}
		if !a.Valid() || !b.Valid() {
			return // NaN or infinite
		}
		d := geo.Distance(a, b)
		if math.IsNaN(d) || math.IsInf(d, 0) || d < 0 || d > geo.HalfCircumference {
			t.Fatalf("Distance(%v, %v) = %v, outside [0, %v]", a, b, d, geo.HalfCircumference)
		}
		if back := geo.Distance(b, a); back != d {
			t.Fatalf("Distance(%v, %v) = %v there and %v back", a, b, d, back)
		}
		if self := geo.Distance(a, a); self != 0 {
			t.Fatalf("Distance(%v, %v) = %v", a, a, self)
		}
	})
}

// fold maps x into [-lim, lim] when it is outside.
func fold(x, lim float64) float64 {
	if x >= -lim && x <= lim {
		return x
	}
	return math.Mod(x, lim)
}
