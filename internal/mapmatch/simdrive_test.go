package mapmatch

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/fleethub/fleethub/internal/routing"
)

// trip is a simulated drive: its fixes, the way each fix was truly on,
// where along the drive each was taken (meters), where the drive passes
// from one way to another, the distance driven from the first fix to
// the last, and the directed edges driven with the meters from the
// drive's start to the end of each.
type trip struct {
	pts     []Point
	speeds  []float64 // the true speed at each fix, m/s
	courses []float64 // the true direction of travel at each fix, degrees clockwise from north
	ways    []int64
	roads   []routing.Road // the road each fix was truly on
	at      []float64
	changes []float64
	meters  float64
	path    []int32
	ends    []float64
}

// Kinematics of the simulated driver (m/s and m/s²).
const (
	simAccel    = 1.5
	simBrake    = 2.0
	simStep     = 0.25 // seconds per integration step
	simStopP    = 0.15 // the chance of a stop (a light, a stop sign) at a junction of three or more roads
	simMinTurn  = 15 * math.Pi / 180
	simStopBack = 8 // meters from the stop line to the junction
)

// drive is a simulated trip of about meters over the roads cars may use
// (see simPath: the quickest route to a random place that far): cruising at 80 to 100 % of each road's limit
// (at most 100 km/h), slowing for turns (25 km/h through a right angle,
// 10 km/h to turn round at a dead end), stopping for 5 to 40 s, 8 m
// before the junction, at 15 % of the junctions where three or more
// roads meet, accelerating at
// 1.5 m/s² and braking at 2 m/s²; a fix every dt seconds with Gaussian
// noise of sigma meters on each axis, its Accuracy sigma, its Time the
// moment it was taken (seconds from an arbitrary epoch).
func drive(n *network, rng *rand.Rand, meters, dt, sigma float64) trip {
	path, ends := simPath(n, rng, meters)
	pace := 0.8 + 0.2*rng.Float64()
	cruise := make([]float64, len(path))
	for i, de := range path {
		cruise[i] = min(n.roads.EdgeRoad(int(de/2), de%2 == 1).LimitKmh*pace, 100) / 3.6
	}
	// caps[i]: the speed at the junction at the end of path[i]; stops[i]
	// the seconds stood there.
	caps, stops := make([]float64, len(path)), make([]float64, len(path))
	at := slices.Clone(ends) // where the cap holds: the junction, or the stop line before it
	for i := range path {
		caps[i] = cruise[i]
		if i+1 < len(path) {
			caps[i] = min(caps[i], turnSpeed(n, path[i], path[i+1]), cruise[i+1])
			j := simEnd(n, path[i])
			if n.outFirst[j+1]-n.outFirst[j] >= 3 && rng.Float64() < simStopP {
				caps[i], stops[i] = 0, 5+35*rng.Float64()
				at[i] -= min(simStopBack, n.length(path[i]/2)/2)
			}
		}
	}
	t := trip{path: path, ends: ends}
	for i := 1; i < len(path); i++ {
		if n.roads.EdgeRoad(int(path[i]/2), path[i]%2 == 1).WayID != n.roads.EdgeRoad(int(path[i-1]/2), path[i-1]%2 == 1).WayID {
			t.changes = append(t.changes, ends[i-1])
		}
	}
	s, v, clock, nextFix, i := 0.0, cruise[0], 0.0, 0.0, 0
	for {
		for i < len(path)-1 && s >= ends[i] {
			i++
		}
		if clock >= nextFix {
			t.fix(n, rng, path[i], s-ends[i]+n.length(path[i]/2), sigma, s, clock, v)
			nextFix += dt
		}
		if s >= ends[len(ends)-1] {
			break
		}
		top := cruise[i]
		for k := i; k < len(path) && at[k]-s < 300; k++ {
			top = min(top, math.Sqrt(caps[k]*caps[k]+2*simBrake*max(at[k]-s, 0)))
		}
		v = min(v+simAccel*simStep, top)
		if k := i; caps[k] == 0 && stops[k] > 0 && at[k]-s < 0.5 {
			s, v = at[k], 0 // stood at the stop line
			clock, stops[k], caps[k], at[k] = clock+stops[k], 0, min(turnSpeedAt(n, path, k), cruise[k]), ends[k]
			for clock >= nextFix { // the fixes taken while it stood
				t.fix(n, rng, path[i], s-ends[i]+n.length(path[i]/2), sigma, s, nextFix, 0)
				nextFix += dt
			}
			continue
		}
		s += max(v, 0.5) * simStep
		clock += simStep
	}
	t.meters = t.at[len(t.at)-1]
	return t
}

// fix appends a fix taken off meters along directed edge de, s meters
// into the drive, at clock seconds from its start, at speed v.
func (t *trip) fix(n *network, rng *rand.Rand, de int32, off, sigma, s, clock, v float64) {
	e, back := de/2, de%2 == 1
	if back {
		off = n.length(e) - off
	}
	x, y := n.along(e, off)
	l := n.length(e)
	ax, ay := n.along(e, max(off-1, 0))
	bx, by := n.along(e, min(off+1, l))
	if back {
		ax, ay, bx, by = bx, by, ax, ay
	}
	t.courses = append(t.courses, math.Atan2(bx-ax, by-ay)*180/math.Pi)
	x, y = x+rng.NormFloat64()*sigma, y+rng.NormFloat64()*sigma
	lat, lon := n.latLon(x, y)
	t.pts = append(t.pts, Point{Lat: lat, Lon: lon, Accuracy: sigma, Time: 1.8e9 + clock})
	road := n.roads.EdgeRoad(int(e), back)
	t.ways, t.roads = append(t.ways, road.WayID), append(t.roads, road)
	t.at = append(t.at, s)
	t.speeds = append(t.speeds, v)
}

// simPath is a drive of at least meters as directed edges, and the
// meters from its start to the end of each: from a random road to a
// random junction at least meters away by the road, by the quickest
// route at the roads' limits (as a driver with a navigator goes),
// service roads (parking aisles, driveways) counted at a tenth of
// their speed so that a route uses them only to begin or end.
func simPath(n *network, rng *rand.Rand, meters float64) (path []int32, ends []float64) {
	for {
		var de int32 = -1
		for de < 0 {
			e := int32(rng.IntN(len(n.fwd)))
			if n.fwd[e] {
				de = 2 * e
			} else if n.bwd[e] {
				de = 2*e + 1
			}
		}
		if path = simRoute(n, rng, de, meters); path != nil {
			break
		}
	}
	driven := 0.0
	for _, de := range path {
		driven += n.length(de / 2)
		ends = append(ends, driven)
	}
	return path, ends
}

// simRoute is the quickest route from directed edge first to a random
// junction from meters to 1.2 times meters from its end (first
// included); nil when there is none.
func simRoute(n *network, rng *rand.Rand, first int32, meters float64) []int32 {
	type label struct {
		secs, meters float64
		via          int32
	}
	labels := map[int32]label{simEnd(n, first): {0, n.length(first / 2), first}}
	h := &simHeap{{0, simEnd(n, first)}}
	var far []int32
	done := map[int32]bool{}
	for h.Len() > 0 {
		it := heap.Pop(h).(item)
		if done[it.j] {
			continue
		}
		done[it.j] = true
		l := labels[it.j]
		if l.meters >= meters {
			if l.meters <= 1.2*meters {
				far = append(far, it.j)
			}
			continue
		}
		for _, de := range n.out[n.outFirst[it.j]:n.outFirst[it.j+1]] {
			road := n.roads.EdgeRoad(int(de/2), de%2 == 1)
			kmh := max(road.LimitKmh, 5)
			if road.Class == routing.ClassService {
				kmh /= 10
			}
			to := simEnd(n, de)
			secs := l.secs + n.length(de/2)/(kmh/3.6)
			if o, ok := labels[to]; !ok || secs < o.secs {
				labels[to] = label{secs, l.meters + n.length(de/2), de}
				heap.Push(h, item{secs, to})
			}
		}
	}
	if len(far) == 0 {
		return nil
	}
	var rev []int32
	for j := far[rng.IntN(len(far))]; ; {
		de := labels[j].via
		rev = append(rev, de)
		if de == first {
			break
		}
		j = n.tail[de/2]
		if de%2 == 1 {
			j = n.head[de/2]
		}
	}
	slices.Reverse(rev)
	return rev
}

// simHeap is a min-heap of junctions by seconds.
type simHeap []item

func (h simHeap) Len() int           { return len(h) }
func (h simHeap) Less(i, j int) bool { return h[i].d < h[j].d }
func (h simHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *simHeap) Push(x any)        { *h = append(*h, x.(item)) }
func (h *simHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// simEnd is the junction directed edge de leads to.
func simEnd(n *network, de int32) int32 {
	if de%2 == 1 {
		return n.tail[de/2]
	}
	return n.head[de/2]
}

// heading is the direction of travel (radians) where directed edge de
// starts (first) or ends.
func heading(n *network, de int32, first bool) float64 {
	a, b := n.ptFirst[de/2], n.ptFirst[de/2+1]-1
	p, q := a, a+1 // the first segment, forward
	if !first {
		p, q = b-1, b
	}
	if de%2 == 1 {
		p, q = b, b-1
		if !first {
			p, q = a+1, a
		}
	}
	return math.Atan2(n.y[q]-n.y[p], n.x[q]-n.x[p])
}

// turnSpeed is the speed (m/s) through the turn from directed edge a
// onto b: no limit under 15°, 25 km/h through a right angle, 10 km/h
// to turn round.
func turnSpeed(n *network, a, b int32) float64 {
	d := math.Abs(math.Remainder(heading(n, b, true)-heading(n, a, false), 2*math.Pi))
	switch {
	case a/2 == b/2 || d > 150*math.Pi/180:
		return 10 / 3.6
	case d < simMinTurn:
		return math.Inf(1)
	}
	return max(25, 60-35*(d-simMinTurn)/(math.Pi/2-simMinTurn)) / 3.6
}

func turnSpeedAt(n *network, path []int32, k int) float64 {
	if k+1 >= len(path) {
		return math.Inf(1)
	}
	return turnSpeed(n, path[k], path[k+1])
}

// nearest is where along the drive (meters) its path is nearest to
// (x, y), fix i's place, looking within 150 m of where fix i was taken.
func (t *trip) nearest(n *network, i int, x, y float64) float64 {
	best, at := math.Inf(1), t.at[i]
	for k, de := range t.path {
		start := t.ends[k] - n.length(de/2)
		if t.ends[k] < t.at[i]-150 || start > t.at[i]+150 {
			continue
		}
		e := de / 2
		for q := n.ptFirst[e]; q < n.ptFirst[e+1]-1; q++ {
			px, py, f := project(x, y, n.x[q], n.y[q], n.x[q+1], n.y[q+1])
			if d := math.Hypot(px-x, py-y); d < best {
				off := n.cum[q] + f*(n.cum[q+1]-n.cum[q])
				if de%2 == 1 {
					off = n.length(e) - off
				}
				best, at = d, start+off
			}
		}
	}
	return at
}

// wayAt is the way the drive is on s meters into it.
func (t *trip) wayAt(n *network, s float64) int64 {
	for k, de := range t.path {
		if s <= t.ends[k] || k == len(t.path)-1 {
			return n.roads.EdgeRoad(int(de/2), de%2 == 1).WayID
		}
	}
	return 0
}
