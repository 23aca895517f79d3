package detect

import "math"

// earthRadiusM is the mean Earth radius (IUGG), in meters.
const earthRadiusM = 6371008.8

const degree = math.Pi / 180

// distanceM is the haversine distance in meters between two points given in
// radians, with the cosines of their latitudes precomputed.
func distanceM(lat1, lon1, cos1, lat2, lon2, cos2 float64) float64 {
	s1 := halfSin(lat2 - lat1)
	s2 := halfSin(lon2 - lon1)
	h := s1*s1 + cos1*cos2*s2*s2
	x := math.Sqrt(h)
	if x < 1e-3 {
		// Under 12.7 km, asin x = x + x³/6 to a relative 1e-13; this
		// saves a third of the cost of a point (measured 35 of 120 ns).
		return 2 * earthRadiusM * x * (1 + h/6)
	}
	if x > 1 {
		x = 1
	}
	return 2 * earthRadiusM * math.Asin(x)
}

// bearing is the initial bearing from point 1 to point 2 in radians,
// clockwise from North, in [0, 2π).
func bearing(lat1, lon1, cos1, lat2, lon2, cos2 float64) float64 {
	dlon := lon2 - lon1
	y := math.Sin(dlon) * cos2
	x := cos1*math.Sin(lat2) - math.Sin(lat1)*cos2*math.Cos(dlon)
	b := math.Atan2(y, x)
	if b < 0 {
		b += 2 * math.Pi
	}
	return b
}

// angleDiff is b−a wrapped into (−π, π].
func angleDiff(a, b float64) float64 {
	d := math.Mod(b-a, 2*math.Pi)
	switch {
	case d > math.Pi:
		d -= 2 * math.Pi
	case d <= -math.Pi:
		d += 2 * math.Pi
	}
	return d
}

// halfSin is sin(x/2). Under 2e-3 rad (12 km) the series to x⁵ is exact to
// a relative 1e-17 and four times cheaper than math.Sin (measured: two sines
// were a fifth of the cost of a point).
func halfSin(x float64) float64 {
	y := x / 2
	if y > -1e-3 && y < 1e-3 {
		y2 := y * y
		return y * (1 - y2/6*(1-y2/20))
	}
	return math.Sin(y)
}
