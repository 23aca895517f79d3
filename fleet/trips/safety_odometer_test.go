package trips_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestSafetyBreakdownOnTheTrack: a trip whose distance is its odometer's
// keeps its scores counted on the track (docs/trips.md, Distance and
// fuel), and so does its safety analysis: the behaviours' scores and the
// risk factors' score impacts are over the 25 km the points drove, as
// the trip's safety score is, not over the 45 km of the odometer. One
// moderate hard stop in 25 km scores 100·e^(−5/25) = 81.9 for braking.
func TestSafetyBreakdownOnTheTrack(t *testing.T) {
	g := newGarage(t)
	g.drive("km", 1, trips.StopRequest{OdometerReading: odo(10_000)})
	start := g.clk.now()
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "km", DriverID: "d1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	// 25 km at 60 km/h with one stop from 60 to 0 in 3 s (−0.567 g,
	// moderate) half way, and a gentle start again
	var speeds []float64
	for len(speeds) < 750 {
		speeds = append(speeds, 60)
	}
	speeds = append(speeds, 40, 20, 0, 0)
	for v := 3.0; v < 60; v += 3 {
		speeds = append(speeds, v)
	}
	for km := 0.0; km < 25; {
		speeds = append(speeds, 60)
		km = 0
		for _, v := range speeds {
			km += v / 3600
		}
	}
	g.driveNorth(t, tr.TripID, start, speeds)
	res, err := g.svc.Stop(g.ctx, "org-a", "test", tr.TripID, trips.StopRequest{OdometerReading: odo(10_045)})
	if err != nil {
		t.Fatal(err)
	}
	a := res.Analytics
	if a.DistanceSource != trips.SourceOdometer || a.HarshEvents.HarshBraking != 1 {
		t.Fatalf("want the odometer's distance and one hard stop: %+v", a)
	}
	near(t, "gps_distance_km", a.GPSDistanceKm, 25, 0.1)
	an, err := g.svc.SafetyScore(g.ctx, "org-a", "test", tr.TripID, true, false)
	if err != nil {
		t.Fatal(err)
	}
	near(t, "overall_safety_score (100·e^(−1/25))", an.OverallSafetyScore, 96.1, 0.1)
	near(t, "braking_score", an.ScoreBreakdown.BrakingScore, 81.9, 0.2)
	for _, rf := range an.RiskFactors {
		if rf.FactorType == "harsh_braking" {
			near(t, "harsh_braking score_impact", rf.ScoreImpact, 18.1, 0.2)
		}
	}
}

// driveNorth uploads a drive due north from 40°N 83°W of a point a
// second from start, at speeds (km/h), each point at 4 m accuracy, in
// batches of trips.MaxBatch, the clock advanced past its last point.
func (g *garage) driveNorth(t *testing.T, tripID string, start time.Time, speeds []float64) {
	t.Helper()
	g.clk.advance(time.Duration(len(speeds)+1) * time.Second)
	lat, acc := 40.0, 4.0
	var pts []trips.LocationIn
	for i, v := range speeds {
		la, lo, sp := lat, -83.0, v
		pts = append(pts, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &sp, AccuracyMeters: &acc,
			Timestamp: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)})
		lat += v / 3.6 / 111195
	}
	for i := 0; i < len(pts); i += trips.MaxBatch {
		b := &trips.BatchRequest{TripID: tripID, Locations: pts[i:min(i+trips.MaxBatch, len(pts))]}
		if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", b); err != nil {
			t.Fatal(err)
		}
	}
}
