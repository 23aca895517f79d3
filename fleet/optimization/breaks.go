package optimization

import (
	"fmt"
	"math"

	"github.com/fleethub/fleethub/internal/vrp"
)

// BreakWindow is a vehicle's break: Duration minutes that begin at or
// after Start and end by End, taken where the vehicle is.
type BreakWindow struct {
	Start    string   `json:"start" required:"true" doc:"HH:MM or HH:MM:SS, as the request's other times"`
	End      string   `json:"end" required:"true" doc:"HH:MM or HH:MM:SS; the break ends by then"`
	Duration *float64 `json:"duration" required:"true" doc:"minutes, more than 0 and at most end minus start"`
}

// The default break rule of driver_break_requirements, the US hours of
// service rule (49 CFR 395.3(a)(3)(ii)): 30 minutes off driving before 8
// hours of driving, read with time on shift standing for driving time.
// The time on duty is the shift, or max_route_duration when that is
// shorter. Up to hosDriving of it needs no break. More takes hosBreak
// minutes beginning at most hosDriving after the shift starts and ending
// at least hosDriving before the latest return, so that neither the time
// before the break nor the time after it can hold more than hosDriving
// of driving; more than hosLongest leaves no such break and would need a
// second one, which only break_windows can give.
const (
	hosDriving = 8 * 60.0
	hosBreak   = 30.0
	hosLongest = 2*hosDriving + hosBreak
)

// MaxBreaks bounds a vehicle's break_windows.
const MaxBreaks = 6

// breaks sets vehicle f's breaks from its break_windows, or from the
// default rule when the constraints ask for breaks and it gives none.
func breaks(bad map[string]string, f string, v Vehicle, c *Constraints, fv *vrp.Vehicle) {
	switch {
	case len(v.BreakWindows) > MaxBreaks:
		bad[f+".break_windows"] = fmt.Sprintf("at most %d break windows per vehicle", MaxBreaks)
	case len(v.BreakWindows) > 0:
		windows(bad, f, v.BreakWindows, fv)
	case c != nil && c.DriverBreakRequirements:
		// The route is back by the shift's end and within
		// max_route_duration: its time on duty.
		back := math.Min(fv.ShiftEnd, fv.ShiftStart+fv.MaxMinutes)
		if back-fv.ShiftStart > hosLongest {
			bad[f+".shift_end"] = fmt.Sprintf("the default break rule covers shifts up to %v minutes; give break_windows", hosLongest)
			return
		}
		if back-fv.ShiftStart > hosDriving {
			fv.Breaks = []vrp.Break{{
				Start:   math.Max(fv.ShiftStart, back-hosDriving-hosBreak),
				End:     fv.ShiftStart + hosDriving + hosBreak,
				Minutes: hosBreak,
			}}
		}
	}
}

// windows reads break windows ws of vehicle f, taken in their order:
// each starts no earlier than the one before, and taken as early as its
// window and the breaks before it allow, each ends by its window's end
// and by the shift's, so that an idle vehicle can take them all. Each
// window's own fields are checked first and every problem among them is
// named in one answer; the order and the fit, which need them all, only
// then.
func windows(bad map[string]string, f string, ws []BreakWindow, fv *vrp.Vehicle) {
	bs, ok := windowFields(bad, f, ws)
	if !ok {
		return
	}
	ready := fv.ShiftStart
	for k, b := range bs {
		field := fmt.Sprintf("%s.break_windows[%d]", f, k)
		if k > 0 && b.Start < bs[k-1].Start {
			bad[field] = "breaks are taken in order: a window starts no earlier than the one before it"
			return
		}
		ready = math.Max(ready, b.Start) + b.Minutes
		if ready > math.Min(b.End, fv.ShiftEnd) {
			bad[field] = "the break does not fit inside its window and the shift after the breaks before it"
			return
		}
	}
	fv.Breaks = bs
}

// windowFields checks each break window's start, end and duration on
// their own, naming every problem of every window in bad; ok is false
// when there was one.
func windowFields(bad map[string]string, f string, ws []BreakWindow) (bs []vrp.Break, ok bool) {
	bs, ok = make([]vrp.Break, 0, len(ws)), true
	for k, w := range ws {
		field := fmt.Sprintf("%s.break_windows[%d]", f, k)
		n := len(bad)
		s, ok1 := clockTime(w.Start, math.NaN())
		e, ok2 := clockTime(w.End, math.NaN())
		for _, c := range []struct {
			name, v string
			ok      bool
		}{{".start", w.Start, ok1}, {".end", w.End, ok2}} {
			switch {
			case c.v == "":
				bad[field+c.name] = "is required"
			case !c.ok:
				bad[field+c.name] = clockRefusal
			}
		}
		times := w.Start != "" && w.End != "" && ok1 && ok2
		if times && !(e > s) {
			bad[field+".end"] = "must be after start"
			times = false
		}
		// the duration's bound is end minus start: checked against it
		// when both are good, else for being more than 0
		if w.Duration == nil || !(*w.Duration > 0) || times && *w.Duration > e-s {
			bad[field+".duration"] = "minutes, more than 0 and at most end minus start"
		}
		if len(bad) > n {
			ok = false
			continue
		}
		bs = append(bs, vrp.Break{Start: s, End: e, Minutes: *w.Duration})
	}
	return bs, ok
}
