package fence_test

import (
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"testing"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
	"github.com/fleethub/fleethub/internal/geo"
)

// FuzzContains builds an area from the input (a circle when vertices is
// empty, else a polygon of 16-byte latitude/longitude pairs) and checks
// that nothing panics, Validate errors are *FieldErrors, and for valid
// polygons that the answer does not depend on closing, rotating or
// reversing the ring, nor on points outside the ring's bounding box.
func FuzzContains(f *testing.F) {
	f.Add(37.77, -122.42, 500.0, []byte(nil), 37.771, -122.419)
	f.Fuzz(func(t *testing.T, clat, clon, radius float64, vertices []byte, lat, lon float64) {
		var ring []fence.Point
		for len(vertices) >= 16 {
			ring = append(ring, fence.Point{
				Lat: math.Float64frombits(binary.LittleEndian.Uint64(vertices)),
				Lon: math.Float64frombits(binary.LittleEndian.Uint64(vertices[8:])),
			})
			vertices = vertices[16:]
		}
		a := fence.Area{Center: fence.Point{Lat: clat, Lon: clon}, Radius: radius, Polygon: ring}
		got := a.Contains(lat, lon)
		err := a.Validate()
		if err != nil {
			var fe *fence.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate = %#v, not a *FieldError", err)
			}
			return
		}
		if len(ring) == 0 {
			if !a.Contains(clat, clon) {
				t.Fatalf("circle %+v does not contain its center", a)
			}
			if want := geo.Distance(a.Center, fence.Point{Lat: lat, Lon: lon}) <= radius; got != want && !math.IsNaN(lat) && !math.IsNaN(lon) && (fence.Point{Lat: lat, Lon: lon}).Valid() {
				t.Fatalf("circle Contains = %v, distance says %v", got, want)
			}
			return
		}
		open := ring
		if n := len(open); n > 1 && open[0] == open[n-1] {
			open = open[:n-1]
		}
		reversed := slices.Clone(open)
		slices.Reverse(reversed)
		variants := map[string][]fence.Point{
			"closed":   append(slices.Clone(open), open[0]),
			"open":     open,
			"rotated":  append(slices.Clone(open[1:]), open[0]),
			"reversed": reversed,
		}
		for name, r := range variants {
			b := fence.Area{Polygon: r}
			if b.Contains(lat, lon) != got {
				t.Fatalf("%s ring gives %v, original %v: %v at (%v, %v)", name, !got, got, ring, lat, lon)
			}
		}
		if got && (lat < minLat(open) || lat > maxLat(open)) {
			t.Fatalf("(%v, %v) is inside %v but outside its latitudes", lat, lon, ring)
		}
	})
}

func minLat(r []fence.Point) float64 {
	m := r[0].Lat
	for _, p := range r {
		m = min(m, p.Lat)
	}
	return m
}

func maxLat(r []fence.Point) float64 {
	m := r[0].Lat
	for _, p := range r {
		m = max(m, p.Lat)
	}
	return m
}
