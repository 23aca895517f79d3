package main

import (
	"encoding/json"
	"testing"
)

// TestEnrichmentTellsTheTripAsItIsNow: driver_info and vehicle_details of
// a trip's own events describe the trip as the event leaves it: the
// trip_completed event says the last trip is completed, not the status it
// had a moment before; a trip without points has no safety score (null,
// as the trip itself shows it).
func TestEnrichmentTellsTheTripAsItIsNow(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"event_filters":    map[string]any{"vehicle_ids": []string{"veh-en"}, "categories": []string{"trip_lifecycle"}},
		"processing_rules": map[string]any{"enrichment": []string{"driver_info", "vehicle_details"}}})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	c := n.dial(t, k, "stream_id="+r.json(t)["stream_id"].(string))
	expectSubscribed(t, c)
	// each change is read off the stream before the next one is made: the
	// enrichment describes the vehicle's and the driver's last trip as the
	// store has it when the event is enriched
	check := func(typ, trip, status string) {
		t.Helper()
		var m struct {
			EventType  string                    `json:"event_type"`
			Enrichment map[string]map[string]any `json:"enrichment"`
		}
		if err := json.Unmarshal(readEvents(t, c, 1)[0].Message, &m); err != nil {
			t.Fatal(err)
		}
		if m.EventType != typ {
			t.Fatalf("message is %s, want %s", m.EventType, typ)
		}
		for _, what := range []string{"driver_info", "vehicle_details"} {
			info := m.Enrichment[what]
			if info["last_trip_id"] != trip || info["last_trip_status"] != status {
				t.Errorf("%s of %s: %v; want last trip %s %s", what, m.EventType, info, trip, status)
			}
			// the trips have no point: no score was measured
			if sc, ok := info["last_trip_safety_score"]; !ok || sc != nil {
				t.Errorf("%s of %s: last_trip_safety_score %v (present %v), want null for a trip without points", what, m.EventType, sc, ok)
			}
		}
	}
	for range 2 {
		r = n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-en", "driver_id": "drv-en"})
		if r.Status != 201 {
			t.Fatalf("start trip: %d %s", r.Status, r.Body)
		}
		id := r.json(t)["trip_id"].(string)
		check("trip_started", id, "active")
		if r = n.do("POST", "/v1/trips/"+id+"/stop", k, map[string]any{}); r.Status != 200 {
			t.Fatalf("stop trip: %d %s", r.Status, r.Body)
		}
		check("trip_completed", id, "completed")
	}
}
