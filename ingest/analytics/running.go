package analytics

import (
	"math"
	"slices"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/stamp"
)

// Limits of the distance filter; docs/analytics.md explains each.
const (
	MaxAccuracyM     = detect.DefaultMaxAccuracyM // worse points add no distance
	unknownAccuracyM = 5.0                        // assumed when a point reports none
	maxPlausibleKmh  = 250.0                      // jump filter and derived speeds
	maxReportedKmh   = 300.0                      // a reported speed above is ignored
	maxJumps         = 3                          // jumps in a row before believing them
	stationaryKmh    = detect.DefaultIdleSpeedKmh // reported speeds under this: standing
	confirmFactor    = 3.0                        // moves under 3× the allowance need a second point
	derivedSpeedSpan = 10 * time.Second           // window of the speed derived from positions
	highSpeedKneeKmh = 90.0                       // fuel rises with speed above this
)

// Running accumulates the analytics of one trip. The zero value is an empty
// trip. Feed points in timestamp order.
type Running struct {
	locations, events int
	harshAccel        int
	harshBrake        int
	harshCorner       int
	speeding          int

	distanceM       float64
	highSpeedExtraM float64 // Σ d·max(0, (v/90)²−1), for the fuel model
	maxSpeedKmh     float64
	speedSeen       bool // a point reported a speed, or two gave one: maxSpeedKmh was measured
	idleS           float64
	speedingS       float64
	safetyPoints    float64 // severity-weighted events, see docs
	ecoPoints       float64 // severity-weighted harsh accelerations and brakings

	first, last time.Time // times of the first and newest points
	lastPoint   detect.Point
	pauses      []interval // sorted, disjoint; shared between copies, never written in place

	anchor      fix // last point counted in the distance
	pending     fix // a departure from the anchor awaiting confirmation
	speedAnchor fix // start of the window of the derived speed
	jumps       int
	broken      bool // a pause happened: the next point starts a new chain
}

type interval struct{ from, to time.Time }

// fix is a point as the distance filter keeps it.
type fix struct {
	ok       bool
	t        time.Time
	ts       stamp.Stamp // t, for cheap differences
	lat, lon float64     // degrees
	cosLat   float64
	acc      float64 // m
	speed    float64 // km/h, valid if hasSpeed
	hasSpeed bool
}

// distanceTo is the haversine distance from a to b, in meters.
func (a *fix) distanceTo(b *fix) float64 {
	return geo.DistanceRad((b.lat-a.lat)*geo.Degree, (b.lon-a.lon)*geo.Degree, a.cosLat, b.cosLat)
}

// Add counts the next point of the trip. Points should come in timestamp
// order: a point older than the newest is counted in locations_count and
// nothing else. Points with invalid coordinates are ignored. Add does not
// allocate.
func (r *Running) Add(p detect.Point) {
	if !(p.Lat >= -90 && p.Lat <= 90 && p.Lon >= -180 && p.Lon <= 180) {
		return
	}
	r.locations++
	if r.locations == 1 || p.Time.Before(r.first) {
		r.first = p.Time
	}
	if r.locations > 1 && p.Time.Before(r.last) {
		return
	}
	r.last = p.Time
	r.lastPoint = p

	acc := p.Accuracy
	switch {
	case acc > MaxAccuracyM || math.IsInf(acc, 1):
		return
	case !(acc > 0):
		acc = unknownAccuracyM
	}
	f := fix{ok: true, t: p.Time, ts: stamp.Of(p.Time), lat: p.Lat, lon: p.Lon, cosLat: math.Cos(p.Lat * geo.Degree), acc: acc}
	if p.HasSpeed && p.Speed >= 0 && p.Speed <= maxReportedKmh {
		f.speed, f.hasSpeed = p.Speed, true
		r.maxSpeedKmh = math.Max(r.maxSpeedKmh, p.Speed)
		r.speedSeen = true
	}

	if !r.anchor.ok || r.broken {
		r.restart(f)
		return
	}
	dt := f.ts.Sub(r.anchor.ts).Seconds()
	if dt <= 0 {
		return
	}
	d := r.anchor.distanceTo(&f)
	allow := r.anchor.acc + f.acc
	if (d-allow)/dt > maxPlausibleKmh/3.6 {
		if r.jumps++; r.jumps >= maxJumps {
			r.restart(f)
		}
		return
	}
	r.jumps = 0
	r.deriveSpeed(&f)
	switch {
	case d <= allow:
		r.pending.ok = false // jitter; a pending departure was an outlier
	case r.anchor.stationary() && f.stationary():
		// parked
	case f.moving() || d > confirmFactor*allow:
		// Reported motion, or a move too large to be noise.
		r.pending.ok = false
		r.count(&r.anchor, &f, d)
		r.anchor = f
	case r.pending.ok:
		// Two points in a row away from the anchor: the vehicle left.
		r.count(&r.anchor, &r.pending, r.anchor.distanceTo(&r.pending))
		r.count(&r.pending, &f, r.pending.distanceTo(&f))
		r.anchor, r.pending.ok = f, false
	default:
		r.pending = f
	}
}

// count adds the segment a→b of length d.
func (r *Running) count(a, b *fix, d float64) {
	r.distanceM += d
	v := segmentKmh(a, b, d, b.ts.Sub(a.ts).Seconds())
	if v > highSpeedKneeKmh {
		q := v / highSpeedKneeKmh
		r.highSpeedExtraM += d * (q*q - 1)
	}
}

// pendingM is the length of the unconfirmed segment to the pending point.
func (r *Running) pendingM() float64 {
	if !r.pending.ok || !r.anchor.ok {
		return 0
	}
	return r.anchor.distanceTo(&r.pending)
}

func (r *Running) restart(f fix) {
	r.anchor, r.speedAnchor = f, f
	r.pending.ok = false
	r.jumps = 0
	r.broken = false
}

// deriveSpeed updates the maximum speed from positions, over windows of at
// least derivedSpeedSpan, for points that report no speed.
func (r *Running) deriveSpeed(f *fix) {
	dt := f.ts.Sub(r.speedAnchor.ts)
	if dt < derivedSpeedSpan {
		return
	}
	if !f.hasSpeed {
		d := r.speedAnchor.distanceTo(f)
		if d > r.speedAnchor.acc+f.acc {
			if v := d / dt.Seconds() * 3.6; v <= maxPlausibleKmh {
				r.maxSpeedKmh = math.Max(r.maxSpeedKmh, v)
				r.speedSeen = true
			}
		}
	}
	r.speedAnchor = *f
}

// stationary: the fix reports standing still; moving: it reports motion.
// A fix without a speed is neither.
func (f *fix) stationary() bool { return f.hasSpeed && f.speed < stationaryKmh }
func (f *fix) moving() bool     { return f.hasSpeed && f.speed >= stationaryKmh }

// segmentKmh is the speed over a counted segment: the mean of the reported
// speeds at its ends, the one reported, or distance over time.
func segmentKmh(a, b *fix, d, dt float64) float64 {
	switch {
	case a.hasSpeed && b.hasSpeed:
		return (a.speed + b.speed) / 2
	case b.hasSpeed:
		return b.speed
	case a.hasSpeed:
		return a.speed
	}
	return math.Min(d/dt*3.6, maxPlausibleKmh)
}

// AddEvent counts an event of the trip's Detector.
func (r *Running) AddEvent(e detect.Event) {
	r.events++
	dur := eventSeconds(e)
	w := severityWeight(e.Severity)
	r.safetyPoints += SafetyPoints(e)
	switch e.Type {
	case detect.TypeHarshAcceleration:
		r.harshAccel++
		r.ecoPoints += w
	case detect.TypeHarshBraking:
		r.harshBrake++
		r.ecoPoints += w
	case detect.TypeHarshCornering:
		r.harshCorner++
	case detect.TypeSpeeding:
		r.speeding++
		r.speedingS += dur
	case detect.TypeIdle:
		r.idleS += dur
	}
}

// eventSeconds is e's duration, 0 when it is not a finite positive
// number.
func eventSeconds(e detect.Event) float64 {
	dur := e.Metrics.DurationSeconds
	if !(dur > 0) || math.IsInf(dur, 1) {
		return 0
	}
	return dur
}

// SafetyPoints is what e takes off its trip's safety score
// (docs/analytics.md): its severity's weight for a harsh event, the
// weight growing with the duration for speeding, 0 for idling, which
// costs the eco score only.
func SafetyPoints(e detect.Event) float64 {
	w := severityWeight(e.Severity)
	switch e.Type {
	case detect.TypeHarshAcceleration, detect.TypeHarshBraking, detect.TypeHarshCornering:
		return w
	case detect.TypeSpeeding:
		return w * (1 + math.Min(eventSeconds(e), speedingCap)/speedingUnit)
	}
	return 0
}

// SafetyScore is the safety score of a trip of km (the track's length)
// whose events add up to points of SafetyPoints.
func SafetyScore(points, km float64) float64 {
	return 100 * math.Exp(-points/math.Max(km, scoreFloorKm))
}

// Pause records that the trip was paused from from to to. The pause is left
// out of the duration, and no distance is counted from the last point before
// the next Add to it.
func (r *Running) Pause(from, to time.Time) {
	r.broken = true
	if !to.After(from) {
		return
	}
	// A new slice every time: copies of a Running share the old one.
	ps := append(slices.Clone(r.pauses), interval{from, to})
	slices.SortFunc(ps, func(a, b interval) int { return a.from.Compare(b.from) })
	merged := ps[:1]
	for _, p := range ps[1:] {
		last := &merged[len(merged)-1]
		if p.from.After(last.to) {
			merged = append(merged, p)
		} else if p.to.After(last.to) {
			last.to = p.to
		}
	}
	r.pauses = merged
}

// pausedWithin is the paused time inside [from, to].
func (r *Running) pausedWithin(from, to time.Time) time.Duration {
	var sum time.Duration
	for _, p := range r.pauses {
		a, b := p.from, p.to
		if a.Before(from) {
			a = from
		}
		if b.After(to) {
			b = to
		}
		if b.After(a) {
			sum += b.Sub(a)
		}
	}
	return sum
}
