package trips

import (
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// assessQuality rates one point.
func assessQuality(p Point, d *DeviceInfo, prev, last *Point) Quality {
	q := Quality{AccuracyRating: "unknown", SignalQuality: "unknown", GPSFixType: "unknown"}
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
		h := round(p.Accuracy/5, 1)
		q.HDOP = &h
	}
	sats := -1.0
	if d != nil && d.SatellitesCount != nil {
		sats = *d.SatellitesCount
	}
	// the fix type follows from the satellites in view; without their
	// count it is not known (an altitude may come from a barometer)
	switch {
	case sats >= 4:
		q.GPSFixType = "3d"
	case sats >= 3:
		q.GPSFixType = "2d"
	case sats >= 0:
		q.GPSFixType = "none"
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
	// was heading along (null without a previous point or heading)
	if prev != nil && last != nil && last.TS == p.TS && !math.IsNaN(prev.Heading) {
		d := round(geo.CrossTrack(prev.pos(), prev.Heading, p.pos()), 1)
		q.DeviationFromRoute = &d
	}
	return q
}
