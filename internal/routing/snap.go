package routing

import (
	"math"
	"slices"
	"sort"
)

// MaxSnapM is how far, in meters, a location may be from the nearest road
// its costing may use; a location farther away gets no route.
const MaxSnapM = 2000

// gridDeg is the side of a snapping grid cell in degrees (about 280 m of
// latitude); an extract so wide that this would make more than maxCells
// cells gets larger ones.
const (
	gridDeg  = 0.0025
	maxCells = 1 << 20
)

// segGrid finds the road segments near a point: every segment (the piece
// of an edge between two successive points, named by its first point) is
// listed in each cell its bounding box touches, cells in rows of the
// extract's bounding box.
type segGrid struct {
	lat0, lon0 float64
	deg        float64 // side of a cell
	rows, cols int32
	first      []int32 // cell c's segments are segs[first[c]:first[c+1]]
	segs       []int32
}

func newSegGrid(g *Graph) segGrid {
	minLat, minLon, maxLat, maxLon := math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)
	for i := range g.lat {
		minLat, maxLat = min(minLat, g.lat[i]), max(maxLat, g.lat[i])
		minLon, maxLon = min(minLon, g.lon[i]), max(maxLon, g.lon[i])
	}
	deg := max(gridDeg, math.Sqrt((maxLat-minLat)*(maxLon-minLon)/maxCells), max(maxLat-minLat, maxLon-minLon)/4096)
	s := segGrid{deg: deg, lat0: math.Floor(minLat/deg) * deg, lon0: math.Floor(minLon/deg) * deg}
	s.rows = int32((maxLat-s.lat0)/deg) + 1
	s.cols = int32((maxLon-s.lon0)/deg) + 1
	s.first = make([]int32, int(s.rows*s.cols)+1)
	each := func(f func(cell, seg int32)) {
		for e := 0; e < len(g.tail); e++ {
			for k := g.ptFirst[e]; k < g.ptFirst[e+1]-1; k++ {
				r0, c0 := s.cellOf(g.lat[k], g.lon[k])
				r1, c1 := s.cellOf(g.lat[k+1], g.lon[k+1])
				for r := min(r0, r1); r <= max(r0, r1); r++ {
					for c := min(c0, c1); c <= max(c0, c1); c++ {
						f(r*s.cols+c, k)
					}
				}
			}
		}
	}
	each(func(cell, _ int32) { s.first[cell+1]++ })
	for i := 1; i < len(s.first); i++ {
		s.first[i] += s.first[i-1]
	}
	s.segs = make([]int32, s.first[len(s.first)-1])
	pos := append([]int32(nil), s.first[:len(s.first)-1]...)
	each(func(cell, seg int32) { s.segs[pos[cell]] = seg; pos[cell]++ })
	return s
}

func (s *segGrid) cellOf(lat, lon float64) (int32, int32) {
	r := int32(math.Floor((lat - s.lat0) / s.deg))
	c := int32(math.Floor((lon - s.lon0) / s.deg))
	return min(max(r, 0), s.rows-1), min(max(c, 0), s.cols-1)
}

// snap is a location placed on an edge: pos meters from the edge's first
// point, dist meters from where the caller was.
type snap struct {
	edge int32
	pos  float64
	dist float64
}

// edgeOf is the edge that point k belongs to.
func (g *Graph) edgeOf(k int32) int32 {
	return int32(sort.Search(len(g.ptFirst)-1, func(e int) bool { return g.ptFirst[e+1] > k }))
}

// snapTie is how much farther, meters, than the nearest edge another
// edge may be and still take the location: a location on a junction
// lies on every edge that meets there, and may leave along any of them.
const snapTie = 1.0

// snap places a location on the nearest segment of an edge that ok
// accepts, within maxM meters, and on any other edge within snapTie of
// that; false when there is none. The nearest comes first.
func (g *Graph) snap(lat, lon, maxM float64, ok func(e int32) bool) ([]snap, bool) {
	if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return nil, false
	}
	s := &g.grid
	// rings of cells around the point, nearest first, until a ring lies
	// farther than the best so far
	cosLat := math.Cos(lat * math.Pi / 180)
	const mPerDeg = 111_195.0
	cellM := s.deg * mPerDeg * max(cosLat, 0.01)
	// where the point lies against the grid; a point outside it starts
	// from the nearest cell, counting the distance to the grid's edge
	r0 := math.Floor((lat - s.lat0) / s.deg)
	c0 := math.Floor((lon - s.lon0) / s.deg)
	outside := max(0, -r0, r0-float64(s.rows-1), -c0, c0-float64(s.cols-1))
	if (outside-1)*cellM > maxM {
		return nil, false
	}
	best := snap{edge: -1, dist: maxM}
	var near []snap // candidates within snapTie of the best so far
	cr, cc := s.cellOf(lat, lon)
	for ring := int32(0); ; ring++ {
		if float64(ring-1)*cellM+max(outside-1, 0)*cellM > best.dist+snapTie || ring > s.rows+s.cols {
			break
		}
		for r := cr - ring; r <= cr+ring; r++ {
			if r < 0 || r >= s.rows {
				continue
			}
			for c := cc - ring; c <= cc+ring; c++ {
				if c < 0 || c >= s.cols || (r != cr-ring && r != cr+ring && c != cc-ring && c != cc+ring) {
					continue
				}
				cell := r*s.cols + c
				for _, k := range s.segs[s.first[cell]:s.first[cell+1]] {
					d, t := project(lat, lon, cosLat, g.lat[k], g.lon[k], g.lat[k+1], g.lon[k+1])
					if d > best.dist+snapTie || d > maxM {
						continue
					}
					e := g.edgeOf(k)
					if !ok(e) {
						continue
					}
					c := snap{edge: e, pos: float64(g.cum[k]) + t*float64(g.cum[k+1]-g.cum[k]), dist: d}
					near = append(near, c)
					if d < best.dist {
						best = c
					}
				}
			}
		}
	}
	if best.edge < 0 {
		return nil, false
	}
	out := []snap{best}
	for _, c := range near {
		if c.dist <= best.dist+snapTie && c != best && !slices.ContainsFunc(out, func(o snap) bool { return o.edge == c.edge }) {
			out = append(out, c)
		}
	}
	return out, true
}

// project is the distance in meters from a point to the segment a–b, and
// where along the segment (0 at a, 1 at b) the nearest point lies, on a
// local flat projection.
func project(lat, lon, cosLat, alat, alon, blat, blon float64) (float64, float64) {
	const mPerDeg = 111_195.0
	ax, ay := (alon-lon)*cosLat*mPerDeg, (alat-lat)*mPerDeg
	bx, by := (blon-lon)*cosLat*mPerDeg, (blat-lat)*mPerDeg
	dx, dy := bx-ax, by-ay
	t := 0.0
	if l := dx*dx + dy*dy; l > 0 {
		t = min(max(-(ax*dx+ay*dy)/l, 0), 1)
	}
	px, py := ax+t*dx, ay+t*dy
	return math.Hypot(px, py), t
}
