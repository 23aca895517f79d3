package analytics_test

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
)

var t0 = time.Date(2025, 3, 14, 8, 0, 0, 0, time.UTC)

const earthR = geo.EarthRadius

// drive is a straight drive north from (lat, lon) at kmh, one point a
// second for dur, starting at start.
type drive struct {
	start    time.Time
	lat, lon float64
	kmh      float64
	dur      time.Duration
	heading  float64 // degrees
}

// jitter perturbs points.
type jitter struct {
	seed     uint64
	posM     float64 // uniform in a disc of this radius
	squareM  float64 // uniform in ±squareM on each axis
	speedKmh float64 // reported speed ± this; negative: no speed
	accuracy float64
	badShare float64 // wild fixes with accuracy 50-500 m
}

func (d drive) points(j jitter) []detect.Point {
	rng := rand.New(rand.NewPCG(j.seed, 1))
	var pts []detect.Point
	for s := time.Duration(0); s <= d.dur; s += time.Second {
		m := d.kmh / 3.6 * s.Seconds()
		lat := d.lat + m*math.Cos(d.heading*math.Pi/180)/earthR*180/math.Pi
		lon := d.lon + m*math.Sin(d.heading*math.Pi/180)/(earthR*math.Cos(d.lat*math.Pi/180))*180/math.Pi
		p := detect.Point{Time: d.start.Add(s), Lat: lat, Lon: lon, Accuracy: j.accuracy}
		var dn, de float64
		if j.posM > 0 {
			r, a := j.posM*math.Sqrt(rng.Float64()), 2*math.Pi*rng.Float64()
			dn, de = r*math.Cos(a), r*math.Sin(a)
		}
		if j.squareM > 0 {
			dn, de = j.squareM*(2*rng.Float64()-1), j.squareM*(2*rng.Float64()-1)
		}
		p.Lat += dn / earthR * 180 / math.Pi
		p.Lon += de / (earthR * math.Cos(lat*math.Pi/180)) * 180 / math.Pi
		if j.speedKmh >= 0 { // devices that report speed report a heading too
			p.Speed, p.HasSpeed = math.Max(0, d.kmh+j.speedKmh*(2*rng.Float64()-1)), true
			p.Heading, p.HasHeading = d.heading, true
		}
		if j.badShare > 0 && rng.Float64() < j.badShare {
			p.Accuracy = 50 + 450*rng.Float64()
			p.Lat += 0.02 * (2*rng.Float64() - 1)
		}
		pts = append(pts, p)
	}
	return pts
}

func add(r *analytics.Running, pts []detect.Point) {
	for _, p := range pts {
		r.Add(p)
	}
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.6f, want %.6f ± %g", what, got, want, tol)
	}
}

func TestKnownDistances(t *testing.T) {
	p := func(sec int, lat, lon float64) detect.Point {
		return detect.Point{Time: t0.Add(time.Duration(sec) * time.Second), Lat: lat, Lon: lon}
	}
	cases := []struct {
		name string
		pts  []detect.Point
		km   float64
	}{
		{"0.01° of latitude", []detect.Point{p(0, 52, 4), p(60, 52.01, 4)}, 1.11195},
		{"0.01° of latitude in 10 steps", func() []detect.Point {
			var ps []detect.Point
			for i := 0; i <= 10; i++ {
				ps = append(ps, p(i*6, 52+float64(i)*0.001, 4))
			}
			return ps
		}(), 1.11195},
		{"0.01° of longitude on the equator", []detect.Point{p(0, 0, 10), p(60, 0, 10.01)}, 1.11195},
		{"0.02° of longitude at 60° N", []detect.Point{p(0, 60, 10), p(60, 60, 10.02)}, 1.11193},
		{"across the antimeridian", []detect.Point{p(0, 0, 179.995), p(60, 0, -179.995)}, 1.11195},
		{"1° of latitude", []detect.Point{p(0, 10, 20), p(3600, 11, 20)}, 111.195},
		{"there and back", []detect.Point{p(0, 52, 4), p(60, 52.01, 4), p(120, 52, 4)}, 2 * 1.11195},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r analytics.Running
			add(&r, c.pts)
			near(t, "distance_km", r.Summary(analytics.Vehicle{}).DistanceKm, c.km, 0.0005*c.km)
		})
	}
}

func TestDrivingDistanceWithJitter(t *testing.T) {
	d := drive{start: t0, lat: 52, lon: 4, kmh: 50, dur: 10 * time.Minute, heading: 30}
	want := 50.0 / 6 // km
	for _, j := range []jitter{
		{speedKmh: -1},
		{seed: 1, posM: 5, accuracy: 5, speedKmh: 2, badShare: 0.02},
		{seed: 2, posM: 5, speedKmh: -1},
		{seed: 3, squareM: 5, accuracy: 5, speedKmh: 2, badShare: 0.05},
	} {
		var r analytics.Running
		add(&r, d.points(j))
		s := r.Summary(analytics.Vehicle{})
		near(t, "distance_km", s.DistanceKm, want, 0.05*want)
		near(t, "avg_speed_kmh", s.AvgSpeedKmh, 50, 2.5)
		near(t, "duration_minutes", s.DurationMinutes, 10, 1e-9)
		if j.speedKmh < 0 {
			// Bound: (5 m + 5 m) over the 10 s window, 3.6 km/h.
			near(t, "max_speed_kmh (derived)", s.MaxSpeedKmh, 50, 3.6)
		} else {
			near(t, "max_speed_kmh", s.MaxSpeedKmh, 50, j.speedKmh+1e-9)
		}
	}
}

func TestParkedJitterAddsNoDistance(t *testing.T) {
	parked := drive{start: t0, lat: 52, lon: 4, dur: 10 * time.Minute}
	cases := []struct {
		name string
		j    jitter
		maxM float64
	}{
		{"5 m noise, 5 m accuracy, no speed", jitter{seed: 1, posM: 5, accuracy: 5, speedKmh: -1}, 0},
		{"5 m noise, accuracy unknown, no speed", jitter{seed: 2, posM: 5, speedKmh: -1}, 0},
		{"±5 m square noise, speed 0", jitter{seed: 3, squareM: 5, accuracy: 5}, 0},
		{"±8 m square noise, 5 m accuracy, speed 0", jitter{seed: 4, squareM: 8, accuracy: 5, badShare: 0.05}, 0},
		// Noise beyond the reported accuracy (corners of the square reach
		// 7.1 m) without a speed to tell parked from moving leaks a little:
		// over 200 seeds, 7.5 m on average, 87 m at worst.
		{"±5 m square noise, no speed", jitter{seed: 5, squareM: 5, accuracy: 5, speedKmh: -1}, 100},
		{"wild fixes with bad accuracy", jitter{seed: 6, posM: 3, accuracy: 3, speedKmh: -1, badShare: 0.1}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r analytics.Running
			add(&r, parked.points(c.j))
			s := r.Summary(analytics.Vehicle{})
			if m := s.DistanceKm * 1000; m > c.maxM {
				t.Fatalf("parked for 10 minutes: %.1f m, want ≤ %v", m, c.maxM)
			}
			if s.LocationsCount != 601 {
				t.Errorf("locations_count %d, want 601", s.LocationsCount)
			}
			if c.j.speedKmh < 0 && s.MaxSpeedKmh > 0 {
				t.Errorf("max_speed_kmh %v while parked", s.MaxSpeedKmh)
			}
		})
	}
}

func TestSlowMovementIsNotLost(t *testing.T) {
	// 4 km/h is 1.1 m a second, under the 10 m allowance: the anchor waits
	// until the vehicle clears it, then counts the whole way.
	var r analytics.Running
	add(&r, drive{start: t0, lat: 52, lon: 4, kmh: 4, dur: 10 * time.Minute}.points(jitter{accuracy: 5, speedKmh: -1}))
	near(t, "distance_km", r.Summary(analytics.Vehicle{}).DistanceKm, 4.0/6, 0.011)
}

func TestPauses(t *testing.T) {
	first := drive{start: t0, lat: 52, lon: 4, kmh: 36, dur: 200 * time.Second}                           // 2 km
	second := drive{start: t0.Add(500 * time.Second), lat: 52.1, lon: 4, kmh: 36, dur: 300 * time.Second} // 3 km, 11 km away
	t.Run("excluded from duration and distance", func(t *testing.T) {
		var r analytics.Running
		add(&r, first.points(jitter{speedKmh: -1}))
		r.Pause(t0.Add(200*time.Second), t0.Add(500*time.Second))
		add(&r, second.points(jitter{speedKmh: -1}))
		s := r.Summary(analytics.Vehicle{})
		near(t, "duration_minutes", s.DurationMinutes, 500.0/60, 1e-9)
		near(t, "distance_km", s.DistanceKm, 5, 0.001)
		near(t, "avg_speed_kmh", s.AvgSpeedKmh, 36, 0.01)
	})
	t.Run("without the pause the gap counts", func(t *testing.T) {
		var r analytics.Running
		add(&r, first.points(jitter{speedKmh: -1}))
		add(&r, second.points(jitter{speedKmh: -1}))
		s := r.Summary(analytics.Vehicle{})
		near(t, "duration_minutes", s.DurationMinutes, 800.0/60, 1e-9)
		if s.DistanceKm < 14 {
			t.Errorf("distance_km %v, want the 11 km gap counted", s.DistanceKm)
		}
	})
	t.Run("overlapping, repeated and trailing pauses", func(t *testing.T) {
		var r analytics.Running
		add(&r, first.points(jitter{speedKmh: -1}))
		r.Pause(t0.Add(300*time.Second), t0.Add(400*time.Second))
		r.Pause(t0.Add(200*time.Second), t0.Add(350*time.Second))
		r.Pause(t0.Add(200*time.Second), t0.Add(350*time.Second))
		r.Pause(t0.Add(450*time.Second), t0.Add(500*time.Second))
		r.Pause(t0.Add(790*time.Second), t0.Add(900*time.Second)) // stopped while paused
		r.Pause(t0.Add(900*time.Second), t0.Add(800*time.Second)) // backwards: ignored
		add(&r, second.points(jitter{speedKmh: -1}))
		s := r.Summary(analytics.Vehicle{})
		near(t, "duration_minutes", s.DurationMinutes, (800.0-200-50-10)/60, 1e-9)
	})
	t.Run("a copy does not see the pauses of the original", func(t *testing.T) {
		var r analytics.Running
		add(&r, first.points(jitter{speedKmh: -1}))
		r.Pause(t0.Add(10*time.Second), t0.Add(20*time.Second))
		c := r
		r.Pause(t0.Add(30*time.Second), t0.Add(40*time.Second))
		c.Pause(t0.Add(100*time.Second), t0.Add(150*time.Second))
		near(t, "original", r.Summary(analytics.Vehicle{}).DurationMinutes, 180.0/60, 1e-9)
		near(t, "copy", c.Summary(analytics.Vehicle{}).DurationMinutes, 140.0/60, 1e-9)
	})
}

func TestOutOfOrderAndInvalidPoints(t *testing.T) {
	var r analytics.Running
	pts := drive{start: t0, lat: 52, lon: 4, kmh: 36, dur: 100 * time.Second}.points(jitter{speedKmh: 0})
	add(&r, pts)
	want := r.Summary(analytics.Vehicle{})
	r.Add(detect.Point{Time: t0.Add(50 * time.Second), Lat: 10, Lon: 10}) // late
	r.Add(detect.Point{Time: t0.Add(200 * time.Second), Lat: math.NaN(), Lon: 4})
	r.Add(detect.Point{Time: t0.Add(200 * time.Second), Lat: 52, Lon: 181})
	got := r.Summary(analytics.Vehicle{})
	want.LocationsCount++ // the late point is counted, nothing else
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestJumpsAreIgnoredThenBelieved(t *testing.T) {
	pts := drive{start: t0, lat: 52, lon: 4, kmh: 36, dur: 100 * time.Second}.points(jitter{speedKmh: -1, accuracy: 5})
	var clean analytics.Running
	add(&clean, pts)

	var r analytics.Running
	for i, p := range pts {
		if i == 50 { // one wild fix claiming 3 m accuracy
			q := p
			q.Time, q.Lat, q.Accuracy = p.Time.Add(-500*time.Millisecond), p.Lat+0.1, 3
			r.Add(q)
		}
		r.Add(p)
	}
	near(t, "distance_km with one jump", r.Summary(analytics.Vehicle{}).DistanceKm, clean.Summary(analytics.Vehicle{}).DistanceKm, 1e-9)

	// A real relocation (say, a ferry with no fixes) is believed after three
	// points, without counting the jump.
	var m analytics.Running
	add(&m, pts)
	moved := drive{start: t0.Add(101 * time.Second), lat: 53, lon: 4, kmh: 36, dur: 100 * time.Second}.points(jitter{speedKmh: -1, accuracy: 5})
	add(&m, moved)
	near(t, "distance_km after a relocation", m.Summary(analytics.Vehicle{}).DistanceKm, 2-0.02, 0.002)
}

func TestEventCounts(t *testing.T) {
	var r analytics.Running
	for _, e := range []detect.Event{
		{Type: detect.TypeHarshAcceleration, Severity: detect.SeverityModerate},
		{Type: detect.TypeHarshBraking, Severity: detect.SeverityHigh},
		{Type: detect.TypeHarshBraking, Severity: detect.SeverityCritical},
		{Type: detect.TypeHarshCornering, Severity: detect.SeverityModerate},
		{Type: detect.TypeSpeeding, Severity: detect.SeverityHigh, Metrics: detect.Metrics{DurationSeconds: 300}},
		{Type: detect.TypeIdle, Severity: detect.SeverityModerate, Metrics: detect.Metrics{DurationSeconds: 240}},
		{Type: detect.TypeIdle, Severity: detect.SeverityModerate, Metrics: detect.Metrics{DurationSeconds: math.NaN()}},
		{Type: "geofence_entry"},
	} {
		r.AddEvent(e)
	}
	s := r.Summary(analytics.Vehicle{})
	got := [...]int{s.EventsCount, s.HarshAcceleration, s.HarshBraking, s.HarshCornering, s.Speeding}
	if want := [...]int{8, 1, 2, 1, 1}; got != want {
		t.Errorf("counts %v, want %v", got, want)
	}
	near(t, "idle_time_minutes", s.IdleTimeMinutes, 4, 1e-9)
}

func TestRunningJSONRoundTrip(t *testing.T) {
	pts := drive{start: t0, lat: 52, lon: 4, kmh: 100, dur: 20 * time.Minute, heading: 45}.points(
		jitter{seed: 9, posM: 5, accuracy: 5, speedKmh: 3, badShare: 0.03})
	events := []detect.Event{
		{Type: detect.TypeHarshBraking, Severity: detect.SeverityHigh, Metrics: detect.Metrics{DurationSeconds: 2}},
		{Type: detect.TypeSpeeding, Severity: detect.SeverityModerate, Metrics: detect.Metrics{DurationSeconds: 123.4}},
		{Type: detect.TypeIdle, Metrics: detect.Metrics{DurationSeconds: 200}},
	}
	var whole analytics.Running
	for i, p := range pts {
		whole.Add(p)
		if i == 400 {
			whole.Pause(p.Time.Add(100*time.Millisecond), p.Time.Add(200*time.Millisecond))
		}
		if i%300 == 0 {
			whole.AddEvent(events[i/300%len(events)])
		}
	}

	// The same trip, persisted and restored every 97 points.
	var r analytics.Running
	for i, p := range pts {
		if i%97 == 0 {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var back analytics.Running
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatalf("%v in %s", err, b)
			}
			if !reflect.DeepEqual(back.Summary(analytics.Vehicle{}), r.Summary(analytics.Vehicle{})) {
				t.Fatalf("point %d: summary changed by the round trip:\n%+v\n%+v", i, back.Summary(analytics.Vehicle{}), r.Summary(analytics.Vehicle{}))
			}
			r = back
		}
		r.Add(p)
		if i == 400 {
			r.Pause(p.Time.Add(100*time.Millisecond), p.Time.Add(200*time.Millisecond))
		}
		if i%300 == 0 {
			r.AddEvent(events[i/300%len(events)])
		}
	}
	got, want := r.Summary(analytics.Vehicle{}), whole.Summary(analytics.Vehicle{})
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("restored trip:\n%+v\nwant\n%+v", got, want)
	}
	if want.DistanceKm < 30 || want.EventsCount == 0 || want.FuelConsumedLiters == 0 {
		t.Fatalf("the trip is too small to test anything: %+v", want)
	}

	var empty analytics.Running
	b, _ := json.Marshal(empty)
	var back analytics.Running
	if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(back, empty) {
		t.Fatalf("empty round trip: %v, %+v (%s)", err, back, b)
	}
	if err := json.Unmarshal([]byte(`{"v":7}`), &back); !errors.Is(err, analytics.ErrStateVersion) {
		t.Fatalf("unknown version: %v", err)
	}
}

func TestAddDoesNotAllocate(t *testing.T) {
	pts := drive{start: t0, lat: 52, lon: 4, kmh: 60, dur: 10 * time.Minute}.points(jitter{seed: 1, posM: 5, accuracy: 5, speedKmh: 2, badShare: 0.02})
	allocs := testing.AllocsPerRun(5, func() {
		var r analytics.Running
		add(&r, pts)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per trip, want 0", allocs)
	}
}
