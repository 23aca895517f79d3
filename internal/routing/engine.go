package routing

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"
	"sync/atomic"
)

// costGraph is the routing graph of one costing: which edge-direction
// nodes are in its largest strongly connected component (the only ones
// locations snap to) and its contraction hierarchy.
type costGraph struct {
	c      Costing
	avoid  Avoid // the kinds of road it leaves out
	keep   []bool
	h      *hierarchy
	free   chan *search       // scratch of the graph's size, for reuse
	tables chan *tableScratch // bucket scratch of the graph's size, for reuse
}

// takeTable is a table's scratch with zeroed counts.
func (cg *costGraph) takeTable() *tableScratch {
	select {
	case t := <-cg.tables:
		clear(t.counts)
		return t
	default:
		return &tableScratch{counts: make([]int32, len(cg.h.up.first))}
	}
}

func (cg *costGraph) giveTable(t *tableScratch) {
	select {
	case cg.tables <- t:
	default:
	}
}

// scratch takes a search's scratch from the pool; release gives it back.
func (cg *costGraph) scratch() *search {
	select {
	case s := <-cg.free:
		return s
	default:
		return newSearch(len(cg.h.up.first) - 1)
	}
}

func (cg *costGraph) release(s *search) {
	s.reset()
	s.placed, s.ends = s.placed[:0], s.ends[:0]
	select {
	case cg.free <- s:
	default:
	}
}

func newCostGraph(c Costing, keep []bool, h *hierarchy) *costGraph {
	return &costGraph{c: c, keep: keep, h: h, free: make(chan *search, 8), tables: make(chan *tableScratch, 4)}
}

// Options are how Load finds and keeps its preprocessing.
type Options struct {
	// CacheDir, when set, keeps the built graph in files named for the
	// extract's content and the profiles' version (the road network, and
	// each costing's hierarchy once it is built), and loads them from
	// there instead of building them again.
	CacheDir string
	// Costings are prepared when the graph loads; the others when a
	// query first asks for them. Nil: auto only.
	Costings []Costing
	// version names the road rules in the saved files' names; ""
	// means profileVersion (tests change it to see a rebuild).
	version string
}

// Load builds the road network of an OpenStreetMap extract (.osm.pbf, or
// OSM XML plain, gzip- or bzip2-compressed, recognised by content), or
// loads it from opts.CacheDir when it was built before (the saved files
// are named for the file's bytes), and prepares opts.Costings.
func Load(path string, opts Options) (*Graph, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("routing: %w", err)
	}
	defer f.Close()
	var g *Graph
	var base string
	if opts.CacheDir != "" {
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return nil, fmt.Errorf("routing: %s: %w", path, err)
		}
		version := opts.version
		if version == "" {
			version = profileVersion
		}
		base = cachePath(opts.CacheDir, hex.EncodeToString(h.Sum(nil))[:24], version)
		// a cache that is missing or cannot be read is built again
		if cached, err := readGeometry(base); err == nil {
			g = cached
			g.loaded = true
		} else {
			if _, err := f.Seek(0, io.SeekStart); err != nil {
				return nil, fmt.Errorf("routing: %s: %w", path, err)
			}
		}
	}
	if g == nil {
		x, err := importOSM(bufio.NewReaderSize(f, 1<<20))
		if err != nil {
			return nil, fmt.Errorf("routing: %s: %w", path, err)
		}
		if g, err = buildGeometry(x); errors.Is(err, errNoRoads) {
			return nil, fmt.Errorf("routing: %s has no roads", path)
		} else if err != nil {
			return nil, fmt.Errorf("routing: %s: %w", path, err)
		}
		if base != "" {
			if err := writeGeometry(base, g); err != nil {
				return nil, err
			}
		}
	}
	g.cacheBase = base
	costings := opts.Costings
	if costings == nil {
		costings = []Costing{Auto}
	}
	if err := g.prepare(costings...); err != nil {
		return nil, err
	}
	return g, nil
}

// Read builds the road network of an extract stream in any of Load's
// formats. It returns an error, never a partial graph, when the stream
// is malformed or holds no roads. Costings are built when a query first
// asks for them.
func Read(r io.Reader) (*Graph, error) {
	x, err := importOSM(r)
	if err != nil {
		return nil, err
	}
	return buildGeometry(x)
}

// prepare builds (or loads) the given costings, two at a time.
func (g *Graph) prepare(cs ...Costing) error {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	errs := make([]error, len(cs))
	for i, c := range cs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			_, errs[i] = g.costing(c)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// buildCostings prepares every costing.
func (g *Graph) buildCostings() error { return g.prepare(Auto, Truck, Bicycle, Pedestrian) }

// costing is costing c's routing graph: loaded from the cache when it is
// there, else built (and saved), once. The error is from saving it; the
// graph is usable all the same.
func (g *Graph) costing(c Costing) (*costGraph, error) {
	lc := g.lazy(c, 0)
	return lc.cg, lc.err
}

// graphOf is costing c's routing graph with the roads of avoid left
// out, whether saving it failed or not.
func (g *Graph) graphOf(c Costing, avoid Avoid) *costGraph { return g.lazy(c, avoid).cg }

// lazy makes costing c's graph without the roads of avoid on first use.
func (g *Graph) lazy(c Costing, avoid Avoid) *lazyCost {
	lc := &g.costs[c][avoid]
	lc.once.Do(func() {
		if g.cacheBase != "" {
			if cg, err := readCosting(g.cacheBase, g, c, avoid); err == nil {
				lc.cg = cg
				lc.loaded.Store(true)
				return
			}
		}
		a, keep := g.network(c, g.wayFilter(c, defaultTruck, avoid))
		lc.cg = newCostGraph(c, keep, contract(a, keep, witnessFor(c)))
		lc.cg.avoid = avoid
		if g.cacheBase != "" {
			lc.err = writeCosting(g.cacheBase, lc.cg)
		}
	})
	return lc
}

// lazyCost is a costing's graph, made on first use.
type lazyCost struct {
	once   sync.Once
	cg     *costGraph
	err    error       // from saving it; the graph is usable all the same
	loaded atomic.Bool // read from the saved file, not built
}

// Loaded reports whether the road network, and costing c's graph, were
// read from the files saved under Options.CacheDir rather than built
// from the extract. A costing not prepared yet reports false.
func (g *Graph) Loaded(c Costing) (network, costing bool) { return g.LoadedAvoiding(c, 0) }

// LoadedAvoiding is Loaded for costing c's graph without the roads of
// avoid.
func (g *Graph) LoadedAvoiding(c Costing, avoid Avoid) (network, costing bool) {
	if c >= numCostings || avoid >= avoidSets {
		return g.loaded, false
	}
	return g.loaded, g.costs[c][avoid].loaded.Load()
}

// network is the turn graph of costing c and its largest strongly
// connected component, with U-turns allowed where every other way on
// leaves that component.
func (g *Graph) network(c Costing, fits func(int32) bool) (arcs, []bool) {
	a := g.turnArcs(c, g.restrictions, fits, nil)
	keep := largestComponent(a)
	a = g.turnArcs(c, g.restrictions, fits, keep)
	return a, largestComponent(a)
}

// startable reports whether a location may snap onto edge e for costing
// c: not onto a ferry, nor for cars and trucks onto a private service
// road.
func (g *Graph) startable(e int32, c Costing) bool {
	w := &g.ways[g.way[e]]
	return w.avoid&AvoidFerries == 0 && w.noStart&(1<<c) == 0
}

// Snap is where a location met the road network: Meters from it to the
// road, or OK false and the Reason there is no route from or to it.
type Snap struct {
	Meters float64
	OK     bool
	Reason string
}

// Request is a many-to-many query: locations are {lat, lon}.
type Request struct {
	Sources, Targets [][2]float64
	Costing          Costing
	// Truck, for the truck costing, is the vehicle's size; nil or zero
	// fields take the default truck's (4.11 m high, 2.6 m wide, 21.9 m
	// long, 36.3 t).
	Truck *TruckSize
	// Avoid leaves kinds of road out of every route (tolls, highways,
	// ferries); locations snap to the roads that remain.
	Avoid Avoid
	// Observed, when not nil, are speeds measured on the roads (a
	// fleet's own): the edges it knows are timed at its speeds, and the
	// routes are the quickest by those times, found by a search of the
	// whole network per source (slower than the prepared hierarchy,
	// which knows only the costing's speeds).
	Observed Speeds
}

// Speeds gives the speed, km/h, measured on edge e travelled forward
// (in the order of its points) or backward; ok false where none is.
type Speeds func(e int, backward bool) (kmh float64, ok bool)

// Result is the answer to a Request: Costs[i][j] from source i to
// target j, and where each location snapped.
type Result struct {
	Costs            [][]Cost
	Sources, Targets []Snap
}

// Route answers a many-to-many query. Safe for concurrent use.
func (g *Graph) Route(req Request) Result {
	if req.Avoid >= avoidSets {
		req.Avoid &= avoidSets - 1 // kinds not defined avoid nothing
	}
	cg := g.graphOf(req.Costing, req.Avoid) // a failure to save leaves the graph usable
	size := defaultTruck
	if req.Costing == Truck && req.Truck != nil {
		size = withDefaults(*req.Truck)
	}
	res := Result{Sources: make([]Snap, len(req.Sources)), Targets: make([]Snap, len(req.Targets))}
	// on lies the network the locations snap to: the costing's largest
	// strongly connected component, or, for a truck whose size closes or
	// opens other ways than the default truck's, that of its own turn
	// graph, so that no location lands on an island this truck cannot
	// leave
	on, plain := cg, false
	var own arcs
	if req.Costing == Truck && !g.sameTruckNetwork(size) {
		var keep []bool
		own, keep = g.network(Truck, g.wayFilter(Truck, size, req.Avoid))
		on, plain = &costGraph{c: cg.c, avoid: req.Avoid, keep: keep, h: cg.h}, true
	}
	place := func(pts [][2]float64, snaps []Snap, source bool) [][]phantom {
		out := make([][]phantom, len(pts))
		for i, p := range pts {
			ss, ok := g.snap(p[0], p[1], MaxSnapM, func(e int32) bool { return (on.keep[2*e] || on.keep[2*e+1]) && g.startable(e, req.Costing) })
			switch {
			case !validPoint(p):
				snaps[i] = Snap{Reason: "not a valid latitude and longitude"}
			case !ok:
				snaps[i] = Snap{Reason: fmt.Sprintf("no road the %s costing may use within %d m", req.Costing, MaxSnapM)}
			default:
				snaps[i] = Snap{Meters: ss[0].dist, OK: true}
				for _, s := range ss {
					out[i] = append(out[i], on.phantoms(g, s, source)...)
				}
			}
		}
		return out
	}
	srcs := place(req.Sources, res.Sources, true)
	dsts := place(req.Targets, res.Targets, false)
	if req.Observed != nil {
		// the same roads as the graph the locations snapped to, timed
		// at the speeds observed, the locations' own edges too
		g.observedPhantoms(srcs, req.Costing, req.Observed, true)
		g.observedPhantoms(dsts, req.Costing, req.Observed, false)
		a := g.turnArcsObserved(req.Costing, g.restrictions, g.wayFilter(req.Costing, size, req.Avoid), on.keep, req.Observed)
		res.Costs = plainTable(a, srcs, dsts)
	} else if plain {
		res.Costs = plainTable(own, srcs, dsts)
	} else {
		res.Costs = cg.table(srcs, dsts)
	}
	return res
}

// observedPhantoms times the part of a location's edge ahead of it
// (source) or behind it (target) at the speed obs knows on that edge, as
// turnArcsObserved times whole edges.
func (g *Graph) observedPhantoms(ps [][]phantom, c Costing, obs Speeds, source bool) {
	for _, l := range ps {
		for i := range l {
			p := &l[i]
			kmh, ok := obs(int(p.v/2), p.v%2 == 1)
			if !ok || kmh <= 0 {
				continue
			}
			w, d, _ := g.edgeCost(p.v, c)
			L := g.meters(p.v / 2)
			rest := 1.0
			if L > 0 {
				rest = max(0, min(1, (L-p.pos)/L))
			}
			od := 10 * L / (kmh / 3.6)
			nw, nd := int64(math.Round((w+od-d)*rest)), int64(math.Round(od*rest))
			if !source {
				nw, nd = -nw, -nd
			}
			p.start.w, p.start.d = nw, nd
		}
	}
}

// Matrix is Route's costs with the default truck.
func (g *Graph) Matrix(sources, targets [][2]float64, c Costing) [][]Cost {
	return g.Route(Request{Sources: sources, Targets: targets, Costing: c}).Costs
}

func validPoint(p [2]float64) bool {
	return !math.IsNaN(p[0]) && !math.IsNaN(p[1]) && p[0] >= -90 && p[0] <= 90 && p[1] >= -180 && p[1] <= 180
}

func withDefaults(s TruckSize) TruckSize {
	d := defaultTruck
	if s.Height > 0 {
		d.Height = s.Height
	}
	if s.Width > 0 {
		d.Width = s.Width
	}
	if s.Length > 0 {
		d.Length = s.Length
	}
	if s.Weight > 0 {
		d.Weight = s.Weight
	}
	return d
}

// fitsSize reports whether a truck of size s is within a way's posted
// limits.
func fitsSize(lim, s TruckSize) bool {
	return (lim.Height == 0 || s.Height <= lim.Height) && (lim.Width == 0 || s.Width <= lim.Width) &&
		(lim.Length == 0 || s.Length <= lim.Length) && (lim.Weight == 0 || s.Weight <= lim.Weight)
}

// sameTruckNetwork reports whether a truck of size s may use exactly the
// ways the default truck may, so the prebuilt hierarchy answers for it.
func (g *Graph) sameTruckNetwork(s TruckSize) bool {
	for _, w := range g.ways {
		if w.limit != (TruckSize{}) && fitsSize(w.limit, s) != fitsSize(w.limit, defaultTruck) {
			return false
		}
	}
	return true
}

// plainTable answers for a truck whose size closes or opens ways the
// default truck's hierarchy does not: one Dijkstra per source over a,
// the turn graph of the ways it fits.
func plainTable(a arcs, srcs, dsts [][]phantom) [][]Cost {
	n := len(a.first) - 1
	none := arcs{first: make([]int32, n+1)}
	// the turn graph numbers its nodes by edge and direction
	byEdge := func(ps [][]phantom) [][]phantom {
		out := make([][]phantom, len(ps))
		for i, l := range ps {
			for _, p := range l {
				p.node = p.v
				out[i] = append(out[i], p)
			}
		}
		return out
	}
	srcs, dsts = byEdge(srcs), byEdge(dsts)
	// the targets' nodes: a search ends once it has settled them all
	var targets []int32
	isTarget := make([]bool, n)
	for _, ps := range dsts {
		for _, p := range ps {
			if !isTarget[p.node] {
				isTarget[p.node] = true
				targets = append(targets, p.node)
			}
		}
	}
	out := make([][]Cost, len(srcs))
	parallel(len(srcs), func() (func(int), func()) {
		s := newSearch(n)
		settled := make([]bool, n)
		return func(i int) {
			row := make([]Cost, len(dsts))
			out[i] = row
			if len(srcs[i]) == 0 {
				return
			}
			// A target on a start node may lie behind the source on its
			// edge and need the way round (the start's alt label), which
			// only the whole search is sure to find: the search then
			// runs on.
			left := len(targets)
			for _, p := range srcs[i] {
				if isTarget[p.node] {
					left = -1
				}
			}
			s.run(srcs[i], a, none, func(v int32, _ label) {
				if left > 0 && isTarget[v] && !settled[v] {
					settled[v] = true
					if left--; left == 0 {
						s.stop = true
					}
				}
			})
			for _, v := range targets {
				settled[v] = false
			}
			for t, ps := range dsts {
				best := noLabel
				for _, p := range ps {
					l := s.label(p.node)
					if l == noLabel {
						continue
					}
					if si := s.startIndex(p.node); si >= 0 && l == s.starts[si].start && p.pos < s.starts[si].pos {
						l = s.alt[si] // behind the source: come round
						if l == noLabel {
							continue
						}
					}
					if c := l.plus(p.start); c.w < best.w {
						best = c
					}
				}
				if best != noLabel {
					row[t] = costOf(best)
				}
			}
		}, func() {}
	})
	return out
}
