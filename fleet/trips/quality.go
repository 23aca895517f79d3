package trips

import (
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// assessQuality rates one point.
func assessQuality(p Point, d *DeviceInfo, prev, last *Point) Quality {
	q := Quality{AccuracyRating: "unknown", SignalQuality: "unknown", GPSFixType: "3d", HDOP: 0}
	if !math.IsNaN(p.Accuracy) {
		switch a := p.Accuracy; {
		case a <= 5:
			q.AccuracyRating = "excellent"
		case a <= 15:
			q.AccuracyRating = "good"
		case a <= 50:
			q.AccuracyRating = "fair"
		default:
			q.AccuracyRating = "poor"
		}
		// horizontal accuracy ≈ HDOP × user range error (≈5 m)
		q.HDOP = round(p.Accuracy/5, 1)
	}
	sats := -1.0
	if d != nil && d.SatellitesCount != nil {
		sats = *d.SatellitesCount
	}
	switch {
	case sats >= 0 && sats < 3:
		q.GPSFixType = "none"
	case sats >= 3 && sats < 4:
		q.GPSFixType = "2d"
	case sats < 0 && math.IsNaN(p.Altitude):
		q.GPSFixType = "2d"
	}
	if d != nil && d.SignalStrength != nil {
		v := *d.SignalStrength
		if v <= 0 { // dBm
			switch {
			case v >= -70:
				q.SignalQuality = "excellent"
			case v >= -85:
				q.SignalQuality = "good"
			case v >= -100:
				q.SignalQuality = "fair"
			default:
				q.SignalQuality = "poor"
			}
		} else {
			switch {
			case v >= 75:
				q.SignalQuality = "excellent"
			case v >= 50:
				q.SignalQuality = "good"
			case v >= 25:
				q.SignalQuality = "fair"
			default:
				q.SignalQuality = "poor"
			}
		}
	} else if sats >= 0 {
		switch {
		case sats >= 10:
			q.SignalQuality = "excellent"
		case sats >= 7:
			q.SignalQuality = "good"
		case sats >= 4:
			q.SignalQuality = "fair"
		default:
			q.SignalQuality = "poor"
		}
	}
	// deviation: distance of the point from the path the previous point
	// was heading along (0 without a previous point or heading)
	if prev != nil && last != nil && last.TS == p.TS && !math.IsNaN(prev.Heading) {
		q.DeviationFromRoute = round(geo.CrossTrack(prev.pos(), prev.Heading, p.pos()), 1)
	}
	return q
}
