package fence_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
)

func pts(coords ...float64) []fence.Point {
	out := make([]fence.Point, 0, len(coords)/2)
	for i := 0; i+1 < len(coords); i += 2 {
		out = append(out, fence.Point{Lat: coords[i], Lon: coords[i+1]})
	}
	return out
}

func circle(lat, lon, r float64) fence.Area {
	return fence.Area{Center: fence.Point{Lat: lat, Lon: lon}, Radius: r}
}

// A bow tie, two lobes of equal area crossing at one point, is a
// polygon: each lobe holds points, and only the lobes do.
func TestBowTieHoldsItsLobes(t *testing.T) {
	a := fence.Area{Polygon: pts(0, 0, 1, 1, 0, 1, 1, 0)}
	if err := a.Validate(); err != nil {
		t.Fatalf("refused: %v", err)
	}
	for _, c := range []struct {
		lat, lon float64
		in       bool
	}{{0.5, 0.1, true}, {0.5, 0.9, true}, {0.1, 0.5, false}, {0.9, 0.5, false}, {2, 2, false}} {
		if got := a.Contains(c.lat, c.lon); got != c.in {
			t.Errorf("Contains(%g, %g) = %v, want %v", c.lat, c.lon, got, c.in)
		}
	}
}

func TestValidate(t *testing.T) {
	square := pts(0, 0, 0, 1, 1, 1, 1, 0)
	tests := []struct {
		name  string
		area  fence.Area
		field string // "" for valid
	}{
		{"circle", circle(37.77, -122.42, 500), ""},
		{"circle at a pole", circle(90, 0, 1000), ""},
		{"circle max radius", circle(0, 0, fence.MaxRadius), ""},
		{"square", fence.Area{Polygon: square}, ""},
		{"closed square", fence.Area{Polygon: append(square, square[0])}, ""},
		{"triangle", fence.Area{Polygon: pts(0, 0, 0, 1, 1, 0)}, ""},
		{"antimeridian", fence.Area{Polygon: pts(-1, 179, -1, -179, 1, -179, 1, 179)}, ""},
		{"zero radius", circle(0, 0, 0), "radius_meters"},
		{"negative radius", circle(0, 0, -5), "radius_meters"},
		{"NaN radius", circle(0, 0, math.NaN()), "radius_meters"},
		{"infinite radius", circle(0, 0, math.Inf(1)), "radius_meters"},
		{"radius too large", circle(0, 0, fence.MaxRadius+1), "radius_meters"},
		{"center latitude", circle(90.0001, 0, 10), "center.latitude"},
		{"center latitude NaN", circle(math.NaN(), 0, 10), "center.latitude"},
		{"center longitude", circle(0, -180.5, 10), "center.longitude"},
		{"center longitude Inf", circle(0, math.Inf(-1), 10), "center.longitude"},
		{"polygon with radius", fence.Area{Polygon: square, Radius: 10}, "radius_meters"},
		{"two vertices", fence.Area{Polygon: pts(0, 0, 1, 1)}, "polygon"},
		{"closed two vertices", fence.Area{Polygon: pts(0, 0, 1, 1, 0, 0)}, "polygon"},
		{"repeated vertices", fence.Area{Polygon: pts(0, 0, 1, 1, 1, 1, 0, 0, 1, 1)}, "polygon"},
		{"collinear", fence.Area{Polygon: pts(0, 0, 1, 1, 2, 2)}, "polygon"},
		{"bow tie", fence.Area{Polygon: pts(0, 0, 1, 1, 0, 1, 1, 0)}, ""},
		{"vertex latitude", fence.Area{Polygon: pts(0, 0, 0, 1, -91, 1)}, "polygon[2].latitude"},
		{"vertex longitude", fence.Area{Polygon: pts(0, 0, 0, 181, 1, 1)}, "polygon[1].longitude"},
		{"vertex NaN", fence.Area{Polygon: pts(math.NaN(), 0, 0, 1, 1, 1)}, "polygon[0].latitude"},
		{"too many vertices", fence.Area{Polygon: make([]fence.Point, fence.MaxVertices+1)}, "polygon"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.area.Validate()
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate = %v", err)
				}
				return
			}
			var fe *fence.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError on %s", err, tt.field)
			}
			if fe.Field != tt.field {
				t.Errorf("Field = %q (%s), want %q", fe.Field, fe.Message, tt.field)
			}
			if !strings.HasPrefix(err.Error(), "geofence: "+tt.field+": ") {
				t.Errorf("Error() = %q", err)
			}
		})
	}
}

func TestContains(t *testing.T) {
	sf := circle(37.7749, -122.4194, 1000)
	// 1 km is 0.008993° of latitude.
	square := fence.Area{Polygon: pts(0, 0, 0, 10, 10, 10, 10, 0)}
	closedCW := fence.Area{Polygon: pts(0, 0, 10, 0, 10, 10, 0, 10, 0, 0)}
	// A U: the notch 3..7 × 5..10 is outside.
	u := fence.Area{Polygon: pts(0, 0, 0, 10, 10, 10, 10, 7, 3, 7, 3, 3, 10, 3, 10, 0)}
	dateline := fence.Area{Polygon: pts(-1, 179, -1, -179, 1, -179, 1, 179)}
	tests := []struct {
		name     string
		area     fence.Area
		lat, lon float64
		want     bool
	}{
		{"circle center", sf, 37.7749, -122.4194, true},
		{"circle 900 m north", sf, 37.7749 + 0.0081, -122.4194, true},
		{"circle 1100 m north", sf, 37.7749 + 0.0099, -122.4194, false},
		{"circle 990 m east", sf, 37.7749, -122.4194 + 990/(111_195*math.Cos(37.7749*math.Pi/180)), true},
		{"circle 1010 m east", sf, 37.7749, -122.4194 + 1010/(111_195*math.Cos(37.7749*math.Pi/180)), false},
		{"circle across the antimeridian", circle(0, 179.999, 500), 0, -179.999, true},
		{"circle at the pole", circle(90, 0, 1000), 89.995, 135, true},
		{"circle NaN point", sf, math.NaN(), -122.4194, false},
		{"circle out-of-range point", sf, 37.7749, -482.4194, false},
		{"invalid circle", circle(0, 0, 0), 0, 0, false},
		{"square inside", square, 5, 5, true},
		{"square outside", square, 15, 5, false},
		{"square outside west", square, 5, -1, false},
		{"square near corner", square, 9.999, 9.999, true},
		{"closed clockwise inside", closedCW, 5, 5, true},
		{"closed clockwise outside", closedCW, -5, 5, false},
		{"U arm", u, 5, 1, true},
		{"U notch", u, 5, 5, false},
		{"U other arm", u, 5, 9, true},
		{"U below notch", u, 2, 5, true},
		{"dateline inside east", dateline, 0, 179.5, true},
		{"dateline inside west", dateline, 0, -179.5, true},
		{"dateline on 180", dateline, 0, 180, true},
		{"dateline on -180", dateline, 0, -180, true},
		{"dateline outside", dateline, 0, 0, false},
		{"dateline outside west", dateline, 0, -178, false},
		{"two-vertex polygon", fence.Area{Polygon: pts(0, 0, 1, 1)}, 0.5, 0.5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.area.Contains(tt.lat, tt.lon); got != tt.want {
				t.Errorf("Contains(%v, %v) = %v, want %v", tt.lat, tt.lon, got, tt.want)
			}
		})
	}
}

func BenchmarkContainsCircle(b *testing.B) {
	a := circle(37.7749, -122.4194, 1000)
	b.ReportAllocs()
	for b.Loop() {
		a.Contains(37.78, -122.41)
	}
}

func BenchmarkContainsPolygon64(b *testing.B) {
	ring := make([]fence.Point, 64)
	for i := range ring {
		th := 2 * math.Pi * float64(i) / 64
		ring[i] = fence.Point{Lat: 37.77 + 0.01*math.Sin(th), Lon: -122.42 + 0.01*math.Cos(th)}
	}
	a := fence.Area{Polygon: ring}
	b.ReportAllocs()
	for b.Loop() {
		a.Contains(37.771, -122.419)
	}
}
