package routing

import (
	"container/heap"
	"fmt"
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// Costings.
var Costings = []string{"auto", "truck", "bicycle", "pedestrian"}

// class speeds in km/h per costing; 0 means not usable.
var speeds = map[string][4]float64{
	//                 auto truck bicycle pedestrian
	"motorway":       {100, 80, 0, 0},
	"motorway_link":  {60, 50, 0, 0},
	"trunk":          {80, 70, 0, 0},
	"trunk_link":     {50, 45, 0, 0},
	"primary":        {60, 55, 14, 5},
	"primary_link":   {45, 40, 14, 5},
	"secondary":      {50, 45, 15, 5},
	"secondary_link": {40, 35, 15, 5},
	"tertiary":       {40, 35, 16, 5},
	"tertiary_link":  {35, 30, 16, 5},
	"unclassified":   {35, 30, 16, 5},
	"residential":    {30, 25, 16, 5},
	"living_street":  {10, 0, 12, 5},
	"service":        {15, 10, 12, 5},
	"road":           {30, 25, 14, 5},
	"track":          {15, 0, 10, 4.5},
	"cycleway":       {0, 0, 18, 5},
	"path":           {0, 0, 12, 4.5},
	"footway":        {0, 0, 0, 5},
	"pedestrian":     {0, 0, 0, 5},
	"steps":          {0, 0, 0, 2},
}

var classes []string
var classIndex = map[string]uint8{}

func init() {
	for c := range speeds {
		classIndex[c] = uint8(len(classes))
		classes = append(classes, c)
	}
}

// Graph is a road graph in compressed adjacency form.
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

// Load builds the graph of a .osm.pbf extract.
func Load(path string) (*Graph, error) {
	coords := map[int64][2]float64{}
	type way struct {
		refs   []int64
		class  uint8
		oneway int // 0 both, 1 forward, -1 backward
	}
	var ways []way
	err := readPBF(path, sink{
		node: func(id int64, lat, lon float64) { coords[id] = [2]float64{lat, lon} },
		way: func(id int64, refs []int64, tags map[string]string) {
			c, ok := classIndex[tags["highway"]]
			if !ok || len(refs) < 2 || tags["area"] == "yes" {
				return
			}
			w := way{refs: refs, class: c}
			switch tags["oneway"] {
			case "yes", "true", "1":
				w.oneway = 1
			case "-1", "reverse":
				w.oneway = -1
			}
			if (tags["highway"] == "motorway" || tags["junction"] == "roundabout") && tags["oneway"] == "" {
				w.oneway = 1
			}
			ways = append(ways, w)
		},
	})
	if err != nil {
		return nil, err
	}
	g := &Graph{grid: map[[2]int32][]int32{}}
	idx := map[int64]int32{}
	node := func(id int64) (int32, bool) {
		if i, ok := idx[id]; ok {
			return i, true
		}
		c, ok := coords[id]
		if !ok {
			return 0, false
		}
		i := int32(len(g.lat))
		idx[id] = i
		g.lat, g.lon = append(g.lat, c[0]), append(g.lon, c[1])
		return i, true
	}
	var edges []rawEdge
	for _, w := range ways {
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
		return nil, fmt.Errorf("routing: %s has no roads", path)
	}
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
	return g, nil
}

// Nodes is the number of graph nodes.
func (g *Graph) Nodes() int { return len(g.lat) }

func cell(lat, lon float64) [2]int32 {
	return [2]int32{int32(math.Floor(lat * 100)), int32(math.Floor(lon * 100))}
}

// usable reports whether edge e can be driven with costing c.
func (g *Graph) usable(e int32, c int) bool {
	if speeds[classes[g.class[e]]][c] == 0 {
		return false
	}
	return g.forward[e] || c == 3 // pedestrians ignore one-way streets
}

// snap finds the nearest node with a usable edge within maxM meters.
func (g *Graph) snap(lat, lon float64, c int, maxM float64) (int32, float64, bool) {
	k := cell(lat, lon)
	best, bestD := int32(-1), maxM
	for r := int32(0); r <= 5 && best < 0; r++ {
		for dy := -r; dy <= r; dy++ {
			for dx := -r; dx <= r; dx++ {
				if max(abs32(dy), abs32(dx)) != r {
					continue
				}
				for _, i := range g.grid[[2]int32{k[0] + dy, k[1] + dx}] {
					if d := geo.Distance(geo.Point{Lat: lat, Lon: lon}, geo.Point{Lat: g.lat[i], Lon: g.lon[i]}); d < bestD && g.hasUsable(i, c) {
						best, bestD = i, d
					}
				}
			}
		}
	}
	return best, bestD, best >= 0
}

func abs32(v int32) int32 {
	if v < 0 {
		return -v
	}
	return v
}

func (g *Graph) hasUsable(i int32, c int) bool {
	for e := g.first[i]; e < g.first[i+1]; e++ {
		if speeds[classes[g.class[e]]][c] > 0 {
			return true
		}
	}
	return false
}

type item struct {
	node int32
	sec  float64
}

type pq []item

func (q pq) Len() int           { return len(q) }
func (q pq) Less(i, j int) bool { return q[i].sec < q[j].sec }
func (q pq) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *pq) Push(x any)        { *q = append(*q, x.(item)) }
func (q *pq) Pop() any          { o := *q; it := o[len(o)-1]; *q = o[:len(o)-1]; return it }

// Cost is a route's distance in meters and time in seconds.
type Cost struct {
	Meters, Seconds float64
	OK              bool
}

// fromSource runs Dijkstra on time from src until every target settled.
func (g *Graph) fromSource(src int32, targets []int32, c int, sec, dist []float64, seen []bool) []Cost {
	for i := range sec {
		sec[i], dist[i], seen[i] = math.Inf(1), 0, false
	}
	want := map[int32]bool{}
	for _, t := range targets {
		if t >= 0 {
			want[t] = true
		}
	}
	left := len(want)
	sec[src] = 0
	q := &pq{{src, 0}}
	for q.Len() > 0 && left > 0 {
		it := heap.Pop(q).(item)
		if seen[it.node] {
			continue
		}
		seen[it.node] = true
		if want[it.node] {
			left--
		}
		for e := g.first[it.node]; e < g.first[it.node+1]; e++ {
			if !g.usable(e, c) {
				continue
			}
			v := g.to[e]
			t := it.sec + float64(g.meters[e])/(speeds[classes[g.class[e]]][c]/3.6)
			if t < sec[v] {
				sec[v], dist[v] = t, dist[it.node]+float64(g.meters[e])
				heap.Push(q, item{v, t})
			}
		}
	}
	out := make([]Cost, len(targets))
	for i, t := range targets {
		if t >= 0 && seen[t] {
			out[i] = Cost{Meters: dist[t], Seconds: sec[t], OK: true}
		}
	}
	return out
}
