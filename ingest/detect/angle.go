package detect

import "math"

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
