package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// TestBenchmarksCountEveryTripOfTheWindow: the fleet's 30-day average
// and percentile count every completed trip of the window, not a first
// thousand: 1,000 trips of three weeks ago scoring 50 and 200 of
// yesterday scoring 90 average 56.7, and the trip analysed (scoring
// 100) beats all 1,200.
func TestBenchmarksCountEveryTripOfTheWindow(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	now := time.Now().UTC()
	put := func(i int, start time.Time, score float64) {
		tr := store.Trip{ID: fmt.Sprintf("trip_bench_%04d", i), Org: "org-a", Env: "test", VehicleID: fmt.Sprintf("veh-b%d", i),
			DriverID: "drv-other", Status: store.TripCompleted, StartTime: start, EndTime: start.Add(20 * time.Minute),
			Metadata: []byte("{}"), MetadataHistory: []byte("[]"), State: []byte("{}"), Version: 1, CreatedAt: start, UpdatedAt: start,
			Totals: store.TripTotals{DistanceKm: 10, DurationMinutes: 20, SafetyScore: score, EcoScore: 90, LocationsCount: 1200}}
		if err := n.app.store.CreateTrip(t.Context(), tr); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 1000 {
		put(i, now.Add(-21*24*time.Hour).Add(time.Duration(i)*time.Second), 50)
	}
	for i := range 200 {
		put(1000+i, now.Add(-24*time.Hour).Add(time.Duration(i)*time.Second), 90)
	}
	t0 := now.Add(-30 * time.Minute).Truncate(time.Second)
	id := n.startTrip(k, "veh-analysed", t0)
	if r := n.batch(k, id, track(t0, 40, -83, constant(40, 700))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	sa := n.do("GET", "/v1/analytics/safety-score/"+id, k, nil).json(t)
	if sa["overall_safety_score"] != 100.0 {
		t.Fatalf("overall_safety_score %v", sa["overall_safety_score"])
	}
	fl := sa["benchmarks"].(map[string]any)["vs_fleet_average"].(map[string]any)
	if fl["fleet_30d_average"] != 56.7 || fl["percentile"] != 100.0 || fl["comparison"] != "above" {
		t.Errorf("vs_fleet_average %v, want an average of 56.7 over the 1,200 trips, percentile 100, above", fl)
	}
}
