package routing

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"

	"github.com/fleethub/fleethub/internal/geo"
)

// Graph is a road graph in compressed adjacency form: the edges leaving
// node i are first[i] to first[i+1]-1. Every road segment is two edges, one
// each way; an edge against a one-way street is kept, marked not forward,
// so that pedestrians may walk it. A Graph is never modified after it is
// built.
type Graph struct {
	lat, lon []float64
	first    []int32 // first edge of node i; first[n] = len(edges)
	to       []int32
	meters   []float32
	class    []uint8
	forward  []bool // false: the edge runs against a one-way
	grid     map[[2]int32][]int32
}

type rawEdge struct {
	a, b  int32
	m     float32
	class uint8
	fwd   bool
}

// errNoRoads: the extract holds no road segment between two known nodes.
var errNoRoads = errors.New("routing: no roads")

// Load builds the graph of a .osm.pbf extract.
func Load(path string) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("routing: %w", err)
	}
	defer f.Close()
	g, err := Read(f)
	if errors.Is(err, errNoRoads) {
		return nil, fmt.Errorf("routing: %s has no roads", path)
	}
	return g, err
}

// Read builds the graph of a .osm.pbf stream. It returns an error, never
// a partial graph, when the stream is malformed or holds no roads.
func Read(r io.Reader) (*Graph, error) {
	x, err := importOSM(r)
	if err != nil {
		return nil, err
	}
	return build(x)
}

// build numbers the nodes that roads use, in the order the roads use them,
// and lays the road segments out as edges.
func build(x *extract) (*Graph, error) {
	g := &Graph{grid: map[[2]int32][]int32{}}
	idx := map[int64]int32{}
	node := func(id int64) (int32, bool) {
		if i, ok := idx[id]; ok {
			return i, true
		}
		c, ok := x.coords[id]
		if !ok {
			return 0, false
		}
		i := int32(len(g.lat))
		idx[id] = i
		g.lat, g.lon = append(g.lat, c[0]), append(g.lon, c[1])
		return i, true
	}
	var edges []rawEdge
	for _, w := range x.roads {
		for k := 1; k < len(w.refs); k++ {
			a, ok1 := node(w.refs[k-1])
			b, ok2 := node(w.refs[k])
			if !ok1 || !ok2 || a == b {
				continue
			}
			m := float32(geo.Distance(geo.Point{Lat: g.lat[a], Lon: g.lon[a]}, geo.Point{Lat: g.lat[b], Lon: g.lon[b]}))
			edges = append(edges, rawEdge{a, b, m, w.class, w.oneway >= 0}, rawEdge{b, a, m, w.class, w.oneway <= 0})
		}
	}
	if len(edges) == 0 {
		return nil, errNoRoads
	}
	g.layout(edges)
	return g, nil
}

// layout sorts the edges by their tail into the adjacency arrays and puts
// every node in its grid cell.
func (g *Graph) layout(edges []rawEdge) {
	n := len(g.lat)
	g.first = make([]int32, n+1)
	for _, e := range edges {
		g.first[e.a+1]++
	}
	for i := 1; i <= n; i++ {
		g.first[i] += g.first[i-1]
	}
	pos := append([]int32(nil), g.first[:n]...)
	g.to, g.meters, g.class, g.forward = make([]int32, len(edges)), make([]float32, len(edges)), make([]uint8, len(edges)), make([]bool, len(edges))
	for _, e := range edges {
		p := pos[e.a]
		pos[e.a]++
		g.to[p], g.meters[p], g.class[p], g.forward[p] = e.b, e.m, e.class, e.fwd
	}
	for i := 0; i < n; i++ {
		k := cell(g.lat[i], g.lon[i])
		g.grid[k] = append(g.grid[k], int32(i))
	}
}

// Nodes is the number of graph nodes.
func (g *Graph) Nodes() int { return len(g.lat) }

// cell is the grid cell of a point: 0.01° of latitude by 0.01° of longitude.
func cell(lat, lon float64) [2]int32 {
	return [2]int32{int32(math.Floor(lat * 100)), int32(math.Floor(lon * 100))}
}

// usable reports whether edge e can be driven with costing c.
func (g *Graph) usable(e int32, c Costing) bool {
	if kmh(g.class[e], c) == 0 {
		return false
	}
	return g.forward[e] || c == Pedestrian // pedestrians ignore one-way streets
}

// hasUsable reports whether node i has an edge of a class c may use, in
// either direction.
func (g *Graph) hasUsable(i int32, c Costing) bool {
	for e := g.first[i]; e < g.first[i+1]; e++ {
		if kmh(g.class[e], c) > 0 {
			return true
		}
	}
	return false
}
