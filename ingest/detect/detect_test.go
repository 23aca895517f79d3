package detect_test

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
)

const sec = time.Second

// jitter is the GPS noise of the noise tests: ±5 m, ±2 km/h, ±3°, 2 % wild
// fixes with bad accuracy.
func jitter(seed uint64) noise {
	return noise{seed: seed, posM: 5, speedKmh: 2, headingDeg: 3, badShare: 0.02, accuracyM: 5}
}

func TestSmoothDriveHasNoEvents(t *testing.T) {
	th := detect.Thresholds{SpeedLimitKmh: 90}
	if got := totalDur(smoothDrive()); got != 20*time.Minute {
		t.Fatalf("smooth drive lasts %v, want 20m", got)
	}
	cases := []struct {
		name string
		step time.Duration
		n    noise
	}{
		{"clean 1Hz", sec, noise{}},
		{"clean 5Hz", 200 * time.Millisecond, noise{}},
		{"clean 0.2Hz", 5 * sec, noise{}},
		{"jitter seed 1", sec, jitter(1)},
		{"jitter seed 2", sec, jitter(2)},
		{"jitter seed 3", sec, jitter(3)},
		{"jitter 2Hz", 500 * time.Millisecond, jitter(4)},
		{"jitter 10Hz", 100 * time.Millisecond, jitter(5)},
		{"jitter no speed, no heading", sec, func() noise { n := jitter(6); n.noSpeed, n.noHeading = true, true; return n }()},
		{"jitter no heading", sec, func() noise { n := jitter(7); n.noHeading = true; return n }()},
		{"jitter, accuracy not reported", sec, func() noise { n := jitter(8); n.accuracyM = 0; return n }()},
		{"jitter ±10 m, no speed", sec, noise{seed: 9, posM: 10, accuracyM: 10, noSpeed: true, noHeading: true, badShare: 0.05}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pts := track(c.step, c.n, smoothDrive()...)
			if evs := feed(th, pts); len(evs) != 0 {
				t.Fatalf("%d events on a smooth drive, want none; first: %+v", len(evs), evs[0])
			}
		})
	}
}

// one returns the only event of evs, failing unless there is exactly one.
func one(t *testing.T, evs []detect.Event, typ string) detect.Event {
	t.Helper()
	if len(evs) != 1 || evs[0].Type != typ {
		t.Fatalf("got %d events %+v, want exactly one %s", len(evs), evs, typ)
	}
	return evs[0]
}

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %.4f, want %.4f ± %.4f", what, got, want, tol)
	}
}

func TestHarshEvents(t *testing.T) {
	cruise := func(kmh float64) []leg {
		return []leg{{10 * sec, 0, 0}, {30 * sec, kmh, 0}, {30 * sec, kmh, 0}}
	}
	cases := []struct {
		name     string
		step     time.Duration
		n        noise
		legs     []leg
		typ      string
		g        float64 // peak acceleration, g
		gTol     float64
		change   float64 // speed change, km/h
		dur      float64 // seconds
		severity string
	}{
		{
			name: "hard stop 60→0 in 3 s", step: sec,
			legs: append(cruise(60), leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0}),
			typ:  detect.TypeHarshBraking, g: -0.567, gTol: 0.01, change: -60, dur: 3, severity: detect.SeverityModerate,
		},
		{
			name: "hard stop with jitter", step: sec, n: noise{seed: 11, posM: 5, speedKmh: 2, headingDeg: 3, accuracyM: 5},
			legs: append(cruise(60), leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0}),
			typ:  detect.TypeHarshBraking, g: -0.567, gTol: 0.12, change: -60, dur: 3, severity: "",
		},
		{
			name: "hard stop at 5 Hz", step: 200 * time.Millisecond,
			legs: append(cruise(60), leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0}),
			typ:  detect.TypeHarshBraking, g: -0.567, gTol: 0.01, change: -60, dur: 3, severity: detect.SeverityModerate,
		},
		{
			name: "hard launch 0→50 in 3 s", step: sec,
			legs: []leg{{10 * sec, 0, 0}, {3 * sec, 50, 0}, {30 * sec, 50, 0}, {30 * sec, 0, 0}},
			typ:  detect.TypeHarshAcceleration, g: 0.472, gTol: 0.01, change: 50, dur: 3, severity: detect.SeverityModerate,
		},
		{
			name: "sharp turn 90° in 3 s at 40 km/h", step: sec,
			legs: append(cruise(40), leg{3 * sec, 40, 90}, leg{30 * sec, 40, 0}),
			typ:  detect.TypeHarshCornering, g: 0.593, gTol: 0.01, change: 0, dur: 3, severity: detect.SeverityHigh,
		},
		{
			name: "sharp turn with jitter", step: sec, n: noise{seed: 12, posM: 5, speedKmh: 2, headingDeg: 3, accuracyM: 5},
			legs: append(cruise(40), leg{3 * sec, 40, 90}, leg{30 * sec, 40, 0}),
			typ:  detect.TypeHarshCornering, g: 0.593, gTol: 0.15, change: 0, dur: 3, severity: "",
		},
		{
			name: "hard stop from accurate positions only", step: sec, n: noise{accuracyM: 0.5, noSpeed: true, noHeading: true},
			legs: append(cruise(60), leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0}),
			// Chord speeds smooth the stop: a lower peak, a shorter episode.
			typ: detect.TypeHarshBraking, g: -0.47, gTol: 0.06, change: -33, dur: 2, severity: detect.SeverityModerate,
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := one(t, feed(detect.Thresholds{}, track(c.step, c.n, c.legs...)), c.typ)
			near(t, "acceleration_g", e.Metrics.AccelerationG, c.g, c.gTol)
			near(t, "speed_change_kmh", e.Metrics.SpeedChangeKmh, c.change, 5)
			near(t, "duration_seconds", e.Metrics.DurationSeconds, c.dur, 1.01)
			if c.severity != "" && e.Severity != c.severity {
				t.Errorf("severity %s, want %s", e.Severity, c.severity)
			}
			if e.Confidence <= 0 || e.Confidence > 1 {
				t.Errorf("confidence %v out of (0, 1]", e.Confidence)
			}
			if got := e.End.Sub(e.Start).Seconds(); got != e.Metrics.DurationSeconds {
				t.Errorf("End-Start %v != duration %v", got, e.Metrics.DurationSeconds)
			}
			if e.Lat == 0 || e.Lon == 0 {
				t.Errorf("no location: %+v", e)
			}
		})
	}
}

func TestSeverityBands(t *testing.T) {
	brake := func(d time.Duration) []leg {
		return []leg{{10 * sec, 0, 0}, {20 * sec, 60, 0}, {10 * sec, 60, 0}, {d, 0, 0}, {20 * sec, 0, 0}}
	}
	launch := func(d time.Duration) []leg {
		return []leg{{10 * sec, 0, 0}, {d, 40, 0}, {20 * sec, 40, 0}}
	}
	turn := func(deg float64) []leg {
		return []leg{{10 * sec, 0, 0}, {20 * sec, 40, 0}, {10 * sec, 40, 0}, {3 * sec, 40, deg}, {20 * sec, 40, 0}}
	}
	cases := []struct {
		name     string
		legs     []leg
		typ      string
		severity string
	}{
		{"braking 0.57 g", brake(3 * sec), detect.TypeHarshBraking, detect.SeverityModerate},
		{"braking 0.68 g", brake(2500 * time.Millisecond), detect.TypeHarshBraking, detect.SeverityHigh},
		{"braking 0.85 g", brake(2 * sec), detect.TypeHarshBraking, detect.SeverityCritical},
		{"acceleration 0.42 g", launch(2700 * time.Millisecond), detect.TypeHarshAcceleration, detect.SeverityModerate},
		{"acceleration 0.57 g", launch(2 * sec), detect.TypeHarshAcceleration, detect.SeverityHigh},
		{"acceleration 0.76 g", launch(1500 * time.Millisecond), detect.TypeHarshAcceleration, detect.SeverityCritical},
		{"cornering 0.46 g", turn(70), detect.TypeHarshCornering, detect.SeverityModerate},
		{"cornering 0.59 g", turn(90), detect.TypeHarshCornering, detect.SeverityHigh},
		{"cornering 0.79 g", turn(120), detect.TypeHarshCornering, detect.SeverityCritical},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := one(t, feed(detect.Thresholds{}, track(sec, noise{}, c.legs...)), c.typ)
			if e.Severity != c.severity {
				t.Errorf("severity %s at %.3f g, want %s", e.Severity, e.Metrics.AccelerationG, c.severity)
			}
		})
	}

	speeding := []struct {
		over     float64
		severity string
	}{{12, detect.SeverityModerate}, {20, detect.SeverityHigh}, {40, detect.SeverityCritical}}
	for _, c := range speeding {
		legs := []leg{{10 * sec, 0, 0}, {60 * sec, 50 + c.over, 0}, {60 * sec, 50 + c.over, 0}}
		e := one(t, feed(detect.Thresholds{SpeedLimitKmh: 50}, track(sec, noise{}, legs...)), detect.TypeSpeeding)
		if e.Severity != c.severity {
			t.Errorf("speeding %v over: severity %s, want %s", c.over, e.Severity, c.severity)
		}
	}

	idle := []struct {
		d        time.Duration
		severity string
	}{{5 * time.Minute, detect.SeverityModerate}, {15 * time.Minute, detect.SeverityHigh}, {40 * time.Minute, detect.SeverityCritical}}
	for _, c := range idle {
		e := one(t, feed(detect.Thresholds{}, track(sec, noise{}, leg{c.d, 0, 0})), detect.TypeIdle)
		if e.Severity != c.severity {
			t.Errorf("idle %v: severity %s, want %s", c.d, e.Severity, c.severity)
		}
	}
}

func TestSpeeding(t *testing.T) {
	legs := []leg{
		{10 * sec, 0, 0}, {20 * sec, 45, 0}, {60 * sec, 45, 0},
		{4 * sec, 70, 0}, {300 * sec, 70, 0}, {4 * sec, 45, 0},
		{60 * sec, 45, 0}, {20 * sec, 0, 0},
	}
	for seed := uint64(1); seed <= 5; seed++ {
		n := noise{seed: seed, posM: 5, speedKmh: 2, headingDeg: 3, badShare: 0.02, accuracyM: 5}
		e := one(t, feed(detect.Thresholds{SpeedLimitKmh: 50}, track(sec, n, legs...)), detect.TypeSpeeding)
		near(t, "duration_seconds", e.Metrics.DurationSeconds, 300, 6)
		near(t, "excess_speed_kmh", e.Metrics.ExcessSpeedKmh, 20, 2.5)
		near(t, "actual_speed_kmh", e.Metrics.ActualSpeedKmh, 70, 2.5)
		if e.Metrics.SpeedLimitKmh != 50 {
			t.Errorf("speed_limit_kmh %v, want 50", e.Metrics.SpeedLimitKmh)
		}
		if e.Metrics.ActualSpeedKmh-e.Metrics.SpeedLimitKmh != e.Metrics.ExcessSpeedKmh {
			t.Errorf("excess %v != actual-limit", e.Metrics.ExcessSpeedKmh)
		}
		if e.Confidence < 0.9 {
			t.Errorf("confidence %v with reported speed, want ≥ 0.9", e.Confidence)
		}
	}

	t.Run("within tolerance", func(t *testing.T) {
		legs := []leg{{10 * sec, 0, 0}, {20 * sec, 56, 0}, {300 * sec, 56, 0}}
		if evs := feed(detect.Thresholds{SpeedLimitKmh: 50}, track(sec, noise{}, legs...)); len(evs) != 0 {
			t.Fatalf("56 in a 50 zone with the default 8 km/h tolerance: %+v", evs)
		}
		e := one(t, feed(detect.Thresholds{SpeedLimitKmh: 50, OverLimitKmh: -1}, track(sec, noise{}, legs...)), detect.TypeSpeeding)
		near(t, "excess_speed_kmh", e.Metrics.ExcessSpeedKmh, 6, 0.01)
	})
	t.Run("shorter than the minimum", func(t *testing.T) {
		legs := []leg{{10 * sec, 0, 0}, {20 * sec, 45, 0}, {2 * sec, 70, 0}, {6 * sec, 70, 0}, {3 * sec, 45, 0}, {30 * sec, 45, 0}}
		if evs := feed(detect.Thresholds{SpeedLimitKmh: 50}, track(sec, noise{}, legs...)); len(evs) != 0 {
			t.Fatalf("8 s of speeding: %+v", evs)
		}
	})
	t.Run("open at trip end, closed by Flush", func(t *testing.T) {
		d := detect.New(detect.Thresholds{SpeedLimitKmh: 50})
		var out []detect.Event
		for _, p := range track(sec, noise{}, leg{20 * sec, 80, 0}, leg{60 * sec, 80, 0}) {
			out = d.Feed(p, out)
		}
		if len(out) != 0 {
			t.Fatalf("events before Flush: %+v", out)
		}
		one(t, d.Flush(out), detect.TypeSpeeding)
	})
	t.Run("no limit, no speeding", func(t *testing.T) {
		if evs := feed(detect.Thresholds{}, track(sec, noise{}, leg{20 * sec, 80, 0}, leg{60 * sec, 80, 0})); len(evs) != 0 {
			t.Fatalf("%+v", evs)
		}
	})
	t.Run("a long gap splits the episode", func(t *testing.T) {
		pts := track(sec, noise{}, leg{20 * sec, 80, 0}, leg{180 * sec, 80, 0})
		pts = append(pts[:60:60], pts[150:]...) // 90 s without points
		evs := feed(detect.Thresholds{SpeedLimitKmh: 50}, pts)
		if len(evs) != 2 {
			t.Fatalf("got %d events, want 2: %+v", len(evs), evs)
		}
	})
}

func TestIdle(t *testing.T) {
	legs := []leg{
		{10 * sec, 0, 0}, {20 * sec, 50, 0}, {60 * sec, 50, 0}, {20 * sec, 0, 0},
		{5 * time.Minute, 0, 0},
		{20 * sec, 50, 0}, {60 * sec, 50, 0},
	}
	for _, c := range []struct {
		name string
		n    noise
	}{
		{"clean", noise{}},
		{"jitter", jitter(21)},
		{"positions only", noise{seed: 22, posM: 5, accuracyM: 5, noSpeed: true, noHeading: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := one(t, feed(detect.Thresholds{}, track(sec, c.n, legs...)), detect.TypeIdle)
			near(t, "duration_seconds", e.Metrics.DurationSeconds, 300, 8)
			near(t, "latitude", e.Lat, startLat+0.01, 0.0005) // 1111 m north
		})
	}
	t.Run("red light", func(t *testing.T) {
		legs := []leg{{20 * sec, 50, 0}, {20 * sec, 0, 0}, {2 * time.Minute, 0, 0}, {20 * sec, 50, 0}}
		if evs := feed(detect.Thresholds{}, track(sec, noise{}, legs...)); len(evs) != 0 {
			t.Fatalf("%+v", evs)
		}
	})
	t.Run("disabled", func(t *testing.T) {
		if evs := feed(detect.Thresholds{IdleDisabled: true}, track(sec, noise{}, legs...)); len(evs) != 0 {
			t.Fatalf("%+v", evs)
		}
	})
}

// scenario is a drive with every kind of event.
func scenario() []detect.Point {
	return track(sec, jitter(31),
		leg{4 * time.Minute, 0, 0}, // idle
		leg{3 * sec, 50, 0},        // hard launch
		leg{30 * sec, 50, 0}, leg{10 * sec, 80, 0},
		leg{2 * time.Minute, 80, 0}, // speeding (limit 50)
		leg{10 * sec, 40, 0}, leg{10 * sec, 40, 0},
		leg{3 * sec, 40, 90}, // sharp turn
		leg{30 * sec, 40, 0},
		leg{2 * sec, 0, 0}, // hard stop
		leg{30 * sec, 0, 0},
	)
}

func TestScenarioFindsEveryType(t *testing.T) {
	evs := feed(detect.Thresholds{SpeedLimitKmh: 50}, scenario())
	var got []string
	for _, e := range evs {
		got = append(got, e.Type)
	}
	want := []string{detect.TypeIdle, detect.TypeHarshAcceleration, detect.TypeSpeeding, detect.TypeHarshCornering, detect.TypeHarshBraking}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("types %v, want %v", got, want)
	}
}

func TestBatchesGiveTheSameEvents(t *testing.T) {
	th := detect.Thresholds{SpeedLimitKmh: 50}
	pts := scenario()
	want := feed(th, pts)
	rng := rand.New(rand.NewPCG(7, 7))
	for round := 0; round < 20; round++ {
		d := detect.New(th)
		var got []detect.Event
		for i := 0; i < len(pts); {
			n := 1 + rng.IntN(1000)
			if round%4 == 0 {
				n = 1 + rng.IntN(5)
			}
			var batch []detect.Event // a fresh response per upload
			for _, p := range pts[i:min(i+n, len(pts))] {
				batch = d.Feed(p, batch)
			}
			got = append(got, batch...)
			i += n
		}
		got = d.Flush(got)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("round %d: batches gave %+v, one call gave %+v", round, got, want)
		}
	}
}

func TestThresholds(t *testing.T) {
	stop := append([]leg{{10 * sec, 0, 0}, {30 * sec, 60, 0}, {10 * sec, 60, 0}}, leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0})
	cases := []struct {
		name string
		th   detect.Thresholds
		pts  []detect.Point
		want int
	}{
		{"0.57 g stop, default 0.40", detect.Thresholds{}, track(sec, noise{}, stop...), 1},
		{"0.57 g stop, device -0.6", detect.Thresholds{BrakingG: -0.6}, track(sec, noise{}, stop...), 0},
		{"0.57 g stop, device -0.3", detect.Thresholds{BrakingG: -0.3}, track(sec, noise{}, stop...), 1},
		{"harsh disabled", detect.Thresholds{HarshDisabled: true}, track(sec, noise{}, stop...), 0},
		{"min duration 4 s", detect.Thresholds{MinHarshDuration: 4 * sec}, track(sec, noise{}, stop...), 0},
		{"bad accuracy everywhere", detect.Thresholds{}, track(sec, noise{accuracyM: 45}, stop...), 0},
		{"bad accuracy allowed", detect.Thresholds{MaxAccuracyM: 50}, track(sec, noise{accuracyM: 45}, stop...), 1},
		{"samples 12 s apart", detect.Thresholds{}, track(12*sec, noise{}, stop...), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := feed(c.th, c.pts); len(got) != c.want {
				t.Fatalf("got %d events %+v, want %d", len(got), got, c.want)
			}
		})
	}
}

func TestIgnoredPoints(t *testing.T) {
	pts := track(sec, noise{}, leg{10 * sec, 0, 0}, leg{30 * sec, 60, 0}, leg{10 * sec, 60, 0}, leg{3 * sec, 0, 0}, leg{20 * sec, 0, 0})
	want := feed(detect.Thresholds{}, pts)
	if len(want) != 1 {
		t.Fatalf("baseline: %+v", want)
	}
	var messy []detect.Point
	for i, p := range pts {
		messy = append(messy, p)
		if i%7 == 3 {
			messy = append(messy, p)                                                // duplicate
			messy = append(messy, detect.Point{Time: p.Time.Add(-5 * sec), Lat: 1}) // late
			messy = append(messy, detect.Point{Time: p.Time.Add(50 * time.Millisecond), Lat: math.NaN()})
			messy = append(messy, detect.Point{Time: p.Time.Add(60 * time.Millisecond), Lat: 91, Lon: 0})
		}
		if i == 20 || i == 40 { // a single wild fix that claims to be accurate
			q := p
			q.Time = p.Time.Add(500 * time.Millisecond)
			q.Lat += 0.05
			q.Accuracy = 3
			messy = append(messy, q)
		}
	}
	if got := feed(detect.Thresholds{}, messy); !reflect.DeepEqual(got, want) {
		t.Fatalf("messy track gave %+v, want %+v", got, want)
	}
}

func TestFlushResets(t *testing.T) {
	d := detect.New(detect.Thresholds{})
	pts := track(sec, noise{}, leg{4 * time.Minute, 0, 0})
	var out []detect.Event
	for _, p := range pts {
		out = d.Feed(p, out)
	}
	out = d.Flush(out)
	one(t, out, detect.TypeIdle)
	if again := d.Flush(nil); len(again) != 0 {
		t.Fatalf("second Flush: %+v", again)
	}
	// The same Detector serves the next trip from scratch.
	out = out[:0]
	for _, p := range pts {
		out = d.Feed(p, out)
	}
	one(t, d.Flush(out), detect.TypeIdle)
}

func TestFeedDoesNotAllocate(t *testing.T) {
	pts := scenario()
	d := detect.New(detect.Thresholds{SpeedLimitKmh: 50})
	out := make([]detect.Event, 0, 16)
	allocs := testing.AllocsPerRun(5, func() {
		for _, p := range pts {
			out = d.Feed(p, out[:0])
		}
		out = d.Flush(out[:0])
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per trip, want 0", allocs)
	}
}

// TestRoadLimits: a point matched to a road is judged by that road's
// limit, not the configured one: 60 km/h through a 40 street is speeding
// with the street's limit and class; on an unmatched stretch the
// configured limit holds again; a change of limit ends the episode.
func TestRoadLimits(t *testing.T) {
	pts := track(sec, noise{}, leg{10 * sec, 60, 0}, leg{120 * sec, 60, 0})
	for i := range pts {
		if i < 60 {
			pts[i].RoadLimitKmh, pts[i].RoadType = 40, "residential"
		}
	}
	evs := feed(detect.Thresholds{SpeedLimitKmh: 100}, pts)
	e := one(t, evs, detect.TypeSpeeding)
	if e.Metrics.SpeedLimitKmh != 40 || e.RoadType != "residential" || e.RoadLimitKmh != 40 {
		t.Errorf("speeding judged by %v on %q (road %v), want 40 on residential", e.Metrics.SpeedLimitKmh, e.RoadType, e.RoadLimitKmh)
	}
	near(t, "excess_speed_kmh", e.Metrics.ExcessSpeedKmh, 20, 0.5)
	if e.End.Sub(e.Start) > 60*sec {
		t.Errorf("the episode ran %v, past the end of the 40 street", e.End.Sub(e.Start))
	}
	// a 30 street then a 50 one at 60: two episodes, one per limit
	for i := range pts {
		pts[i].RoadLimitKmh, pts[i].RoadType = 30, "residential"
		if i >= 60 {
			pts[i].RoadLimitKmh, pts[i].RoadType = 50, "secondary"
		}
	}
	evs = feed(detect.Thresholds{SpeedLimitKmh: 100, OverLimitKmh: -1}, pts)
	if len(evs) != 2 || evs[0].Metrics.SpeedLimitKmh != 30 || evs[1].Metrics.SpeedLimitKmh != 50 || evs[1].RoadType != "secondary" {
		t.Fatalf("events %+v, want speeding under 30 then under 50", evs)
	}
}
