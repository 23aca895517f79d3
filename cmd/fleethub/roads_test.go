package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

// TestSpeedingJudgedByTheRoad: with --osm, a trip driven at 60 km/h up
// Main Street of the tiny extract (a residential street without
// maxspeed: the class default, 40 km/h) raises a speeding event whose
// speed_limit_kmh is 40 and whose match is road, published on the feed
// once the road matcher beside the upload has judged the points (the
// upload's answer does not wait for it), and the trip's route follows the
// street (match matched); the same trip on a node without --osm stays
// under the configured 100 km/h and its route joins the points (match
// none).
func TestSpeedingJudgedByTheRoad(t *testing.T) {
	sp := append(constant(60, 13), constant(20, 10)...)
	for _, osm := range []bool{true, false} {
		cfg := testConfig(t)
		if osm {
			cfg.OSM = tinyOSM(t)
		}
		n := startNode(t, cfg)
		k := n.key("org-a", "test", []string{"all"}, 100000)
		t0 := time.Now().Add(-30 * time.Minute).UTC()
		id := n.startTrip(k, "veh-1", t0)
		r := n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": id, "locations": track(t0.Add(time.Second), 40, -83, sp)})
		if r.Status != 200 {
			t.Fatalf("upload: %d %s", r.Status, r.Body)
		}
		var evs []any // the stop at the end is harsh braking too
		for _, e := range r.json(t)["events_detected"].([]any) {
			if e.(map[string]any)["event_type"] == "speeding" {
				evs = append(evs, e)
			}
		}
		// the route follows Main Street with --osm, the points without it
		rt := n.do("GET", "/v1/trips/"+id+"/route", k, nil)
		if rt.Status != 200 {
			t.Fatalf("route: %d %s", rt.Status, rt.Body)
		}
		g := rt.json(t)["route_geometry"].(map[string]any)
		if want := map[bool]string{true: "matched", false: "none"}[osm]; g["match"] != want || (g["matched_distance_km"] != nil) != osm {
			t.Errorf("--osm %v: route_geometry match %v, matched_distance_km %v", osm, g["match"], g["matched_distance_km"])
		}
		if !osm {
			if len(evs) != 0 {
				t.Errorf("without --osm, 60 km/h under the configured limit raised %v", evs)
			}
			continue
		}
		if len(evs) != 0 {
			t.Errorf("the upload answered speeding %v: with --osm the road matcher judges it", evs)
		}
		var p feedPage
		waitfor.Until(t, 10*time.Second, "the speeding event on the feed", func() bool {
			p = n.pull(t, k, "types=events&vehicle_id=veh-1&event_type=speeding")
			return len(p.Entries) > 0
		})
		var e struct {
			EventData map[string]any `json:"event_data"`
		}
		if err := json.Unmarshal(p.Entries[0].Message, &e); err != nil {
			t.Fatal(err)
		}
		if len(p.Entries) != 1 || e.EventData["speed_limit_kmh"] != 40.0 || e.EventData["match"] != "road" {
			t.Errorf("speeding events %d, the first %v, want one judged by the street's 40 km/h", len(p.Entries), e.EventData)
		}
		// the matcher's lag and overflow are on /metrics
		if m := n.do("GET", "/metrics", "", nil); m.Status != 200 || !strings.Contains(string(m.Body), "fleethub_trips_road_match_lag_seconds_count") ||
			!strings.Contains(string(m.Body), "fleethub_trips_road_match_overflow_points_total 0") {
			t.Errorf("/metrics: %d, without the road matcher's lag or overflow", m.Status)
		}
	}
}

// TestEventsGetTheirRoad: with --osm, an event sent without speed_limit
// and road_type is published with those of the road it lies on (Main
// Street of the tiny extract: residential, 40 km/h), as the feed shows.
func TestEventsGetTheirRoad(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	ts := time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)
	r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{map[string]any{"event_id": "road-e1", "event_type": "door_open", "category": "vehicle_events",
		"timestamp": ts, "severity": "low", "source": map[string]any{"vehicle_id": "veh-road"}, "location": map[string]any{"latitude": 40.0005, "longitude": -83.0}}}})
	if r.Status != 202 {
		t.Fatalf("POST /v1/events: %d %s", r.Status, r.Body)
	}
	p := n.pull(t, k, "types=events&vehicle_id=veh-road&wait=5")
	if len(p.Entries) != 1 {
		t.Fatalf("feed entries %+v", p.Entries)
	}
	var m struct {
		Location struct {
			SpeedLimit *float64 `json:"speed_limit"`
			RoadType   string   `json:"road_type"`
		} `json:"location"`
	}
	if err := json.Unmarshal(p.Entries[0].Message, &m); err != nil {
		t.Fatal(err)
	}
	if m.Location.SpeedLimit == nil || *m.Location.SpeedLimit != 40 || m.Location.RoadType != "residential" {
		t.Errorf("published location %s, want speed_limit 40 and road_type residential", p.Entries[0].Message)
	}
}
