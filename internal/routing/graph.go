package routing

import (
	"errors"
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// Graph is the road network of an extract: its roads cut into edges at
// every junction, and for each costing a routing graph with its
// contraction hierarchy. A Graph is never modified after it is built and
// is safe for any number of concurrent queries.
//
// An edge is a piece of one way between two junctions (nodes where roads
// meet, end, or change way, and nodes a restriction or a barrier names);
// its points are kept so that locations snap onto the road itself.
type Graph struct {
	// points of every edge, edge e's from ptFirst[e] to ptFirst[e+1]-1
	lat, lon []float64
	cum      []float32 // meters from the start of its edge to each point
	ptFirst  []int32
	// per edge
	way        []int32 // index into ways
	tail, head []int32 // junction ids
	// per way
	ways []wayMeta
	// junctions
	junctions int
	signal    []bool   // junction with traffic signals
	blocked   []uint8  // junction closed to the costings (bit per Costing)
	innerSig  []uint16 // per edge: traffic signals at inner points
	grid      segGrid
	// turn restrictions placed on junctions and ways
	restrictions []turnRestriction
	costs        [numCostings][avoidSets]lazyCost // per costing and avoid set
	cacheBase    string                           // where the saved files go, "" for none
	loaded       bool                             // the road network was read from cacheBase
}

// wayMeta is what queries need of a way: its rules per costing and, when
// posted, the truck limits.
type wayMeta struct {
	id    int64
	rules [numCostings][2]dirRule
	limit TruckSize // posted limits; 0 where none
	// the road's class and its speed limit forward and backward, posted
	// (bit per direction in posted) or the class default
	class    RoadClass
	limitKmh [2]float32
	posted   uint8
	avoid    Avoid // the kinds of road it is: toll, highway, ferry
	noStart  uint8 // costings (bit per Costing) no location snaps onto it for
}

const numCostings = 4

// errNoRoads: the extract holds no road segment between two known nodes.
var errNoRoads = errors.New("routing: no roads")

// buildGeometry cuts the extract's roads into edges.
func buildGeometry(x *extract) (*Graph, error) {
	g := &Graph{}
	used := usedWays(x)
	jid := g.cutWays(x, used, junctionNodes(x, used))
	if len(g.tail) == 0 {
		return nil, errNoRoads
	}
	g.ptFirst = append(g.ptFirst, int32(len(g.lat)))
	g.markJunctions(x, jid)
	g.placeRestrictions(x, jid)
	g.grid = newSegGrid(g)
	return g, nil
}

// usedWay is a way any costing may use, with what queries need of it.
type usedWay struct {
	w    *way
	meta wayMeta
}

// usedWays are the extract's ways that any costing may use, with their
// rules per costing and their posted truck limits.
func usedWays(x *extract) []usedWay {
	var used []usedWay
	for i := range x.ways {
		w := &x.ways[i]
		m := wayMeta{id: w.id}
		any := false
		for c := Costing(0); c < numCostings; c++ {
			f, b := wayRules(w.tags, c)
			m.rules[c] = [2]dirRule{f, b}
			any = any || f.usable() || b.usable()
		}
		if !any {
			continue
		}
		m.limit = TruckSize{Height: dimension(w.tags["maxheight"]), Width: dimension(w.tags["maxwidth"]),
			Length: dimension(w.tags["maxlength"]), Weight: max(dimension(w.tags["maxweight"]), dimension(w.tags["maxweight:hgv"]))}
		m.class, m.limitKmh, m.posted = speedLimits(w.tags)
		if m.avoid = avoidOf(w.tags); m.avoid&AvoidFerries != 0 {
			ferrySpeed(x, w, &m)
		}
		m.noStart = noStartOf(w.tags)
		used = append(used, usedWay{w, m})
	}
	return used
}

// junctionNodes are the nodes of the used ways that must be junctions:
// where ways end, where other than two segment ends meet, and the road
// nodes a barrier or a restriction names.
func junctionNodes(x *extract, used []usedWay) map[int64]bool {
	// how many segment ends meet at each node
	deg := map[int64]int32{}
	junction := map[int64]bool{}
	for _, u := range used {
		refs := u.w.refs
		for k := 1; k < len(refs); k++ {
			_, ok1 := x.coords[refs[k-1]]
			_, ok2 := x.coords[refs[k]]
			if !ok1 || !ok2 || refs[k-1] == refs[k] {
				continue
			}
			deg[refs[k-1]]++
			deg[refs[k]]++
		}
		junction[refs[0]], junction[refs[len(refs)-1]] = true, true // ways end at junctions
	}
	for id, d := range deg {
		if d != 2 {
			junction[id] = true
		}
	}
	for id, t := range x.nodeTags {
		if _, ok := deg[id]; !ok {
			continue
		}
		for c := Costing(0); c < numCostings; c++ {
			if nodeBlocks(t, c) {
				junction[id] = true
			}
		}
	}
	for _, r := range x.restrictions {
		if _, ok := deg[r.via]; ok {
			junction[r.via] = true
		}
	}
	return junction
}

// cutWays adds the used ways and their edges: every way cut at its
// junctions and where a node is missing. It returns the junction id of
// every node that ends an edge.
func (g *Graph) cutWays(x *extract, used []usedWay, junction map[int64]bool) map[int64]int32 {
	jid := map[int64]int32{}
	junctionOf := func(id int64) int32 {
		if j, ok := jid[id]; ok {
			return j
		}
		j := int32(len(jid))
		jid[id] = j
		return j
	}
	isSignal := func(id int64) bool { return isSignalNode(x, id) }
	for _, u := range used {
		wi := int32(len(g.ways))
		g.ways = append(g.ways, u.meta)
		var piece []int64
		for _, r := range u.w.refs {
			if _, ok := x.coords[r]; !ok { // a node the extract lacks cuts the way
				g.addEdge(x, wi, piece, junctionOf, isSignal)
				piece = nil
				continue
			}
			if len(piece) > 0 && piece[len(piece)-1] == r {
				continue
			}
			piece = append(piece, r)
			if len(piece) > 1 && junction[r] {
				g.addEdge(x, wi, piece, junctionOf, isSignal)
				piece = []int64{r}
			}
		}
		g.addEdge(x, wi, piece, junctionOf, isSignal)
	}
	return jid
}

// isSignalNode reports whether node id has traffic signals.
func isSignalNode(x *extract, id int64) bool { return x.nodeTags[id]["highway"] == "traffic_signals" }

// markJunctions sets, per junction, its traffic signals and the costings
// its barriers close it to.
func (g *Graph) markJunctions(x *extract, jid map[int64]int32) {
	g.junctions = len(jid)
	g.signal = make([]bool, g.junctions)
	g.blocked = make([]uint8, g.junctions)
	for id, j := range jid {
		g.signal[j] = isSignalNode(x, id)
		if t, ok := x.nodeTags[id]; ok {
			for c := Costing(0); c < numCostings; c++ {
				if nodeBlocks(t, c) {
					g.blocked[j] |= 1 << c
				}
			}
		}
	}
}

// placeRestrictions places the extract's turn restrictions whose via
// node is a junction and whose ways are used.
func (g *Graph) placeRestrictions(x *extract, jid map[int64]int32) {
	wayIdx := make(map[int64]int32, len(g.ways))
	for i, w := range g.ways {
		wayIdx[w.id] = int32(i)
	}
	for _, r := range x.restrictions {
		via, ok1 := jid[r.via]
		from, ok2 := wayIdx[r.from]
		to, ok3 := wayIdx[r.to]
		if ok1 && ok2 && ok3 {
			g.restrictions = append(g.restrictions, turnRestriction{via: via, from: from, to: to, only: r.only, costings: r.costings})
		}
	}
}

// addEdge adds the edge through the given nodes of way wi (all known,
// none repeated), unless there are fewer than two; its ends become
// junctions.
func (g *Graph) addEdge(x *extract, wi int32, refs []int64, junctionOf func(int64) int32, isSignal func(int64) bool) {
	pts := refs
	if len(pts) < 2 {
		return
	}
	g.ptFirst = append(g.ptFirst, int32(len(g.lat)))
	var m float64
	var sig uint16
	for k, r := range pts {
		c := x.coords[r]
		if k > 0 {
			p := x.coords[pts[k-1]]
			m += geo.Distance(geo.Point{Lat: p[0], Lon: p[1]}, geo.Point{Lat: c[0], Lon: c[1]})
			if k < len(pts)-1 && isSignal(r) && sig < math.MaxUint16 {
				sig++
			}
		}
		g.lat, g.lon, g.cum = append(g.lat, c[0]), append(g.lon, c[1]), append(g.cum, float32(m))
	}
	g.way = append(g.way, wi)
	g.tail = append(g.tail, junctionOf(pts[0]))
	g.head = append(g.head, junctionOf(pts[len(pts)-1]))
	g.innerSig = append(g.innerSig, sig)
}

// Edges is the number of edges.
func (g *Graph) Edges() int { return len(g.tail) }

// Nodes is the number of junctions.
func (g *Graph) Nodes() int { return g.junctions }

// meters is the length of edge e.
func (g *Graph) meters(e int32) float64 { return float64(g.cum[g.ptFirst[e+1]-1]) }

// bearings are the bearing (degrees from north) edge e starts with and
// the one it ends with, in the direction of its points.
func (g *Graph) bearings(e int32) (start, end float64) {
	a, b := g.ptFirst[e], g.ptFirst[e+1]-1
	start = geo.Bearing(geo.Point{Lat: g.lat[a], Lon: g.lon[a]}, geo.Point{Lat: g.lat[a+1], Lon: g.lon[a+1]})
	end = geo.Bearing(geo.Point{Lat: g.lat[b-1], Lon: g.lon[b-1]}, geo.Point{Lat: g.lat[b], Lon: g.lon[b]})
	return
}
