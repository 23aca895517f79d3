package optimization

import (
	"math"
	"testing"

	"github.com/fleethub/fleethub/api"
)

// FuzzBuild: any body either fails to decode, or is refused naming its
// fields, or builds a problem the solver can take: matrix rows in range,
// entries finite and not negative, shifts that end after they start,
// windows in order, a time limit in (0, 60] s, capabilities within the
// vocabulary (no pallet on a bicycle or on foot), traffic restrictions
// only the three avoid keys, each true one in the avoid set, at most six
// breaks, in order, that an idle vehicle can all take inside their
// windows and its shift, cost models within range, real_time_traffic
// taken as sent, true when absent (the service refuses only true as
// sent where no roads can honour it),
// driver_preferences never true, 0 to 5 runner-up plans, priority
// weights not negative.
// Seeds are in testdata/fuzz/FuzzBuild.
func FuzzBuild(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var r Request
		if api.DecodeJSON(body, &r) != nil {
			return
		}
		b, bad := build(&r)
		if len(bad) > 0 {
			for k, v := range bad {
				if k == "" || v == "" {
					t.Fatalf("unnamed refusal %q: %q", k, v)
				}
			}
			return
		}
		pr := b.pr
		if len(pr.Vehicles) == 0 || len(pr.Stops) == 0 || b.timeLimit <= 0 || b.timeLimit.Seconds() > MaxTimeLimit {
			t.Fatalf("accepted %d vehicles, %d stops, limit %v", len(pr.Vehicles), len(pr.Stops), b.timeLimit)
		}
		if m := pr.Matrix; m != nil {
			if len(m.Km) != m.Size*m.Size || len(m.Minutes) != m.Size*m.Size {
				t.Fatalf("matrix of %d with %d and %d entries", m.Size, len(m.Km), len(m.Minutes))
			}
			for k := range m.Km {
				if !(m.Km[k] >= 0) || !(m.Minutes[k] >= 0) || math.IsInf(m.Km[k], 0) || math.IsInf(m.Minutes[k], 0) {
					t.Fatalf("entry %d: %v km, %v min", k, m.Km[k], m.Minutes[k])
				}
			}
			for _, s := range pr.Stops {
				if s.Loc < 0 || s.Loc >= m.Size {
					t.Fatalf("stop at row %d of %d", s.Loc, m.Size)
				}
			}
			for _, v := range pr.Vehicles {
				if v.StartLoc < 0 || v.StartLoc >= m.Size || v.EndLoc < 0 || v.EndLoc >= m.Size {
					t.Fatalf("vehicle rows %d, %d of %d", v.StartLoc, v.EndLoc, m.Size)
				}
			}
		}
		if c := r.Constraints; c != nil {
			for k, on := range c.TrafficRestrictions {
				if i := index0(avoidKeys, k); i < 0 || on != (b.avoid&avoidSets[i] != 0) {
					t.Fatalf("traffic restriction %s: %v accepted as %v", k, on, b.avoid)
				}
			}
		}
		if r.DriverPreferences {
			t.Fatal("driver_preferences true accepted")
		}
		if traffic := r.RealTimeTraffic == nil || *r.RealTimeTraffic; b.traffic != traffic || b.asked != (r.RealTimeTraffic != nil && traffic) {
			t.Fatalf("real_time_traffic %v built as %v (asked %v)", r.RealTimeTraffic, b.traffic, b.asked)
		}
		if b.alts < 0 || b.alts > MaxAlternatives {
			t.Fatalf("%d alternatives accepted", b.alts)
		}
		if w := pr.Weights; w.Time < 0 || w.Fuel < 0 || w.Cost < 0 {
			t.Fatalf("weights %+v", w)
		}
		known := uint64(1)<<len(Capabilities) - 1
		for i, v := range pr.Vehicles {
			if !(v.ShiftEnd > v.ShiftStart) {
				t.Fatalf("shift %v–%v", v.ShiftStart, v.ShiftEnd)
			}
			if v.Has&^known != 0 {
				t.Fatalf("vehicle capabilities %b beyond the vocabulary", v.Has)
			}
			if rv := r.Vehicles[i]; (rv.VehicleType == "bicycle" || rv.VehicleType == "pedestrian") && v.Has&(1<<3) != 0 {
				t.Fatalf("a %s provides pallet", rv.VehicleType)
			}
			if len(v.Breaks) > MaxBreaks {
				t.Fatalf("%d break windows accepted", len(v.Breaks))
			}
			ready := v.ShiftStart
			for k, br := range v.Breaks {
				ready = math.Max(ready, br.Start) + br.Minutes
				if !(br.Minutes > 0) || ready > math.Min(br.End, v.ShiftEnd) || k > 0 && br.Start < v.Breaks[k-1].Start {
					t.Fatalf("break %d of %v in %v–%v, shift %v–%v", k, br.Minutes, br.Start, br.End, v.ShiftStart, v.ShiftEnd)
				}
			}
			if c := v.Costs; c == nil || !(c.FuelPerKm >= 0 && c.PerKm >= 0 && c.PerHour >= 0) || c.FuelPerKm > 10 || c.PerKm > 1000 || c.PerHour > 1000 {
				t.Fatalf("cost model %+v", v.Costs)
			}
		}
		for _, s := range pr.Stops {
			if !(s.Late >= s.Early) || !(s.Service >= 0) || s.Priority < 0 || s.Priority > 3 {
				t.Fatalf("stop %+v", s)
			}
			if s.Needs&^known != 0 {
				t.Fatalf("stop needs %b beyond the vocabulary", s.Needs)
			}
		}
	})
}
