package geo

import "math"

// InRing reports whether p lies inside the ring of vertices, closed (the
// first vertex repeated at the end) or not, by the even-odd rule: a ray
// from p towards increasing longitude crosses the edges an odd number of
// times. Each edge is evaluated with its endpoints in a canonical order, so
// the result does not depend on the ring's direction. A ring of fewer
// than three vertices contains nothing; points on an edge may test either
// way.
func InRing(ring []Point, p Point) bool {
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

// Collinear reports whether the ring encloses no area: its signed planar
// area (shoelace, in unwrapped longitudes) is zero, as when all its
// vertices lie on one line.
func Collinear(ring []Point) bool {
	w := wraps(ring)
	s := 0.0
	for i := range ring {
		j := (i + 1) % len(ring)
		s += unwrap(ring[i].Lon, w)*ring[j].Lat - unwrap(ring[j].Lon, w)*ring[i].Lat
	}
	return s == 0
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
