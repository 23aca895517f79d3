package geocode

import (
	"math"

	"github.com/fleethub/fleethub/internal/geo"
)

// cellKey is a 0.01° grid cell (about 1.1 km of latitude).
func cellKey(lat, lon float64) [2]int32 {
	return [2]int32{int32(math.Floor(lat * 100)), int32(math.Floor(lon * 100))}
}

// buildGrid indexes addresses by grid cell for Nearest.
func (ix *Index) buildGrid() {
	ix.grid = make(map[[2]int32][]int32, len(ix.addrs)/8+1)
	for i, a := range ix.addrs {
		k := cellKey(a.Latitude, a.Longitude)
		ix.grid[k] = append(ix.grid[k], int32(i))
	}
}

// Nearest returns the standardized address nearest to a point, within
// maxM meters (reverse geocoding for location_names enrichment). It looks
// in the point's grid cell and the eight around it, so it is exact for a
// maxM up to one cell's width, 0.01° of longitude: about 850 m at 40° N
// and 790 m at 45° N. Beyond that an address in a farther cell may be
// missed. The pipeline asks within 250 m.
func (ix *Index) Nearest(lat, lon, maxM float64) (string, bool) {
	c := cellKey(lat, lon)
	best, bestD := -1, maxM
	for dy := int32(-1); dy <= 1; dy++ {
		for dx := int32(-1); dx <= 1; dx++ {
			for _, i := range ix.grid[[2]int32{c[0] + dy, c[1] + dx}] {
				a := &ix.addrs[i]
				if d := geo.Distance(geo.Point{Lat: lat, Lon: lon}, geo.Point{Lat: a.Latitude, Lon: a.Longitude}); d <= bestD {
					best, bestD = int(i), d
				}
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return ix.addrs[best].Text, true
}
