package routing

import (
	"container/heap"
	"math"
	"sync"

	"github.com/fleethub/fleethub/internal/geo"
)

// MaxSnapM is how far, in meters, a location may be from the nearest road
// its costing may use.
const MaxSnapM = 5000

// matrixWorkers is how many sources a Matrix call routes at once.
const matrixWorkers = 2

// Cost is a route's distance in meters and time in seconds; OK is false
// when there is no route.
type Cost struct {
	Meters, Seconds float64
	OK              bool
}

// Matrix computes the cost from every source to every target, one row per
// source and one column per target; locations are {lat, lon}. A location
// farther than MaxSnapM from a road the costing may use, or on a part of
// the graph the other cannot reach, has no route (OK false). The cost
// includes the legs between each location and the node it snaps to, at the
// costing's residential speed (at least 5 km/h). Safe for concurrent use.
func (g *Graph) Matrix(sources, targets [][2]float64, c Costing) [][]Cost {
	snapT := make([]int32, len(targets))
	snapTD := make([]float64, len(targets))
	for i, t := range targets {
		n, d, ok := g.snap(t[0], t[1], c, MaxSnapM)
		if !ok {
			n = -1
		}
		snapT[i], snapTD[i] = n, d
	}
	// walking the snap legs at the costing's residential speed
	legKmh := math.Max(speeds["residential"][c], 5)
	out := make([][]Cost, len(sources))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < matrixWorkers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sec, dist, seen := make([]float64, g.Nodes()), make([]float64, g.Nodes()), make([]bool, g.Nodes())
			for i := range work {
				row := make([]Cost, len(targets))
				src, sd, ok := g.snap(sources[i][0], sources[i][1], c, MaxSnapM)
				if ok {
					costs := g.fromSource(src, snapT, c, sec, dist, seen)
					for j, k := range costs {
						if !k.OK {
							continue
						}
						legs := sd + snapTD[j]
						row[j] = Cost{Meters: k.Meters + legs, Seconds: k.Seconds + legs/(legKmh/3.6), OK: true}
					}
				}
				out[i] = row
			}
		}()
	}
	for i := range sources {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// snap finds the nearest node with a usable edge within maxM meters,
// searching the grid in rings of cells around the point (at most five).
func (g *Graph) snap(lat, lon float64, c Costing, maxM float64) (int32, float64, bool) {
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

// fromSource runs Dijkstra on time from src until every target settled.
// sec, dist and seen are the caller's scratch space, one entry per node;
// a target of -1 has no route.
func (g *Graph) fromSource(src int32, targets []int32, c Costing, sec, dist []float64, seen []bool) []Cost {
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
			t := it.sec + float64(g.meters[e])/(kmh(g.class[e], c)/3.6)
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
