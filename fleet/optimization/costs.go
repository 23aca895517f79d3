package optimization

import (
	"context"
	"github.com/fleethub/fleethub/internal/roadspeed"
	"github.com/fleethub/fleethub/internal/routing"
	"github.com/fleethub/fleethub/internal/vrp"
)

// Roads prices travel on the road network: one row per source, one
// column per target, locations as {lat, lon}. *routing.Graph satisfies it.
type Roads interface {
	Matrix(sources, targets [][2]float64, c routing.Costing) [][]routing.Cost
}

// AvoidingRoads prices travel on the road network with kinds of road left
// out (constraints.traffic_restrictions). *routing.Graph satisfies it.
type AvoidingRoads interface {
	MatrixAvoiding(sources, targets [][2]float64, c routing.Costing, avoid routing.Avoid) [][]routing.Cost
}

// ObservingRoads prices travel on the road network with roads timed at
// speeds observed on them (real_time_traffic). *routing.Graph satisfies
// it.
type ObservingRoads interface {
	MatrixObserved(sources, targets [][2]float64, c routing.Costing, avoid routing.Avoid, obs routing.Speeds) [][]routing.Cost
}

// Traffic is the speeds an organization's fleet was observed driving on
// the roads, over hours of the week (roadspeed.Table).
type Traffic interface {
	Observed(ctx context.Context, org string, hours []int) *roadspeed.Speeds
}

var (
	_ Roads          = (*routing.Graph)(nil)
	_ AvoidingRoads  = (*routing.Graph)(nil)
	_ ObservingRoads = (*routing.Graph)(nil)
	_ Traffic        = (*roadspeed.Table)(nil)
	_ Traffic        = (*roadspeed.Shared)(nil)
)

// The cost sources an answer names.
const (
	SourceMatrix = "matrix"       // the caller's own matrix
	SourceRoads  = "road_network" // the routing engine's road graph
	// SourceRoadsTraffic is the road graph with the cars' legs timed at
	// the speeds the fleet was observed driving (real_time_traffic).
	SourceRoadsTraffic = "road_network_traffic"
	SourceGreatCircle  = "great_circle" // the great-circle model (vrp.Km, vrp.Minutes)
)

// costing is a vehicle's road costing: its vehicle_type when that names
// one (auto, truck, bicycle, pedestrian), auto otherwise.
func costing(v Vehicle) routing.Costing {
	if c, ok := routing.ParseCosting(v.VehicleType); ok {
		return c
	}
	return routing.Auto
}

// roadMatrix prices travel on the road graph over every distinct place of
// the problem, one matrix per distinct costing of the vehicles (vs, in
// the order of pr.Vehicles): the first vehicle's costing is pr.Matrix,
// the others pr.Profiles, and each vehicle's Profile names its own. It
// sets the rows of the stops and vehicles. A pair the graph cannot route
// keeps the great-circle model; missing counts those pairs, once however
// many costings could not route them. With avoid, the roads of those
// kinds are left out (roads is then an AvoidingRoads).
func roadMatrix(roads Roads, pr *vrp.Problem, vs []Vehicle, avoid routing.Avoid, obs routing.Speeds) (missing int) {
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
	profile := map[routing.Costing]int{}
	var costings []routing.Costing
	for i := range pr.Vehicles {
		v := &pr.Vehicles[i]
		v.StartLoc, v.EndLoc = row(v.StartLat, v.StartLon), row(v.EndLat, v.EndLon)
		c := costing(vs[i])
		k, ok := profile[c]
		if !ok {
			k = len(costings)
			profile[c] = k
			costings = append(costings, c)
		}
		v.Profile = k
	}
	n := len(pts)
	unrouted := make([]bool, n*n)
	pr.Matrix, pr.Profiles = nil, nil
	for _, c := range costings {
		var costs [][]routing.Cost
		if or, ok := roads.(ObservingRoads); ok && obs != nil && c == routing.Auto {
			costs = or.MatrixObserved(pts, pts, c, avoid, obs)
		} else if ar, ok := roads.(AvoidingRoads); ok && avoid != 0 {
			costs = ar.MatrixAvoiding(pts, pts, c, avoid)
		} else {
			costs = roads.Matrix(pts, pts, c)
		}
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
				if !unrouted[i*n+j] {
					unrouted[i*n+j] = true
					missing++
				}
				km := vrp.Km(pts[i][0], pts[i][1], pts[j][0], pts[j][1])
				m.Km[i*n+j], m.Minutes[i*n+j] = km, km/greatCircleKmh(c)*60
			}
		}
		if pr.Matrix == nil {
			pr.Matrix = m
		} else {
			pr.Profiles = append(pr.Profiles, m)
		}
	}
	return missing
}

// greatCircleKmh is a costing's speed on the great-circle model (the
// distance lengthened by vrp.Detour): cars and trucks vrp.SpeedKmh,
// bicycles 15 km/h and pedestrians 5 km/h, the default speeds of OSRM's
// bicycle and foot profiles.
func greatCircleKmh(c routing.Costing) float64 {
	switch c {
	case routing.Bicycle:
		return 15
	case routing.Pedestrian:
		return 5
	}
	return vrp.SpeedKmh
}

// greatCircle prices travel without a road network, by the great-circle
// model at each costing's speed (greatCircleKmh). It is the Roads of a
// fleet whose vehicles do not all travel at vrp.SpeedKmh.
type greatCircle struct{}

var _ Roads = greatCircle{}

func (greatCircle) Matrix(sources, targets [][2]float64, c routing.Costing) [][]routing.Cost {
	kmh := greatCircleKmh(c)
	out := make([][]routing.Cost, len(sources))
	for i, a := range sources {
		row := make([]routing.Cost, len(targets))
		for j, b := range targets {
			km := vrp.Km(a[0], a[1], b[0], b[1])
			row[j] = routing.Cost{Meters: km * 1000, Seconds: km / kmh * 3600, OK: true}
		}
		out[i] = row
	}
	return out
}

// mixedSpeeds reports whether some vehicle travels at another speed than
// vrp.SpeedKmh on the great-circle model.
func mixedSpeeds(vs []Vehicle) bool {
	for _, v := range vs {
		if greatCircleKmh(costing(v)) != vrp.SpeedKmh {
			return true
		}
	}
	return false
}
