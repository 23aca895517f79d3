package analytics_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
)

// TestSpeedMeasured: a trip measured a speed when a point reported one
// (0 km/h included) or two points far enough apart gave one; a single
// point without a speed measured none. The running state keeps it, and
// a state written before it was kept counts a maximum above 0 as
// measured.
func TestSpeedMeasured(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	roundTrip := func(r analytics.Running) analytics.Running {
		t.Helper()
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		var back analytics.Running
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		return back
	}
	var none analytics.Running
	none.Add(detect.Point{Time: t0, Lat: 40, Lon: -83})
	var still analytics.Running
	still.Add(detect.Point{Time: t0, Lat: 40, Lon: -83, HasSpeed: true})
	var derived analytics.Running
	derived.Add(detect.Point{Time: t0, Lat: 40, Lon: -83})
	derived.Add(detect.Point{Time: t0.Add(time.Minute), Lat: 40.01, Lon: -83})
	for _, c := range []struct {
		name string
		r    analytics.Running
		want bool
	}{{"one point without a speed", none, false}, {"a point at 0 km/h", still, true}, {"two points 1 km apart", derived, true}} {
		if got := c.r.Summary(analytics.Vehicle{}).SpeedMeasured; got != c.want {
			t.Errorf("%s: SpeedMeasured %v, want %v", c.name, got, c.want)
		}
		back := roundTrip(c.r)
		if got := back.Summary(analytics.Vehicle{}).SpeedMeasured; got != c.want {
			t.Errorf("%s, state read back: SpeedMeasured %v, want %v", c.name, got, c.want)
		}
	}
	for _, c := range []struct {
		state string
		want  bool
	}{{`{"v":1,"locations_count":1,"max_speed_kmh":0}`, false}, {`{"v":1,"locations_count":2,"max_speed_kmh":42.5}`, true}} {
		var r analytics.Running
		if err := json.Unmarshal([]byte(c.state), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.Summary(analytics.Vehicle{}).SpeedMeasured; got != c.want {
			t.Errorf("older state %s: SpeedMeasured %v, want %v", c.state, got, c.want)
		}
	}
}
