package detect_test

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
)

// leg is one piece of a generated drive: over dur the speed ramps linearly
// from the previous leg's end speed to kmh, and the heading turns by turn
// degrees (positive clockwise), also linearly.
type leg struct {
	dur  time.Duration
	kmh  float64
	turn float64
}

// noise perturbs a generated track.
type noise struct {
	seed       uint64
	posM       float64 // position error, uniform in a disc of this radius
	speedKmh   float64 // speed error, uniform in ±speedKmh, clamped at 0
	headingDeg float64 // heading error, uniform in ±headingDeg
	badShare   float64 // share of points replaced by a wild fix with bad accuracy
	accuracyM  float64 // reported accuracy of good points; 0 = not reported
	noSpeed    bool    // points carry no speed
	noHeading  bool    // points carry no heading
}

var t0 = time.Date(2025, 3, 14, 8, 0, 0, 0, time.UTC)

const (
	startLat, startLon = 52.37, 4.89
	earthR             = geo.EarthRadius
)

// track samples the drive every step, starting at t0 standing still at
// (startLat, startLon) heading North.
func track(step time.Duration, n noise, legs ...leg) []detect.Point {
	rng := rand.New(rand.NewPCG(n.seed, n.seed^0x9e3779b97f4a7c15))
	lat, lon := startLat, startLon
	v, h := 0.0, 0.0 // km/h, degrees
	var pts []detect.Point
	emit := func(t time.Duration) {
		p := detect.Point{Time: t0.Add(t), Lat: lat, Lon: lon, Accuracy: n.accuracyM}
		if n.posM > 0 {
			r := n.posM * math.Sqrt(rng.Float64())
			a := 2 * math.Pi * rng.Float64()
			p.Lat += r * math.Cos(a) / earthR * 180 / math.Pi
			p.Lon += r * math.Sin(a) / (earthR * math.Cos(lat*math.Pi/180)) * 180 / math.Pi
		}
		if !n.noSpeed {
			p.HasSpeed = true
			p.Speed = math.Max(0, v+n.speedKmh*(2*rng.Float64()-1))
		}
		if !n.noHeading {
			p.HasHeading = true
			p.Heading = math.Mod(h+n.headingDeg*(2*rng.Float64()-1)+720, 360)
		}
		if n.badShare > 0 && rng.Float64() < n.badShare {
			p.Accuracy = 50 + 450*rng.Float64()
			p.Lat += (2*rng.Float64() - 1) * 0.02
			p.Lon += (2*rng.Float64() - 1) * 0.02
		}
		pts = append(pts, p)
	}
	const sub = 10 * time.Millisecond // integration step
	var now time.Duration
	emit(0)
	for _, l := range legs {
		v0, h0 := v, h
		for el := sub; el <= l.dur; el += sub {
			f := float64(el) / float64(l.dur)
			vPrev := v
			v = v0 + (l.kmh-v0)*f
			h = h0 + l.turn*f
			d := (v + vPrev) / 2 / 3.6 * sub.Seconds()
			lat += d * math.Cos(h*math.Pi/180) / earthR * 180 / math.Pi
			lon += d * math.Sin(h*math.Pi/180) / (earthR * math.Cos(lat*math.Pi/180)) * 180 / math.Pi
			now += sub
			if now%step == 0 {
				emit(now)
			}
		}
	}
	return pts
}

// smoothDrive is 20 minutes of calm city and suburban driving: gentle
// starts and stops (under 0.15 g), bends under 0.15 g lateral, top speed 80
// km/h, stops of at most a minute.
func smoothDrive() []leg {
	return []leg{
		{10 * time.Second, 0, 0},
		{20 * time.Second, 45, 0},
		{60 * time.Second, 45, 0},
		{20 * time.Second, 45, 90},
		{40 * time.Second, 45, 0},
		{15 * time.Second, 0, 0},
		{45 * time.Second, 0, 0},
		{30 * time.Second, 70, 0},
		{120 * time.Second, 70, 0},
		{40 * time.Second, 70, -60},
		{15 * time.Second, 80, 0},
		{180 * time.Second, 80, 20},
		{30 * time.Second, 50, 0},
		{30 * time.Second, 50, 120},
		{90 * time.Second, 50, 0},
		{20 * time.Second, 0, 0},
		{60 * time.Second, 0, 0},
		{20 * time.Second, 40, 0},
		{25 * time.Second, 40, -90},
		{200 * time.Second, 55, 0},
		{15 * time.Second, 30, 0},
		{60 * time.Second, 30, 45},
		{20 * time.Second, 0, 0},
		{35 * time.Second, 0, 0},
	}
}

func totalDur(legs []leg) time.Duration {
	var d time.Duration
	for _, l := range legs {
		d += l.dur
	}
	return d
}

// feed runs pts through a fresh Detector in one sequence and flushes it.
func feed(th detect.Thresholds, pts []detect.Point) []detect.Event {
	d := detect.New(th)
	var out []detect.Event
	for _, p := range pts {
		out = d.Feed(p, out)
	}
	return d.Flush(out)
}
