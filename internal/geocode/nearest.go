package geocode

import (
	"math"
	"sort"

	"github.com/fleethub/fleethub/internal/geo"
)

// cellKey is a 0.01° grid cell (about 1.1 km of latitude), packed.
func cellKey(lat, lon int64) uint64 {
	return uint64(uint32(int32(lat))<<0) | uint64(uint32(int32(lon)))<<32
}

// cellOf is the cell of a point in degrees × 1e7.
func cellOf(lat, lon int32) (int64, int64) {
	return floorDiv(int64(lat), 100000), floorDiv(int64(lon), 100000)
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && (a < 0) != (b < 0) {
		q--
	}
	return q
}

// buildGrid indexes addresses by grid cell for Nearest.
func (ix *Index) buildGrid() {
	keys := make([]uint64, len(ix.adLat))
	set := map[uint64]bool{}
	for i := range ix.adLat {
		la, lo := cellOf(ix.adLat[i], ix.adLon[i])
		keys[i] = cellKey(la, lo)
		set[keys[i]] = true
	}
	ix.cells = make([]uint64, 0, len(set))
	for k := range set {
		ix.cells = append(ix.cells, k)
	}
	sort.Slice(ix.cells, func(i, j int) bool { return ix.cells[i] < ix.cells[j] })
	ix.cellAddr = invert(len(ix.cells), len(keys), func(i int) []uint32 {
		c := sort.Search(len(ix.cells), func(j int) bool { return ix.cells[j] >= keys[i] })
		return []uint32{uint32(c)}
	})
}

// Nearest returns the standardized address nearest to a point, within
// maxM meters (reverse geocoding for location_names enrichment). It looks
// in the point's grid cell and the eight around it, so it is exact for a
// maxM up to one cell's width, 0.01° of longitude: about 850 m at 40° N
// and 790 m at 45° N. Beyond that an address in a farther cell may be
// missed. The pipeline asks within 250 m.
func (ix *Index) Nearest(lat, lon, maxM float64) (string, bool) {
	if math.IsNaN(lat) || math.IsNaN(lon) || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return "", false
	}
	cla, clo := cellOf(int32(math.Round(lat*coordScale)), int32(math.Round(lon*coordScale)))
	p := geo.Point{Lat: lat, Lon: lon}
	best, bestD := -1, maxM
	for dy := int64(-1); dy <= 1; dy++ {
		for dx := int64(-1); dx <= 1; dx++ {
			k := cellKey(cla+dy, clo+dx)
			c := sort.Search(len(ix.cells), func(j int) bool { return ix.cells[j] >= k })
			if c == len(ix.cells) || ix.cells[c] != k {
				continue
			}
			for _, i := range ix.cellAddr.row(c) {
				q := geo.Point{Lat: float64(ix.adLat[i]) / coordScale, Lon: float64(ix.adLon[i]) / coordScale}
				if d := geo.Distance(p, q); d < bestD || d == bestD && best < 0 {
					best, bestD = int(i), d
				}
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return ix.address(best).Text, true
}
