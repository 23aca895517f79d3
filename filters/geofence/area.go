package geofence

import (
	"math"
	"slices"
	"strconv"
)

// Limits of an Area.
const (
	// EarthRadius is the mean Earth radius in meters (IUGG).
	EarthRadius = 6_371_008.8
	// MaxRadius is the largest circle radius in meters, half the
	// Earth's circumference: a larger circle would hold the whole Earth.
	MaxRadius = math.Pi * EarthRadius
	// MaxVertices is the most vertices of a polygon.
	MaxVertices = 10_000
)

// Point is a WGS84 position in degrees.
type Point struct {
	Lat float64 `json:"latitude"`
	Lon float64 `json:"longitude"`
}

// Valid reports whether p is a finite position within range.
func (p Point) Valid() bool {
	return p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon <= 180 // false for NaN
}

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
	if area2(ring) == 0 {
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

// area2 is twice the signed planar area of the ring (shoelace), in the
// ring's unwrapped longitudes.
func area2(ring []Point) float64 {
	w := wraps(ring)
	s := 0.0
	for i := range ring {
		j := (i + 1) % len(ring)
		s += unwrap(ring[i].Lon, w)*ring[j].Lat - unwrap(ring[j].Lon, w)*ring[i].Lat
	}
	return s
}

// Contains reports whether the area contains the point (lat, lon).
func (a *Area) Contains(lat, lon float64) bool {
	p := Point{Lat: lat, Lon: lon}
	if !p.Valid() {
		return false
	}
	if len(a.Polygon) == 0 {
		return a.Radius > 0 && Distance(a.Center, p) <= a.Radius
	}
	return inRing(a.ring(), p)
}

// Distance returns the haversine great-circle distance in meters.
func Distance(a, b Point) float64 {
	const rad = math.Pi / 180
	dLat := (b.Lat - a.Lat) * rad
	dLon := (b.Lon - a.Lon) * rad
	s1, s2 := math.Sin(dLat/2), math.Sin(dLon/2)
	h := s1*s1 + math.Cos(a.Lat*rad)*math.Cos(b.Lat*rad)*s2*s2
	return 2 * EarthRadius * math.Asin(math.Sqrt(min(1, h)))
}

// wraps reports whether the ring crosses the antimeridian: an edge spans
// more than 180° of longitude.
func wraps(ring []Point) bool {
	for i := range ring {
		j := (i + 1) % len(ring)
		if math.Abs(ring[i].Lon-ring[j].Lon) > 180 {
			return true
		}
	}
	return false
}

// unwrap moves a negative longitude to [180, 360) in a wrapping ring.
func unwrap(x float64, wrap bool) float64 {
	if wrap && x < 0 {
		return x + 360
	}
	return x
}

// inRing is the even-odd ray cast: a ray from p towards increasing
// longitude crosses the ring's edges an odd number of times if p is
// inside. Each edge is evaluated with its endpoints in a canonical order,
// so the result does not depend on the ring's direction.
func inRing(ring []Point, p Point) bool {
	if len(ring) < 3 {
		return false
	}
	w := wraps(ring)
	x, y := unwrap(p.Lon, w), p.Lat
	in := false
	for i := range ring {
		a, b := ring[i], ring[(i+1)%len(ring)]
		if a.Lat > b.Lat || a.Lat == b.Lat && a.Lon > b.Lon {
			a, b = b, a
		}
		if (a.Lat > y) == (b.Lat > y) {
			continue // the edge does not straddle the ray's latitude
		}
		ax, bx := unwrap(a.Lon, w), unwrap(b.Lon, w)
		if x < ax+(y-a.Lat)*(bx-ax)/(b.Lat-a.Lat) {
			in = !in
		}
	}
	return in
}
