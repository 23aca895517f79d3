package detect

import (
	"math"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/stamp"
)

// Detector finds the events of one trip. Create it with New; it is not safe
// for concurrent use.
type Detector struct {
	t                      Thresholds // defaults applied
	accThr, brkThr, corThr float64    // m/s²
	idleV                  float64    // m/s

	// ring holds the most recent admitted samples; ring[head] is the newest.
	ring    [ringSize]sample
	head, n int
	jumps   int // consecutive points rejected as jumps

	acc, brk, cor harshEpisode
	spd           speedingEpisode
	// lastSpeeding is the start of the last speeding event reported, zero
	// before the first (Thresholds.SpeedingEvery)
	lastSpeeding time.Time
	// summarized are the speeding episodes held for Summarized
	// (Thresholds.SpeedingSummary)
	summarized []Event
	idle       idleEpisode
}

// Summarized appends to out the speeding episodes that closed since the
// last call while Thresholds.SpeedingSummary was set, oldest first, and
// forgets them. They are not among the events Feed and Flush return; a
// caller that sets SpeedingSummary takes them after each Feed or Flush.
func (d *Detector) Summarized(out []Event) []Event {
	out = append(out, d.summarized...)
	d.summarized = d.summarized[:0]
	return out
}

// sample is an admitted point with its speed and heading estimates.
type sample struct {
	t                time.Time
	ts               stamp.Stamp // t, for cheap differences
	lat, lon, cosLat float64     // radians
	latDeg, lonDeg   float64
	acc              float64 // accuracy, m; unknown → unknownAccuracyM
	v, sv            float64 // speed and its uncertainty, m/s
	h, sh            float64 // heading and its uncertainty, rad
	hasV, hasH       bool
	reportedV        bool
	// still: standing still as far as can be told: the reported speed is
	// at most the idle speed, or the chord is within the combined accuracy.
	still bool
	// the matched road's limit (0: not matched) and class
	roadKmh  float64
	roadType string
}

// at returns the k-th newest sample, k < d.n.
func (d *Detector) at(k int) *sample {
	return &d.ring[(d.head-k+ringSize)%ringSize]
}

func (d *Detector) push(s *sample) {
	d.head = (d.head + 1) % ringSize
	d.ring[d.head] = *s
	if d.n < ringSize {
		d.n++
	}
}

// olderThan returns the newest sample at least span before t, or nil.
func (d *Detector) olderThan(ts stamp.Stamp, span time.Duration) *sample {
	for k := 0; k < d.n; k++ {
		if s := d.at(k); ts.Sub(s.ts) >= span {
			return s
		}
	}
	return nil
}

// Feed processes the next point of the trip and appends to out the events
// that complete at it. Points must come in timestamp order; a point not
// after the previous one is ignored. Feed does not allocate unless out must
// grow.
func (d *Detector) Feed(p Point, out []Event) []Event {
	var s sample
	if !d.admit(&p, &s) {
		return out
	}
	if d.n > 0 {
		last := d.at(0)
		dt := s.ts.Sub(last.ts)
		if dt < d.t.MinSampleGap || dt <= 0 {
			return out
		}
		if dt > d.t.MaxEpisodeGap {
			out = d.closeAll(out)
			d.resetChain()
		} else {
			dist := geo.DistanceRad(s.lat-last.lat, s.lon-last.lon, last.cosLat, s.cosLat)
			if (dist-last.acc-s.acc)/dt.Seconds() > maxPlausibleSpeed {
				d.jumps++
				if d.jumps < maxJumps {
					return out
				}
				out = d.closeHarsh(out)
				d.resetChain()
			}
		}
	}
	d.jumps = 0
	d.estimate(&s)
	if !d.t.HarshDisabled {
		out = d.kinematics(&s, out)
	}
	if !d.t.SpeedingDisabled {
		out = d.speeding(&s, out)
	}
	if !d.t.IdleDisabled {
		out = d.idling(&s, out)
	}
	d.push(&s)
	return out
}

// Flush closes the episodes still open at the end of the trip, appends the
// events among them that qualify, and resets the Detector for a new trip.
func (d *Detector) Flush(out []Event) []Event {
	return d.Break(out)
}

// Break closes the episodes open, appends the events among them that
// qualify, and starts a new chain, as a gap longer than MaxEpisodeGap
// does: nothing is measured across it (a pause of the trip, which is not
// driving, standing or idling time).
func (d *Detector) Break(out []Event) []Event {
	out = d.closeAll(out)
	d.resetChain()
	d.jumps = 0
	return out
}

func (d *Detector) resetChain() {
	d.n = 0
	d.head = 0
}

// admit validates p and fills the position and reported values of s.
func (d *Detector) admit(p *Point, s *sample) bool {
	if !(p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon <= 180) {
		return false // also rejects NaN
	}
	acc := p.Accuracy
	switch {
	case acc > d.t.MaxAccuracyM || math.IsInf(acc, 1):
		return false
	case !(acc > 0): // unknown, NaN or negative
		acc = unknownAccuracyM
	}
	s.t, s.ts = p.Time, stamp.Of(p.Time)
	s.latDeg, s.lonDeg = p.Lat, p.Lon
	s.lat, s.lon = p.Lat*geo.Degree, p.Lon*geo.Degree
	s.cosLat = math.Cos(s.lat)
	s.acc = acc
	if p.RoadLimitKmh > 0 && !math.IsInf(p.RoadLimitKmh, 0) {
		s.roadKmh, s.roadType = p.RoadLimitKmh, p.RoadType
	}
	if p.HasSpeed && p.Speed >= 0 && p.Speed <= maxReportedSpeed {
		s.v, s.sv, s.hasV, s.reportedV = p.Speed*kmh, reportedSpeedSD, true, true
		s.still = s.v <= d.idleV
	}
	if p.HasHeading && !math.IsNaN(p.Heading) && !math.IsInf(p.Heading, 0) {
		h := math.Mod(p.Heading, 360)
		if h < 0 {
			h += 360
		}
		s.h, s.sh, s.hasH = h*geo.Degree, reportedHeadingSD, true
	}
	return true
}

// estimate derives the speed and heading that s does not report from the
// chord to an earlier sample.
func (d *Detector) estimate(s *sample) {
	if (s.hasV && s.hasH) || d.n == 0 {
		return
	}
	a := d.olderThan(s.ts, chordSpan)
	if a == nil {
		a = d.at(d.n - 1)
	}
	dt := s.ts.Sub(a.ts).Seconds()
	dist := geo.DistanceRad(s.lat-a.lat, s.lon-a.lon, a.cosLat, s.cosLat)
	comb := a.acc + s.acc
	if !s.hasV {
		if v := dist / dt; v <= maxPlausibleSpeed {
			s.v, s.sv, s.hasV = v, comb/dt, true
			s.still = dist <= comb
		}
	}
	if !s.hasH && dist >= 2*comb {
		s.h = geo.BearingRad(a.lat, s.lat, s.lon-a.lon, a.cosLat, s.cosLat)
		if s.h < 0 {
			s.h += 2 * math.Pi // headings are in [0, 2π)
		}
		s.sh, s.hasH = comb/dist, true
	}
}

// kinematics updates the harsh episodes with the accelerations between s and
// the newest sample at least kinSpan before it.
func (d *Detector) kinematics(s *sample, out []Event) []Event {
	a := d.olderThan(s.ts, kinSpan)
	if a == nil {
		return out
	}
	span := s.ts.Sub(a.ts)
	if span > d.t.MaxSampleGap {
		return d.closeHarsh(out)
	}
	dt := span.Seconds()
	if s.hasV && a.hasV {
		lon := (s.v - a.v) / dt
		sd := (s.sv + a.sv) / dt
		out = d.acc.update(d, TypeHarshAcceleration, lon, sd, d.accThr, a, s, out)
		out = d.brk.update(d, TypeHarshBraking, -lon, sd, d.brkThr, a, s, out)
	} else {
		out = d.acc.close(d, TypeHarshAcceleration, out)
		out = d.brk.close(d, TypeHarshBraking, out)
	}
	if s.hasV && a.hasV && s.hasH && a.hasH && s.v >= minHeadingSpeed && a.v >= minHeadingSpeed {
		w := math.Abs(angleDiff(a.h, s.h)) / dt
		vm := (s.v + a.v) / 2
		lat := vm * w
		sd := vm*(s.sh+a.sh)/dt + w*(s.sv+a.sv)/2
		out = d.cor.update(d, TypeHarshCornering, lat, sd, d.corThr, a, s, out)
	} else {
		out = d.cor.close(d, TypeHarshCornering, out)
	}
	return out
}

func (d *Detector) closeHarsh(out []Event) []Event {
	out = d.acc.close(d, TypeHarshAcceleration, out)
	out = d.brk.close(d, TypeHarshBraking, out)
	return d.cor.close(d, TypeHarshCornering, out)
}

func (d *Detector) closeAll(out []Event) []Event {
	out = d.closeHarsh(out)
	out = d.spd.close(d, out)
	return d.idle.close(d, out)
}

// speeding judges s against the limit where it is: its matched road's,
// else the configured one (none: no speeding). An episode runs under one
// limit: where the limit changes it ends, and one under the new limit
// may start at once.
func (d *Detector) speeding(s *sample, out []Event) []Event {
	limit := s.roadKmh
	if limit == 0 {
		limit = d.t.SpeedLimitKmh
	}
	e := &d.spd
	if e.active && limit != e.limit {
		out = e.close(d, out)
	}
	if !s.hasV || limit == 0 {
		return out
	}
	start, cont := d.speedBounds(limit)
	v := s.v - s.sv // the speed we are sure of
	switch {
	case !e.active && v > start:
		*e = speedingEpisode{active: true, start: s.t, last: s.t, lat: s.latDeg, lon: s.lonDeg, max: s.v, maxSD: s.sv,
			limit: limit, roadType: s.roadType, road: s.roadKmh}
	case e.active && v > cont:
		e.last = s.t
		if s.v > e.max {
			e.max, e.maxSD = s.v, s.sv
		}
	case e.active:
		out = e.close(d, out)
	}
	return out
}

func (d *Detector) idling(s *sample, out []Event) []Event {
	if !s.hasV {
		return out
	}
	e := &d.idle
	switch {
	case s.still && !e.active:
		*e = idleEpisode{active: true, start: s.t, last: s.t, lat: s.latDeg, lon: s.lonDeg, roadType: s.roadType, road: s.roadKmh}
		e.count(s.reportedV)
	case s.still:
		e.last = s.t
		e.count(s.reportedV)
	case e.active:
		out = e.close(d, out)
	}
	return out
}
