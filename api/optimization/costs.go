package optimization

import (
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Roads prices travel on the road network: one row per source, one
// column per target, locations as {lat, lon}. *routing.Graph satisfies it.
type Roads interface {
	Matrix(sources, targets [][2]float64, c routing.Costing) [][]routing.Cost
}

// The cost sources an answer names.
const (
	SourceMatrix      = "matrix"       // the caller's own matrix
	SourceRoads       = "road_network" // the routing engine's road graph
	SourceGreatCircle = "great_circle" // the great-circle model (vrp.Km, vrp.Minutes)
)

// costing is the fleet's road costing: the vehicles' vehicle_type when
// they all name the same costing, auto otherwise.
func costing(vs []Vehicle) routing.Costing {
	c, ok := routing.ParseCosting(vs[0].VehicleType)
	if !ok {
		return routing.Auto
	}
	for _, v := range vs[1:] {
		if v.VehicleType != vs[0].VehicleType {
			return routing.Auto
		}
	}
	return c
}

// roadMatrix sets pr.Matrix from the road graph over every distinct
// place of the problem, and the rows of its stops and vehicles. A pair
// the graph cannot route keeps the great-circle model; missing counts
// those pairs.
func roadMatrix(roads Roads, pr *vrp.Problem, c routing.Costing) (missing int) {
	rows := map[[2]float64]int{}
	var pts [][2]float64
	row := func(lat, lon float64) int {
		k := [2]float64{lat, lon}
		if i, ok := rows[k]; ok {
			return i
		}
		rows[k] = len(pts)
		pts = append(pts, k)
		return len(pts) - 1
	}
	for i := range pr.Stops {
		s := &pr.Stops[i]
		s.Loc = row(s.Lat, s.Lon)
	}
	for i := range pr.Vehicles {
		v := &pr.Vehicles[i]
		v.StartLoc, v.EndLoc = row(v.StartLat, v.StartLon), row(v.EndLat, v.EndLon)
	}
	n := len(pts)
	costs := roads.Matrix(pts, pts, c)
	m := &vrp.Matrix{Size: n, Minutes: make([]float64, n*n), Km: make([]float64, n*n)}
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			if i < len(costs) && j < len(costs[i]) && costs[i][j].OK {
				m.Km[i*n+j], m.Minutes[i*n+j] = costs[i][j].Meters/1000, costs[i][j].Seconds/60
				continue
			}
			missing++
			km := vrp.Km(pts[i][0], pts[i][1], pts[j][0], pts[j][1])
			m.Km[i*n+j], m.Minutes[i*n+j] = km, vrp.Minutes(km)
		}
	}
	pr.Matrix = m
	return missing
}
