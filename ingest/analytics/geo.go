package analytics

import (
	"math"
	"time"
)

// earthRadiusM is the mean Earth radius (IUGG), in meters.
const earthRadiusM = 6371008.8

const degree = math.Pi / 180

// distanceM is the haversine distance between two fixes, in meters.
func distanceM(a, b *fix) float64 {
	s1 := halfSin((b.lat - a.lat) * degree)
	s2 := halfSin((b.lon - a.lon) * degree)
	h := s1*s1 + a.cosLat*b.cosLat*s2*s2
	x := math.Sqrt(h)
	if x < 1e-3 {
		// Under 12.7 km, asin x = x + x³/6 to a relative 1e-13.
		return 2 * earthRadiusM * x * (1 + h/6)
	}
	if x > 1 {
		x = 1
	}
	return 2 * earthRadiusM * math.Asin(x)
}

// halfSin is sin(x/2). Under 2e-3 rad (12 km) the series to x⁵ is exact to
// a relative 1e-17 and four times cheaper than math.Sin.
func halfSin(x float64) float64 {
	y := x / 2
	if y > -1e-3 && y < 1e-3 {
		y2 := y * y
		return y * (1 - y2/6*(1-y2/20))
	}
	return math.Sin(y)
}

// stamp is a time as whole seconds and nanoseconds since the Unix epoch;
// its differences are a few integer operations, where time.Time.Sub costs
// 10 ns (it checks for overflow with an Add and an Equal).
type stamp struct {
	sec  int64
	nsec int64
}

func stampOf(t time.Time) stamp { return stamp{t.Unix(), int64(t.Nanosecond())} }

const maxStampSec = int64(math.MaxInt64/time.Second) - 1

// since is s−u, saturated like time.Time.Sub.
func (s stamp) since(u stamp) time.Duration {
	ds := s.sec - u.sec
	switch {
	case ds > maxStampSec || (u.sec < 0 && ds < s.sec):
		return math.MaxInt64
	case ds < -maxStampSec || (u.sec > 0 && ds > s.sec):
		return math.MinInt64
	}
	return time.Duration(ds)*time.Second + time.Duration(s.nsec-u.nsec)
}
