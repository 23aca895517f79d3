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
func (n *network) length(e int32) float64 { return n.cum[n.ptFirst[e+1]-1] }

// candidate is a place on an edge near a point.
type candidate struct {
	edge  int32
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
				c := candidate{edge: e, off: off, x: px, y: py, dist: math.Sqrt(d2), back: -1}
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
