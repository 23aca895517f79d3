package detect

import (
	"math"
	"time"
)

// harshEpisode is a run of samples over a harsh threshold along one axis.
type harshEpisode struct {
	active     bool
	start, end time.Time
	lat, lon   float64 // degrees, where it started
	v0, v1     float64 // speed at start and at end, m/s
	peak, sd   float64 // peak magnitude along the axis and its uncertainty, m/s²
	samples    int
	roadType   string  // the matched road where it started
	road       float64 // its limit, km/h
}

// update feeds the magnitude x (m/s², positive along the axis) with
// uncertainty sd, measured between samples a and s.
func (e *harshEpisode) update(d *Detector, typ string, x, sd, thr float64, a, s *sample, out []Event) []Event {
	sure := x - sd
	switch {
	case !e.active && sure >= thr:
		*e = harshEpisode{active: true, start: a.t, end: s.t, lat: a.latDeg, lon: a.lonDeg,
			v0: a.v, v1: s.v, peak: x, sd: sd, samples: 1, roadType: a.roadType, road: a.roadKmh}
	case e.active && sure >= thr*harshHysteresis:
		e.end, e.v1 = s.t, s.v
		if x > e.peak {
			e.peak, e.sd = x, sd
		}
		e.samples++
	case e.active:
		out = e.close(d, typ, out)
	}
	return out
}

func (e *harshEpisode) close(d *Detector, typ string, out []Event) []Event {
	if !e.active {
		return out
	}
	e.active = false
	dur := e.end.Sub(e.start)
	if dur < d.t.MinHarshDuration {
		return out
	}
	g := e.peak / gravity
	conf := 1 - e.sd/e.peak
	if e.samples < 2 {
		conf *= 0.8
	}
	signed := g
	if typ == TypeHarshBraking {
		signed = -g
	}
	return append(out, Event{
		Type: typ, Start: e.start, End: e.end, Lat: e.lat, Lon: e.lon, RoadType: e.roadType, RoadLimitKmh: e.road,
		Severity:   severityOf(typ, g),
		Confidence: confidence(conf),
		Metrics: Metrics{
			AccelerationG:   signed,
			SpeedChangeKmh:  (e.v1 - e.v0) / kmh,
			DurationSeconds: dur.Seconds(),
		},
	})
}

// throttled reports whether a speeding episode starting at start goes
// unreported under Thresholds.SpeedingEvery (never with SpeedingSummary:
// every episode goes into the summary).
func (d *Detector) throttled(start time.Time) bool {
	every := d.t.SpeedingEvery
	switch {
	case d.t.SpeedingSummary || every == 0 || d.lastSpeeding.IsZero():
		return false
	case every < 0:
		return true
	}
	return start.Sub(d.lastSpeeding) < every
}

// speedingEpisode is a run of samples over the speed limit plus tolerance.
type speedingEpisode struct {
	active      bool
	start, last time.Time
	lat, lon    float64
	max, maxSD  float64 // highest speed and its uncertainty, m/s
	limit       float64 // km/h, the limit it is judged by
	roadType    string  // the matched road's class, "" when not matched
	road        float64 // the matched road's limit, 0 when not matched
}

func (e *speedingEpisode) close(d *Detector, out []Event) []Event {
	if !e.active {
		return out
	}
	e.active = false
	dur := e.last.Sub(e.start)
	if dur < d.t.MinSpeedingDuration || d.throttled(e.start) {
		return out
	}
	d.lastSpeeding = e.start
	limit := e.limit
	actual := e.max / kmh
	excess := actual - limit
	conf := 1.0
	if excess > 0 {
		conf = 1 - (e.maxSD/kmh)/excess
	}
	ev := Event{
		Type: TypeSpeeding, Start: e.start, End: e.last, Lat: e.lat, Lon: e.lon, RoadType: e.roadType, RoadLimitKmh: e.road,
		Severity:   severityOf(TypeSpeeding, excess),
		Confidence: confidence(conf),
		Metrics: Metrics{
			SpeedLimitKmh:   limit,
			ActualSpeedKmh:  actual,
			ExcessSpeedKmh:  excess,
			DurationSeconds: dur.Seconds(),
		},
	}
	if d.t.SpeedingSummary {
		d.summarized = append(d.summarized, ev)
		return out
	}
	return append(out, ev)
}

// idleEpisode is a run of samples at or below the idle speed.
type idleEpisode struct {
	active           bool
	start, last      time.Time
	lat, lon         float64
	samples, reports int
	roadType         string
	road             float64
}

func (e *idleEpisode) count(reported bool) {
	e.samples++
	if reported {
		e.reports++
	}
}

func (e *idleEpisode) close(d *Detector, out []Event) []Event {
	if !e.active {
		return out
	}
	e.active = false
	dur := e.last.Sub(e.start)
	if dur < d.t.MinIdle {
		return out
	}
	return append(out, Event{
		Type: TypeIdle, Start: e.start, End: e.last, Lat: e.lat, Lon: e.lon, RoadType: e.roadType, RoadLimitKmh: e.road,
		Severity:   severityOf(TypeIdle, dur.Seconds()),
		Confidence: confidence(0.6 + 0.4*float64(e.reports)/float64(e.samples)),
		Metrics:    Metrics{DurationSeconds: dur.Seconds()},
	})
}

// confidence clamps c to [0, 1] and rounds it to two decimals.
func confidence(c float64) float64 {
	if !(c > 0) {
		return 0
	}
	if c > 1 {
		return 1
	}
	return math.Round(c*100) / 100
}
