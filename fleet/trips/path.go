package trips

import (
	"math"
	"slices"

	"github.com/fleethub/fleethub/internal/geo"
)

// profile is what the route and safety analyses read off a trip's
// points in one pass.
type profile struct {
	speeds    []float64 // km/h at each point: reported, else derived from the step before it (0 at the first, NaN after a pause)
	cum       []float64 // km driven from the first point to each
	across    []bool    // the step to each point spans a pause: it was not driven
	paused    []float64 // minutes of pause between the first point and each
	highwayKm float64   // driven on motorways and trunks, or at 80 km/h or more off the roads
	cityKm    float64   // driven on roads limited to 60 km/h, or under 50 km/h off the roads
	moving    []float64 // the speeds over 5 km/h
	gainM     float64   // elevation gained, meters
	altitudes bool      // some two consecutive points had an altitude: gainM is known
}

// profileOf is the speed profile of pts; bands, when not nil, are the
// road band of each point (bandNone where it was not matched), which
// then splits the distance rather than the speed. pauses are the trip's
// closed pauses (unix ms from, to): a step across one was not driven and
// adds no distance, as in the trip's analytics (docs/analytics.md).
func profileOf(pts []Point, bands []band, pauses [][2]int64) profile {
	n := len(pts)
	p := profile{speeds: make([]float64, n), cum: make([]float64, n), across: make([]bool, n), paused: make([]float64, n)}
	for i := 1; i < n; i++ {
		p.paused[i] = p.paused[i-1] + pausedMinutes(pauses, pts[i-1].TS, pts[i].TS)
		if spansPause(pauses, pts[i-1].TS, pts[i].TS) {
			p.across[i], p.speeds[i], p.cum[i] = true, pts[i].Speed, p.cum[i-1]
			if v := pts[i].Speed; v > 5 {
				p.moving = append(p.moving, v)
			}
			continue
		}
		d := geo.Distance(pts[i-1].pos(), pts[i].pos()) / 1000
		dt := float64(pts[i].TS-pts[i-1].TS) / 3.6e6
		v := pts[i].Speed
		if math.IsNaN(v) && dt > 0 {
			v = d / dt
		}
		p.speeds[i] = v
		p.cum[i] = p.cum[i-1] + d
		b := bandNone
		if i < len(bands) {
			b = bands[i]
		}
		switch {
		case b == bandHighway || b == bandNone && v >= 80:
			p.highwayKm += d
		case b == bandCity || b == bandNone && v < 50:
			p.cityKm += d
		}
		if v > 5 {
			p.moving = append(p.moving, v)
		}
		if !math.IsNaN(pts[i].Altitude) && !math.IsNaN(pts[i-1].Altitude) {
			p.altitudes = true
			p.gainM += math.Max(0, pts[i].Altitude-pts[i-1].Altitude)
		}
	}
	return p
}

// spansPause tells whether the step from a to b (unix ms) overlaps one
// of pauses.
func spansPause(pauses [][2]int64, a, b int64) bool {
	for _, pz := range pauses {
		if pz[0] < b && pz[1] > a {
			return true
		}
	}
	return false
}

// pausedMinutes is the time of pauses inside the step from a to b (unix
// ms), in minutes.
func pausedMinutes(pauses [][2]int64, a, b int64) float64 {
	var ms int64
	for _, pz := range pauses {
		if lo, hi := max(pz[0], a), min(pz[1], b); hi > lo {
			ms += hi - lo
		}
	}
	return float64(ms) / 60000
}

// totalKm is the distance driven between the first and the last point.
func (p *profile) totalKm() float64 {
	if len(p.cum) == 0 {
		return 0
	}
	return p.cum[len(p.cum)-1]
}

// cruisingSpeed is the median of moving speeds (km/h).
func cruisingSpeed(speeds []float64) float64 {
	var m []float64
	for _, v := range speeds {
		if v > 5 && !math.IsNaN(v) {
			m = append(m, v)
		}
	}
	if len(m) == 0 {
		return 0
	}
	slices.Sort(m)
	return m[len(m)/2]
}

// turnIndexes finds points where the bearing changes by more than 45°
// over about 100 m, at least 200 m apart; a step across a pause (across,
// of the profile) is not driven, so it makes no turn.
func turnIndexes(pts []Point, across []bool) []int {
	var out []int
	lastTurn := -1e9
	dist := 0.0
	for i := 2; i < len(pts); i++ {
		if across[i] || across[i-1] {
			continue
		}
		step := geo.Distance(pts[i-1].pos(), pts[i].pos())
		dist += step
		a := geo.Bearing(pts[i-2].pos(), pts[i-1].pos())
		b := geo.Bearing(pts[i-1].pos(), pts[i].pos())
		d := math.Abs(math.Mod(b-a+540, 360) - 180)
		if d > 45 && step > 5 && dist-lastTurn > 200 {
			out = append(out, i-1)
			lastTurn = dist
		}
	}
	return out
}

// simplify is Douglas-Peucker on lon/lat degrees.
func simplify(c [][2]float64, tol float64) [][2]float64 {
	if len(c) < 3 {
		return c
	}
	keep := make([]bool, len(c))
	keep[0], keep[len(c)-1] = true, true
	type span struct{ a, b int }
	stack := []span{{0, len(c) - 1}}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		maxD, idx := 0.0, -1
		for i := s.a + 1; i < s.b; i++ {
			if d := segDist(c[i], c[s.a], c[s.b]); d > maxD {
				maxD, idx = d, i
			}
		}
		if idx >= 0 && maxD > tol {
			keep[idx] = true
			stack = append(stack, span{s.a, idx}, span{idx, s.b})
		}
	}
	out := make([][2]float64, 0, len(c)/4+2)
	for i, k := range keep {
		if k {
			out = append(out, c[i])
		}
	}
	return out
}

func segDist(p, a, b [2]float64) float64 {
	dx, dy := b[0]-a[0], b[1]-a[1]
	if dx == 0 && dy == 0 {
		return math.Hypot(p[0]-a[0], p[1]-a[1])
	}
	t := ((p[0]-a[0])*dx + (p[1]-a[1])*dy) / (dx*dx + dy*dy)
	t = math.Max(0, math.Min(1, t))
	return math.Hypot(p[0]-a[0]-t*dx, p[1]-a[1]-t*dy)
}
