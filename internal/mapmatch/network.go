package mapmatch

import (
	"math"
	"slices"

	"github.com/fleethub/fleethub/internal/routing"
)

// Roads is the road network a Matcher matches onto; *routing.Graph is
// one.
type Roads interface {
	Edges() int
	Nodes() int
	EdgePoints(e int, lat, lon []float64) ([]float64, []float64)
	EdgeEnds(e int) (tail, head int)
	EdgeOpen(e int, c routing.Costing) (forward, backward bool)
	EdgeRoad(e int, backward bool) routing.Road
}

// network is the roads of one costing in a local plane (meters east and
// north of the network's center), with a grid over their segments and
// the junctions' outgoing edges.
type network struct {
	roads    Roads
	lat0     float64 // the plane's origin
	lon0     float64
	mx, my   float64 // meters per degree of longitude and latitude
	x, y     []float64
	cum      []float64 // meters from the edge's start to each point
	ptFirst  []int32   // edge e's points: ptFirst[e] to ptFirst[e+1]-1
	segEdge  []int32   // per point: the edge whose segment starts there (-1: last point)
	fwd, bwd []bool
	service  []bool // a service road: a parking aisle, a driveway, an alley
	tail     []int32
	head     []int32
	// outgoing directed edges per junction: 2*e forward (leaves tail),
	// 2*e+1 backward (leaves head)
	outFirst []int32
	out      []int32
	// the grid: cell -> segments (their first point)
	cell     float64
	cells    map[int64][]int32
	junction int
	// per directed edge (2*e forward, 2*e+1 backward): the unit vector
	// of travel where it starts and where it ends
	dirs [][4]float64
	// per directed edge: the share of its length a route pays more on it
	// for its limit being under slowKmh (see slowRoad), and its length
	// with that share
	slow  []float64
	dcost []float64
	lens  []float64 // per edge: its length
}

const cellMeters = 100

func newNetwork(r Roads, c routing.Costing) *network {
	n := &network{roads: r, cell: cellMeters, cells: map[int64][]int32{}, junction: r.Nodes()}
	edges := r.Edges()
	var lat, lon []float64
	var first []int
	minLat, maxLat, minLon, maxLon := math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	for e := 0; e < edges; e++ {
		first = append(first, len(lat))
		lat, lon = r.EdgePoints(e, lat, lon)
	}
	first = append(first, len(lat))
	for i := range lat {
		minLat, maxLat = min(minLat, lat[i]), max(maxLat, lat[i])
		minLon, maxLon = min(minLon, lon[i]), max(maxLon, lon[i])
	}
	n.lat0, n.lon0 = (minLat+maxLat)/2, (minLon+maxLon)/2
	n.my = 111_194.93 // meters per degree on the mean Earth radius geo uses
	n.mx = n.my * math.Cos(n.lat0*math.Pi/180)
	n.x, n.y = make([]float64, len(lat)), make([]float64, len(lat))
	for i := range lat {
		n.x[i], n.y[i] = n.plane(lat[i], lon[i])
	}
	n.cum = make([]float64, len(lat))
	n.segEdge = make([]int32, len(lat))
	n.ptFirst = make([]int32, edges+1)
	n.fwd, n.bwd = make([]bool, edges), make([]bool, edges)
	n.tail, n.head = make([]int32, edges), make([]int32, edges)
	n.service = make([]bool, edges)
	deg := make([]int32, n.junction+1)
	for e := 0; e < edges; e++ {
		a, b := first[e], first[e+1]
		n.ptFirst[e], n.ptFirst[e+1] = int32(a), int32(b)
		n.segEdge[b-1] = -1
		for k := a + 1; k < b; k++ {
			n.cum[k] = n.cum[k-1] + math.Hypot(n.x[k]-n.x[k-1], n.y[k]-n.y[k-1])
		}
		t, h := r.EdgeEnds(e)
		n.tail[e], n.head[e] = int32(t), int32(h)
		n.fwd[e], n.bwd[e] = r.EdgeOpen(e, c)
		n.service[e] = r.EdgeRoad(e, false).Class == routing.ClassService
		if n.fwd[e] {
			deg[t]++
		}
		if n.bwd[e] {
			deg[h]++
		}
		for k := a; k < b-1; k++ {
			n.segEdge[k] = -1
			if n.fwd[e] || n.bwd[e] {
				n.segEdge[k] = int32(e)
				n.index(int32(k))
			}
		}
	}
	n.dirs = make([][4]float64, 2*edges)
	n.slow, n.dcost, n.lens = make([]float64, 2*edges), make([]float64, 2*edges), make([]float64, edges)
	for e := 0; e < edges; e++ {
		a, b := n.ptFirst[e], n.ptFirst[e+1]-1
		if b >= a {
			n.lens[e] = n.cum[b]
		}
		for d := range 2 {
			if lim := r.EdgeRoad(e, d == 1).LimitKmh; lim > 0 {
				n.slow[2*e+d] = slowRoad * max(0, slowKmh/lim-1)
			}
			n.dcost[2*e+d] = n.lens[e] * (1 + n.slow[2*e+d])
		}
		if b <= a {
			continue
		}
		sx, sy := unit(n.x[a+1]-n.x[a], n.y[a+1]-n.y[a])
		ex, ey := unit(n.x[b]-n.x[b-1], n.y[b]-n.y[b-1])
		n.dirs[2*e] = [4]float64{sx, sy, ex, ey}
		n.dirs[2*e+1] = [4]float64{-ex, -ey, -sx, -sy}
	}
	n.outFirst = make([]int32, n.junction+1)
	for j := 0; j < n.junction; j++ {
		n.outFirst[j+1] = n.outFirst[j] + deg[j]
	}
	n.out = make([]int32, n.outFirst[n.junction])
	fill := slices.Clone(n.outFirst[:n.junction])
	for e := 0; e < edges; e++ {
		if n.fwd[e] {
			n.out[fill[n.tail[e]]] = int32(2 * e)
			fill[n.tail[e]]++
		}
		if n.bwd[e] {
			n.out[fill[n.head[e]]] = int32(2*e + 1)
			fill[n.head[e]]++
		}
	}
	return n
}

// unit is (x, y) scaled to length 1; (0, 0) stays.
func unit(x, y float64) (float64, float64) {
	l := math.Hypot(x, y)
	if l == 0 {
		return 0, 0
	}
	return x / l, y / l
}

// The route between two fixes is the one a driver would take rather
// than merely the shortest: it is searched, and its transition scored,
// by its meters and two costs in meters more (a driver, or a navigator,
// goes straight on and keeps to the faster roads):
//
//   - a turn from one road onto another costs turnMeters times 1 − the
//     cosine of the angle between them (turnMeters through a right
//     angle, twice that to turn round, nothing straight on);
//   - a road whose limit is under slowKmh costs slowRoad × (slowKmh /
//     its limit − 1) of its length more (half its length more at
//     25 km/h against 50).
//
// A route's length (the route's meters in the transition, the runs'
// Meters) is its meters alone. Of 5 to 40 m per turn and 0.1 to 1 (at
// 40, 50 and 70 km/h) on the simulated drives, 10 to 15 m and 0.5 at
// 50 km/h did best (docs/routing.md).
const (
	turnMeters = 15
	slowRoad   = 0.5
	slowKmh    = 50
)

// turn is the meters the turn from directed edge in onto out costs.
func (n *network) turn(in, out int32) float64 {
	a, b := &n.dirs[in], &n.dirs[out]
	if a[2] == 0 && a[3] == 0 || b[0] == 0 && b[1] == 0 { // a segment of no length
		return 0
	}
	return turnMeters * (1 - (a[2]*b[0] + a[3]*b[1]))
}

// plane is a location in the network's plane.
func (n *network) plane(lat, lon float64) (x, y float64) {
	return (lon - n.lon0) * n.mx, (lat - n.lat0) * n.my
}

// latLon is a point of the plane as a location.
func (n *network) latLon(x, y float64) (lat, lon float64) {
	return n.lat0 + y/n.my, n.lon0 + x/n.mx
}

func cellKey(cx, cy int64) int64 { return cx<<32 ^ (cy & 0xffffffff) }

// index adds the segment starting at point k to every cell its bounding
// box touches.
func (n *network) index(k int32) {
	x0, x1 := min(n.x[k], n.x[k+1]), max(n.x[k], n.x[k+1])
	y0, y1 := min(n.y[k], n.y[k+1]), max(n.y[k], n.y[k+1])
	for cx := int64(math.Floor(x0 / n.cell)); cx <= int64(math.Floor(x1/n.cell)); cx++ {
		for cy := int64(math.Floor(y0 / n.cell)); cy <= int64(math.Floor(y1/n.cell)); cy++ {
			key := cellKey(cx, cy)
			n.cells[key] = append(n.cells[key], k)
		}
	}
}

// length is edge e's length.
func (n *network) length(e int32) float64 { return n.lens[e] }

// candidate is a place on an edge near a point.
type candidate struct {
	edge  int32
	seg   int32   // the segment of the edge the place lies on (its first point)
	off   float64 // meters from the edge's start
	x, y  float64 // the place in the plane
	dist  float64 // meters from the point
	score float64 // the best path's log-likelihood up to here
	back  int32   // the previous step's candidate on that path (-1: none)
	// meters along the roads from the previous step's candidate on that
	// path
	routeD float64
	bwd    bool // travelled against the edge's points
	// moving: reached from a previous point, so bwd is the direction
	// of travel (not a guess)
	moving bool
	dead   bool // not reached from the previous point's decided road
	// the place along the path measured for the smoother (see measure),
	// with the roads before and after it it was measured with
	measured bool
	mKey     [2]int32
	mz       float64
}

// candidates are the nearest place of every edge within radius of
// (x, y), nearest first, at most max of them.
func (n *network) candidates(x, y, radius float64, limit int, buf []candidate) []candidate {
	out := buf[:0]
	if cap(out) == 0 {
		out = make([]candidate, 0, limit) // grown once where more roads are near
	}
	r2 := radius * radius
	for cx := int64(math.Floor((x - radius) / n.cell)); cx <= int64(math.Floor((x+radius)/n.cell)); cx++ {
		for cy := int64(math.Floor((y - radius) / n.cell)); cy <= int64(math.Floor((y+radius)/n.cell)); cy++ {
			for _, k := range n.cells[cellKey(cx, cy)] {
				px, py, t := project(x, y, n.x[k], n.y[k], n.x[k+1], n.y[k+1])
				d2 := (px-x)*(px-x) + (py-y)*(py-y)
				if d2 > r2 {
					continue
				}
				e := n.segEdge[k]
				off := n.cum[k] + t*(n.cum[k+1]-n.cum[k])
				c := candidate{edge: e, seg: k, off: off, x: px, y: py, dist: math.Sqrt(d2), back: -1}
				if i := slices.IndexFunc(out, func(o candidate) bool { return o.edge == e }); i >= 0 {
					if c.dist < out[i].dist {
						out[i] = c
					}
					continue
				}
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return cmpFloat(a.dist, b.dist) })
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// project is the nearest point to (x, y) of the segment a–b, and its
// place along it from 0 to 1.
func project(x, y, ax, ay, bx, by float64) (px, py, t float64) {
	dx, dy := bx-ax, by-ay
	if l := dx*dx + dy*dy; l > 0 {
		t = max(0, min(1, ((x-ax)*dx+(y-ay)*dy)/l))
	}
	return ax + t*dx, ay + t*dy, t
}
