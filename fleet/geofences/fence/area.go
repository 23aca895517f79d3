package fence

import (
	"slices"
	"strconv"

	"github.com/fleethub/fleethub/internal/geo"
)

// Limits of an Area.
const (
	// MaxRadius is the largest circle radius in meters, half the
	// Earth's circumference: a larger circle would hold the whole Earth.
	MaxRadius = geo.HalfCircumference
	// MaxVertices is the most vertices of a polygon.
	MaxVertices = 10_000
)

// Point is a WGS84 position in degrees, the one of package geo, so that a
// polygon is a ring geo.InRing reads without a copy.
type Point = geo.Point

// Area is a circle (Center and Radius) or a polygon (Polygon, with no
// Radius).
type Area struct {
	ID string `json:"id,omitempty"`
	// Center and Radius, in meters, of a circle.
	Center Point   `json:"center"`
	Radius float64 `json:"radius_meters,omitempty"`
	// Polygon is the ring of a polygon: at least three distinct vertices;
	// repeating the first vertex at the end is allowed.
	Polygon []Point `json:"polygon,omitempty"`
}

// FieldError is a validation error naming the field by its JSON name,
// e.g. "polygon[3].latitude".
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return "geofence: " + e.Field + ": " + e.Message }

// Validate checks the area.
func (a *Area) Validate() error {
	if len(a.Polygon) == 0 {
		if msg := checkPoint(a.Center); msg != "" {
			return &FieldError{Field: "center." + msg, Message: "out of range"}
		}
		if !(a.Radius > 0 && a.Radius <= MaxRadius) { // catches NaN
			return &FieldError{Field: "radius_meters", Message: "must be a number of meters above 0 and at most " + strconv.FormatFloat(MaxRadius, 'f', 0, 64)}
		}
		return nil
	}
	if a.Radius != 0 {
		return &FieldError{Field: "radius_meters", Message: "a polygon has no radius"}
	}
	if len(a.Polygon) > MaxVertices {
		return &FieldError{Field: "polygon", Message: "at most " + strconv.Itoa(MaxVertices) + " vertices"}
	}
	for i, p := range a.Polygon {
		if msg := checkPoint(p); msg != "" {
			return &FieldError{Field: "polygon[" + strconv.Itoa(i) + "]." + msg, Message: "out of range"}
		}
	}
	ring := a.ring()
	if distinct(ring) < 3 {
		return &FieldError{Field: "polygon", Message: "needs at least 3 distinct vertices"}
	}
	if geo.Collinear(ring) {
		return &FieldError{Field: "polygon", Message: "vertices must not be collinear"}
	}
	return nil
}

// checkPoint returns the name of p's bad coordinate, or "".
func checkPoint(p Point) string {
	switch {
	case !(p.Lat >= -90 && p.Lat <= 90):
		return "latitude"
	case !(p.Lon >= -180 && p.Lon <= 180):
		return "longitude"
	}
	return ""
}

// ring returns the polygon without a closing vertex.
func (a *Area) ring() []Point {
	r := a.Polygon
	if n := len(r); n > 1 && r[0] == r[n-1] {
		r = r[:n-1]
	}
	return r
}

// distinct counts the ring's distinct vertices, up to 3.
func distinct(ring []Point) int {
	var seen [3]Point
	n := 0
	for _, p := range ring {
		if !slices.Contains(seen[:n], p) {
			seen[n] = p
			if n++; n == 3 {
				break
			}
		}
	}
	return n
}

// Within reports whether the point (lat, lon) lies in the area or within
// m meters of its edge.
func (a *Area) Within(lat, lon, m float64) bool {
	if a.Contains(lat, lon) {
		return true
	}
	p := Point{Lat: lat, Lon: lon}
	if !p.Valid() || m <= 0 {
		return false
	}
	if len(a.Polygon) == 0 {
		return a.Radius > 0 && geo.Distance(a.Center, p) <= a.Radius+m
	}
	r := a.ring()
	for i := range r {
		if geo.SegmentDistance(p, r[i], r[(i+1)%len(r)]) <= m {
			return true
		}
	}
	return false
}

// Contains reports whether the area contains the point (lat, lon).
func (a *Area) Contains(lat, lon float64) bool {
	p := Point{Lat: lat, Lon: lon}
	if !p.Valid() {
		return false
	}
	if len(a.Polygon) == 0 {
		return a.Radius > 0 && geo.Distance(a.Center, p) <= a.Radius
	}
	return geo.InRing(a.ring(), p)
}
