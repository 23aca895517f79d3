package routing

import (
	"bytes"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
)

// profileVersion names the rules a saved graph was built with; a change
// to the profiles, the graph or the file layout changes it, so that an
// old file is rebuilt rather than read.
const profileVersion = "p7"

// cacheMagic opens a saved file.
const cacheMagic = "FHROUTE3"

// cachePath is the common start of a saved graph's files, for an
// extract and a version of the road rules: the road network is
// base+".roads", each costing's hierarchy base+"."+costing, and its
// hierarchy without the roads of an avoid set base+"."+costing+"-avoid-"
// +the set (costingFile).
func cachePath(dir, extractHash, version string) string {
	return filepath.Join(dir, "roads-"+extractHash+"-"+version)
}

// savedGeometry is a Graph's road network as saved.
type savedGeometry struct {
	Lat, Lon     []float64
	Cum          []float32
	PtFirst      []int32
	Way          []int32
	Tail, Head   []int32
	WayID        []int64
	Rules        []float32 // per way, costing and direction: kmh, rate
	Restricted   []uint8   // per way: bit 2c+dir
	Limits       []float64 // per way: height, width, length, weight
	Class        []uint8   // per way: its RoadClass
	LimitKmh     []float32 // per way: the speed limit forward, backward
	Posted       []uint8   // per way: bit per direction whose limit is posted
	Avoid        []uint8   // per way: the kinds of road it is (Avoid)
	NoStart      []uint8   // per way: the costings no location snaps onto it for
	Junctions    int
	Signal       []bool
	Blocked      []uint8
	InnerSig     []uint16
	Restrictions []savedRestriction
}

type savedRestriction struct {
	Via, From, To int32
	Only          bool
	Costings      uint8
}

// savedCost is a costing's hierarchy as saved.
type savedCost struct {
	Costing  uint8
	Avoid    uint8 // the kinds of road it leaves out
	Edges    int   // of the road network it belongs to
	Keep     []bool
	Rank     []int32
	Up, Down savedArcs
	LoopNode []int32
	Loops    []uint32 // w, d, m per loop node
}

type savedArcs struct {
	First, To []int32
	W, D, M   []uint32
}

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var errBadCache = errors.New("routing: saved graph is damaged")

// writeFile saves v as gob behind the magic, the payload's length and
// its CRC-32C, through a temporary file renamed into place, so that a
// crash leaves the old file or the new one.
func writeFile(path string, v any) error {
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return fmt.Errorf("routing: saving the graph: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("routing: saving the graph: %w", err)
	}
	hdr := make([]byte, 0, len(cacheMagic)+12)
	hdr = append(hdr, cacheMagic...)
	hdr = binary.LittleEndian.AppendUint64(hdr, uint64(buf.Len()))
	hdr = binary.LittleEndian.AppendUint32(hdr, crc32.Checksum(buf.Bytes(), crcTable))
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("routing: saving the graph: %w", err)
	}
	_, err = f.Write(append(hdr, buf.Bytes()...))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("routing: saving the graph: %w", err)
	}
	return nil
}

// decodeFile checks a saved file's frame and decodes its payload into v.
func decodeFile(b []byte, v any) error {
	h := len(cacheMagic) + 12
	if len(b) < h || string(b[:len(cacheMagic)]) != cacheMagic {
		return errBadCache
	}
	n := binary.LittleEndian.Uint64(b[len(cacheMagic):])
	if n != uint64(len(b)-h) || crc32.Checksum(b[h:], crcTable) != binary.LittleEndian.Uint32(b[len(cacheMagic)+8:]) {
		return errBadCache
	}
	if err := gob.NewDecoder(bytes.NewReader(b[h:])).Decode(v); err != nil {
		return fmt.Errorf("%w: %v", errBadCache, err)
	}
	return nil
}

func writeGeometry(base string, g *Graph) error { return writeFile(base+".roads", g.savedGeometry()) }

// readGeometry loads the road network saved by writeGeometry; a missing,
// damaged or inconsistent file is an error, never a graph.
func readGeometry(base string) (*Graph, error) {
	b, err := os.ReadFile(base + ".roads")
	if err != nil {
		return nil, err
	}
	return decodeGeometry(b)
}

func decodeGeometry(b []byte) (g *Graph, err error) {
	var s savedGeometry
	if err := decodeFile(b, &s); err != nil {
		return nil, err
	}
	defer func() { // a file that passed its checksum but does not hold together
		if recover() != nil {
			g, err = nil, errBadCache
		}
	}()
	return s.graph()
}

// costingFile is where costing c's hierarchy without the roads of avoid
// is saved: base.auto, base.auto-avoid-tolls+ferries…
func costingFile(base string, c Costing, avoid Avoid) string {
	if avoid == 0 {
		return base + "." + c.String()
	}
	return base + "." + c.String() + "-avoid-" + avoid.String()
}

func writeCosting(base string, cg *costGraph) error {
	return writeFile(costingFile(base, cg.c, cg.avoid), cg.saved(len(cg.keep)/2))
}

// readCosting loads costing c's hierarchy without the roads of avoid for
// g, saved by writeCosting.
func readCosting(base string, g *Graph, c Costing, avoid Avoid) (*costGraph, error) {
	b, err := os.ReadFile(costingFile(base, c, avoid))
	if err != nil {
		return nil, err
	}
	cg, err := decodeCosting(b, g.Edges(), c)
	if err == nil && cg.avoid != avoid {
		return nil, errBadCache
	}
	return cg, err
}

func decodeCosting(b []byte, edges int, c Costing) (cg *costGraph, err error) {
	var s savedCost
	if err := decodeFile(b, &s); err != nil {
		return nil, err
	}
	defer func() {
		if recover() != nil {
			cg, err = nil, errBadCache
		}
	}()
	if Costing(s.Costing) != c || s.Edges != edges {
		return nil, errBadCache
	}
	return s.costGraph()
}

func (g *Graph) savedGeometry() *savedGeometry {
	s := &savedGeometry{Lat: g.lat, Lon: g.lon, Cum: g.cum, PtFirst: g.ptFirst, Way: g.way, Tail: g.tail, Head: g.head,
		Junctions: g.junctions, Signal: g.signal, Blocked: g.blocked, InnerSig: g.innerSig}
	for _, w := range g.ways {
		s.WayID = append(s.WayID, w.id)
		var bits uint8
		for c := 0; c < numCostings; c++ {
			for d := 0; d < 2; d++ {
				r := w.rules[c][d]
				s.Rules = append(s.Rules, r.kmh, r.rate)
				if r.restricted {
					bits |= 1 << (2*c + d)
				}
			}
		}
		s.Restricted = append(s.Restricted, bits)
		s.Limits = append(s.Limits, w.limit.Height, w.limit.Width, w.limit.Length, w.limit.Weight)
		s.Class, s.LimitKmh, s.Posted = append(s.Class, uint8(w.class)), append(s.LimitKmh, w.limitKmh[0], w.limitKmh[1]), append(s.Posted, w.posted)
		s.Avoid, s.NoStart = append(s.Avoid, uint8(w.avoid)), append(s.NoStart, w.noStart)
	}
	for _, r := range g.restrictions {
		s.Restrictions = append(s.Restrictions, savedRestriction{r.via, r.from, r.to, r.only, r.costings})
	}
	return s
}

func (cg *costGraph) saved(edges int) *savedCost {
	sc := &savedCost{Costing: uint8(cg.c), Avoid: uint8(cg.avoid), Edges: edges, Keep: cg.keep, Rank: cg.h.rank,
		Up: saveArcs(cg.h.up), Down: saveArcs(cg.h.down), LoopNode: cg.h.loopNode}
	for _, l := range cg.h.loopCost {
		sc.Loops = append(sc.Loops, l.w, l.d, l.m)
	}
	return sc
}

// graph rebuilds a Graph's road network from what was saved, checking
// that the pieces fit together.
func (s *savedGeometry) graph() (*Graph, error) {
	edges := len(s.Tail)
	if edges == 0 || len(s.Head) != edges || len(s.Way) != edges || len(s.InnerSig) != edges || len(s.PtFirst) != edges+1 ||
		len(s.Lat) != len(s.Lon) || len(s.Cum) != len(s.Lat) || int(s.PtFirst[edges]) != len(s.Lat) ||
		len(s.Rules) != len(s.WayID)*numCostings*4 || len(s.Restricted) != len(s.WayID) || len(s.Limits) != len(s.WayID)*4 ||
		len(s.Class) != len(s.WayID) || len(s.LimitKmh) != 2*len(s.WayID) || len(s.Posted) != len(s.WayID) || len(s.Avoid) != len(s.WayID) || len(s.NoStart) != len(s.WayID) ||
		len(s.Signal) != s.Junctions || len(s.Blocked) != s.Junctions {
		return nil, errBadCache
	}
	g := &Graph{lat: s.Lat, lon: s.Lon, cum: s.Cum, ptFirst: s.PtFirst, way: s.Way, tail: s.Tail, head: s.Head,
		junctions: s.Junctions, signal: s.Signal, blocked: s.Blocked, innerSig: s.InnerSig}
	for e := 0; e < edges; e++ {
		if s.PtFirst[e+1]-s.PtFirst[e] < 2 || s.Way[e] < 0 || int(s.Way[e]) >= len(s.WayID) ||
			s.Tail[e] < 0 || int(s.Tail[e]) >= s.Junctions || s.Head[e] < 0 || int(s.Head[e]) >= s.Junctions {
			return nil, errBadCache
		}
	}
	for i, id := range s.WayID {
		w := wayMeta{id: id, limit: TruckSize{s.Limits[4*i], s.Limits[4*i+1], s.Limits[4*i+2], s.Limits[4*i+3]},
			class: RoadClass(s.Class[i]), limitKmh: [2]float32{s.LimitKmh[2*i], s.LimitKmh[2*i+1]}, posted: s.Posted[i], avoid: Avoid(s.Avoid[i]), noStart: s.NoStart[i]}
		for c := 0; c < numCostings; c++ {
			for d := 0; d < 2; d++ {
				k := 2 * ((i*numCostings+c)*2 + d)
				w.rules[c][d] = dirRule{kmh: s.Rules[k], rate: s.Rules[k+1], restricted: s.Restricted[i]&(1<<(2*c+d)) != 0}
			}
		}
		g.ways = append(g.ways, w)
	}
	for _, r := range s.Restrictions {
		if r.Via < 0 || int(r.Via) >= s.Junctions || r.From < 0 || int(r.From) >= len(s.WayID) || r.To < 0 || int(r.To) >= len(s.WayID) {
			return nil, errBadCache
		}
		g.restrictions = append(g.restrictions, turnRestriction{r.Via, r.From, r.To, r.Only, r.Costings})
	}
	g.grid = newSegGrid(g)
	return g, nil
}

// costGraph rebuilds a costing's hierarchy from what was saved, checking
// that the pieces fit together.
func (sc *savedCost) costGraph() (*costGraph, error) {
	n := 2 * sc.Edges
	if len(sc.Keep) != n || len(sc.Rank) != n || len(sc.Loops) != 3*len(sc.LoopNode) {
		return nil, errBadCache
	}
	// the ranks number the kept nodes 0, 1, … without a gap
	kept := 0
	for v, r := range sc.Rank {
		if sc.Keep[v] != (r >= 0) {
			return nil, errBadCache
		}
		if r >= 0 {
			kept++
		}
	}
	seen := make([]bool, kept)
	for _, r := range sc.Rank {
		if r >= int32(kept) || r >= 0 && seen[r] {
			return nil, errBadCache
		}
		if r >= 0 {
			seen[r] = true
		}
	}
	if !validArcs(sc.Up, kept) || !validArcs(sc.Down, kept) {
		return nil, errBadCache
	}
	h := &hierarchy{rank: sc.Rank, up: loadArcs(sc.Up), down: loadArcs(sc.Down), loopNode: sc.LoopNode}
	for i, v := range sc.LoopNode {
		if v < 0 || int(v) >= kept || i > 0 && v <= sc.LoopNode[i-1] {
			return nil, errBadCache
		}
		h.loopCost = append(h.loopCost, cost3{sc.Loops[3*i], sc.Loops[3*i+1], sc.Loops[3*i+2]})
	}
	cg := newCostGraph(Costing(sc.Costing), sc.Keep, h)
	cg.avoid = Avoid(sc.Avoid)
	return cg, nil
}

func validArcs(a savedArcs, n int) bool {
	if len(a.First) != n+1 || a.First[0] != 0 {
		return false
	}
	for v := 0; v < n; v++ {
		if a.First[v+1] < a.First[v] {
			return false
		}
	}
	m := int(a.First[n])
	if len(a.To) != m || len(a.W) != m || len(a.D) != m && len(a.D) != 0 || len(a.M) != m {
		return false
	}
	for _, t := range a.To {
		if t < 0 || int(t) >= n {
			return false
		}
	}
	return true
}

func saveArcs(a arcs) savedArcs {
	s := savedArcs{First: a.first, D: a.d, M: a.m, To: make([]int32, len(a.tw)), W: make([]uint32, len(a.tw))}
	for i, x := range a.tw {
		s.To[i], s.W[i] = x.to, x.w
	}
	return s
}

func loadArcs(s savedArcs) arcs {
	a := arcs{first: s.First, m: s.M, tw: make([]toW, len(s.To))}
	if len(s.D) > 0 {
		a.d = s.D
	}
	for i := range s.To {
		a.tw[i] = toW{s.To[i], s.W[i]}
	}
	return a
}
