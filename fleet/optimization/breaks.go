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
// hours of driving, read with the time since the shift started standing
// for driving time. A shift of at most hosDriving needs no break; one
// longer than hosLongest would need a second one, which only
// break_windows can give.
const (
	hosDriving = 8 * 60.0
	hosBreak   = 30.0
	hosLongest = 2*hosDriving + hosBreak
)

// breaks sets vehicle f's break from its break_windows, or from the
// default rule when the constraints ask for breaks and it gives none.
func breaks(bad map[string]string, f string, v Vehicle, c *Constraints, fv *vrp.Vehicle) {
	switch {
	case len(v.BreakWindows) > 1:
		bad[f+".break_windows"] = "at most one break window per vehicle is supported"
	case len(v.BreakWindows) == 1:
		w := v.BreakWindows[0]
		s, ok1 := clockTime(w.Start, math.NaN())
		e, ok2 := clockTime(w.End, math.NaN())
		field := f + ".break_windows[0]"
		if !ok1 || !ok2 || !(e > s) {
			bad[field] = "start and end are HH:MM or HH:MM:SS with start before end"
			return
		}
		if w.Duration == nil || !(*w.Duration > 0 && *w.Duration <= e-s) {
			bad[field+".duration"] = "minutes, more than 0 and at most end minus start"
			return
		}
		if math.Max(s, fv.ShiftStart)+*w.Duration > math.Min(e, fv.ShiftEnd) {
			bad[field] = "the break does not fit inside the shift"
			return
		}
		fv.BreakStart, fv.BreakEnd, fv.BreakMinutes = s, e, *w.Duration
	case c != nil && c.DriverBreakRequirements:
		shift := fv.ShiftEnd - fv.ShiftStart
		if shift > hosLongest {
			bad[f+".shift_end"] = fmt.Sprintf("the default break rule covers shifts up to %v minutes; give break_windows", hosLongest)
			return
		}
		if shift > hosDriving {
			fv.BreakStart, fv.BreakEnd, fv.BreakMinutes = fv.ShiftStart, fv.ShiftStart+hosDriving+hosBreak, hosBreak
		}
	}
}
