package geo_test

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

var (
	london = geo.Point{Lat: 51.5074, Lon: -0.1278}
	paris  = geo.Point{Lat: 48.8566, Lon: 2.3522}
	nyc    = geo.Point{Lat: 40.7128, Lon: -74.0060}
	la     = geo.Point{Lat: 34.0522, Lon: -118.2437}
	sydney = geo.Point{Lat: -33.8688, Lon: 151.2093}
)

// The expected distances come from the vector formula, R·atan2(|a×b|, a·b),
// an independent route to the same spherical distance.
func TestDistance(t *testing.T) {
	oneDegree := geo.EarthRadius * math.Pi / 180
	for _, tt := range []struct {
		name string
		a, b geo.Point
		want float64 // meters
		tol  float64
	}{
		{"identical", london, london, 0, 0},
		{"identical at the antimeridian", geo.Point{Lat: 10, Lon: 180}, geo.Point{Lat: 10, Lon: 180}, 0, 0},
		{"one degree of latitude", geo.Point{Lat: 10, Lon: 20}, geo.Point{Lat: 11, Lon: 20}, oneDegree, 1e-6},
		{"one degree on the equator", geo.Point{}, geo.Point{Lon: 1}, oneDegree, 1e-6},
		{"London–Paris", london, paris, 343_556.5349, 1e-3},
		{"New York–Los Angeles", nyc, la, 3_935_751.6909, 1e-3},
		{"Sydney–London", sydney, london, 16_993_956.9328, 1e-3},
		{"1.3 m in Amsterdam", geo.Point{Lat: 52.37, Lon: 4.89}, geo.Point{Lat: 52.37001, Lon: 4.89001}, 1.3028, 1e-4},
		{"1.1 km in Columbus", geo.Point{Lat: 39.9612, Lon: -82.9988}, geo.Point{Lat: 39.97, Lon: -83.005}, 1_112.0633, 1e-4},
		{"across the antimeridian", geo.Point{Lon: 179.9}, geo.Point{Lon: -179.9}, 0.2 * oneDegree, 1e-6},
		{"180° and −180° are one meridian", geo.Point{Lat: 45, Lon: 180}, geo.Point{Lat: 45, Lon: -180}, 0, 1e-6},
		{"antipodes on the equator", geo.Point{}, geo.Point{Lon: 180}, geo.HalfCircumference, 0},
		{"pole to pole", geo.Point{Lat: 90}, geo.Point{Lat: -90}, geo.HalfCircumference, 0},
		{"the North Pole from two meridians", geo.Point{Lat: 90, Lon: 0}, geo.Point{Lat: 90, Lon: 123}, 0, 1e-6},
		{"across the North Pole", geo.Point{Lat: 89.9}, geo.Point{Lat: 89.9, Lon: 180}, 22_239.0160, 1e-3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := geo.Distance(tt.a, tt.b); math.Abs(got-tt.want) > tt.tol {
				t.Errorf("Distance(%v, %v) = %.6f m, want %.6f ± %g", tt.a, tt.b, got, tt.want, tt.tol)
			}
			if got, back := geo.Distance(tt.a, tt.b), geo.Distance(tt.b, tt.a); got != back {
				t.Errorf("not symmetric: %v there, %v back", got, back)
			}
		})
	}
}

// TestDistanceSeries checks the short-distance series of DistanceRad
// against math.Sin and math.Asin on both sides of its thresholds.
func TestDistanceSeries(t *testing.T) {
	ref := func(a, b geo.Point) float64 {
		s1 := math.Sin((b.Lat - a.Lat) * geo.Degree / 2)
		s2 := math.Sin((b.Lon - a.Lon) * geo.Degree / 2)
		h := s1*s1 + math.Cos(a.Lat*geo.Degree)*math.Cos(b.Lat*geo.Degree)*s2*s2
		return 2 * geo.EarthRadius * math.Asin(math.Sqrt(h))
	}
	for _, d := range []float64{1e-7, 1e-5, 1e-3, 0.05, 0.1, 0.114, 0.115, 0.2, 1, 10} { // degrees; the series stop near 0.115°
		for _, a := range []geo.Point{{}, {Lat: 52, Lon: 4}, {Lat: -70, Lon: 179.99}} {
			for _, b := range []geo.Point{{Lat: a.Lat + d, Lon: a.Lon}, {Lat: a.Lat, Lon: a.Lon + d}, {Lat: a.Lat - d, Lon: a.Lon - d}} {
				got, want := geo.Distance(a, b), ref(a, b)
				if math.Abs(got-want) > 1e-12*want {
					t.Errorf("Distance(%v, %v) = %.12g, math.Asin gives %.12g", a, b, got, want)
				}
			}
		}
	}
}

func TestDistanceRadMatchesDistance(t *testing.T) {
	for _, p := range [][2]geo.Point{{london, paris}, {nyc, la}, {{Lat: 52.37, Lon: 4.89}, {Lat: 52.37001, Lon: 4.89001}}} {
		a, b := p[0], p[1]
		got := geo.DistanceRad((b.Lat-a.Lat)*geo.Degree, (b.Lon-a.Lon)*geo.Degree, math.Cos(a.Lat*geo.Degree), math.Cos(b.Lat*geo.Degree))
		if want := geo.Distance(a, b); got != want {
			t.Errorf("DistanceRad %v → %v = %v, Distance %v", a, b, got, want)
		}
	}
}

func TestBearing(t *testing.T) {
	for _, tt := range []struct {
		name string
		a, b geo.Point
		want float64 // degrees
	}{
		{"north", geo.Point{Lat: 52, Lon: 4}, geo.Point{Lat: 52.01, Lon: 4}, 0},
		{"east on the equator", geo.Point{}, geo.Point{Lon: 1}, 90},
		{"south", geo.Point{Lat: 52, Lon: 4}, geo.Point{Lat: 51.99, Lon: 4}, 180},
		{"west on the equator", geo.Point{}, geo.Point{Lon: -1}, 270},
		{"London–Paris", london, paris, 148.1156},
		{"Paris–London", paris, london, 330.0211},
		{"New York–Los Angeles", nyc, la, 273.6871},
		{"east across the antimeridian", geo.Point{Lon: 179.9}, geo.Point{Lon: -179.9}, 90},
		{"west across the antimeridian", geo.Point{Lon: -179.9}, geo.Point{Lon: 179.9}, 270},
		{"from the North Pole", geo.Point{Lat: 90}, geo.Point{Lat: 10, Lon: 0}, 180},
		{"from the South Pole", geo.Point{Lat: -90}, geo.Point{Lat: 10, Lon: 0}, 0},
		{"to the North Pole", geo.Point{Lat: 10, Lon: -30}, geo.Point{Lat: 90, Lon: 50}, 0},
		{"to the South Pole", geo.Point{Lat: 10, Lon: -30}, geo.Point{Lat: -90}, 180},
		{"identical points", london, london, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := geo.Bearing(tt.a, tt.b)
			if !(got >= 0 && got < 360) {
				t.Fatalf("Bearing(%v, %v) = %v, outside [0, 360)", tt.a, tt.b, got)
			}
			if d := math.Abs(math.Mod(got-tt.want+540, 360) - 180); d > 1e-4 {
				t.Errorf("Bearing(%v, %v) = %.6f°, want %v", tt.a, tt.b, got, tt.want)
			}
		})
	}
}

func TestCrossTrack(t *testing.T) {
	oneDegree := geo.EarthRadius * math.Pi / 180
	for _, tt := range []struct {
		name    string
		a       geo.Point
		bearing float64
		p       geo.Point
		want    float64
	}{
		{"on the track", geo.Point{}, 90, geo.Point{Lon: 1}, 0},
		{"at the start", london, 45, london, 0},
		{"a degree north of the equator", geo.Point{}, 90, geo.Point{Lat: 1, Lon: 0.5}, oneDegree},
		{"a degree south, heading west", geo.Point{}, 270, geo.Point{Lat: -1, Lon: -3}, oneDegree},
		{"beside a meridian", geo.Point{Lat: 10, Lon: 20}, 0, geo.Point{Lat: 10, Lon: 21}, geo.EarthRadius * math.Asin(math.Cos(10*geo.Degree)*math.Sin(geo.Degree))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := geo.CrossTrack(tt.a, tt.bearing, tt.p); math.Abs(got-tt.want) > 1e-6 {
				t.Errorf("CrossTrack(%v, %v, %v) = %.6f m, want %.6f", tt.a, tt.bearing, tt.p, got, tt.want)
			}
		})
	}
}

func TestValid(t *testing.T) {
	for _, tt := range []struct {
		p    geo.Point
		want bool
	}{
		{geo.Point{}, true}, {geo.Point{Lat: 90, Lon: 180}, true}, {geo.Point{Lat: -90, Lon: -180}, true},
		{geo.Point{Lat: 90.0001}, false}, {geo.Point{Lon: -180.0001}, false},
		{geo.Point{Lat: math.NaN()}, false}, {geo.Point{Lon: math.Inf(1)}, false},
	} {
		if got := tt.p.Valid(); got != tt.want {
			t.Errorf("%v.Valid() = %v, want %v", tt.p, got, tt.want)
		}
	}
}

// BenchmarkDistance measures one Distance in a city (where the series
// apply) and across a continent.
func BenchmarkDistance(b *testing.B) {
	for _, c := range []struct {
		name string
		a, b geo.Point
	}{
		{"1km", geo.Point{Lat: 39.9612, Lon: -82.9988}, geo.Point{Lat: 39.97, Lon: -83.005}},
		{"4000km", nyc, la},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			s := 0.0
			for b.Loop() {
				s += geo.Distance(c.a, c.b)
			}
			if s < 0 {
				b.Fatal(s)
			}
		})
	}
}

// BenchmarkDistanceRad measures the hot paths' form, cosines precomputed.
func BenchmarkDistanceRad(b *testing.B) {
	a, c := geo.Point{Lat: 39.9612, Lon: -82.9988}, geo.Point{Lat: 39.97, Lon: -83.005}
	dLat, dLon, cos1, cos2 := (c.Lat-a.Lat)*geo.Degree, (c.Lon-a.Lon)*geo.Degree, math.Cos(a.Lat*geo.Degree), math.Cos(c.Lat*geo.Degree)
	b.ReportAllocs()
	s := 0.0
	for b.Loop() {
		s += geo.DistanceRad(dLat, dLon, cos1, cos2)
	}
	if s < 0 {
		b.Fatal(s)
	}
}
