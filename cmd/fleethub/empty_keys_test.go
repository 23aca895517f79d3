package main

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

// TestEmptyKeysRefused: a key of a free-form object (a trip's metadata at
// the start, on update and on resume, a geofence's metadata, an event's
// event_data) that is the empty string, at any depth, is 400
// validation_failed naming it as an odd name is named (metadata[""]),
// and nothing is created or changed.
func TestEmptyKeysRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	trip := n.startTrip(k, "veh-keys", time.Now().Add(-time.Minute))
	paused := n.startTrip(k, "veh-keys-2", time.Now().Add(-time.Minute))
	if r := n.do("POST", "/v1/trips/"+paused+"/pause", k, map[string]any{"reason": "break"}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}
	ev := func(data string) string {
		return `{"events":[{"event_type":"door_open","category":"vehicle_events","timestamp":"` + time.Now().Add(-time.Second).UTC().Format(time.RFC3339Nano) +
			`","severity":"low","source":{"vehicle_id":"v"},"event_data":` + data + `}]}`
	}
	for _, c := range []struct {
		method, path, body, field string
	}{
		{"POST", "/v1/trips", `{"vehicle_id":"veh-keys-3","metadata":{"":1}}`, `metadata[""]`},
		{"PUT", "/v1/trips/" + trip + "/metadata", `{"metadata":{"purpose":"delivery","a":{"b":[{"":"x"}]}}}`, `metadata.a.b[0][""]`},
		{"POST", "/v1/trips/" + paused + "/resume", `{"metadata":{"":null}}`, `metadata[""]`},
		{"POST", "/v1/geofences", `{"name":"depot","type":"circle","center":{"latitude":40,"longitude":-83},"radius_m":200,"metadata":{"":"x"}}`, `metadata[""]`},
		{"POST", "/v1/events", ev(`{"":1}`), `events[0].event_data[""]`},
		{"POST", "/v1/events", ev(`{"a":{"":1}}`), `events[0].event_data.a[""]`},
	} {
		r := n.do(c.method, c.path, k, c.body)
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(r.Body, &e); r.Status != 400 || err != nil || e.Error.Code != "validation_failed" ||
			len(e.Error.Details) != 1 || e.Error.Details[c.field] != jsonpath.EmptyKeyRefusal {
			t.Errorf("%s %s %s: %d %s, want validation_failed naming %s", c.method, c.path, c.body, r.Status, r.Body, c.field)
		}
	}
	if g := n.do("GET", "/v1/trips/"+paused, k, nil).json(t); g["status"] != "paused" {
		t.Errorf("the refused resume resumed the trip: %v", g["status"])
	}
	if g := n.do("GET", "/v1/trips/"+trip, k, nil).json(t); g["metadata"].(map[string]any)["a"] != nil {
		t.Errorf("the refused update changed the metadata: %v", g["metadata"])
	}
	if r := n.do("GET", "/v1/geofences", k, nil); len(r.json(t)["geofences"].([]any)) != 0 {
		t.Errorf("the refused geofence was created: %s", r.Body)
	}
}
