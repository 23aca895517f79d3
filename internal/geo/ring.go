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

// Collinear reports whether every vertex of the ring lies on one line
// (in unwrapped longitudes), so that it encloses no area. A ring whose
// signed area is merely zero, as a bow tie of two equal lobes, is not
// collinear: each lobe holds points (InRing).
func Collinear(ring []Point) bool {
	if len(ring) == 0 {
		return true
	}
	w := wraps(ring)
	x0, y0 := unwrap(ring[0].Lon, w), ring[0].Lat
	var dx, dy float64 // the line's direction: from the first vertex to the first other one
	for _, p := range ring[1:] {
		x, y := unwrap(p.Lon, w)-x0, p.Lat-y0
		switch {
		case dx == 0 && dy == 0:
			dx, dy = x, y
		case dx*y-dy*x != 0:
			return false
		}
	}
	return true
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
