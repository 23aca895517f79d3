package main

import (
	"strings"
	"testing"
	"time"
)

// blankRefusal is the message of an identifier sent blank (docs/api.md).
const blankRefusal = "must not be empty or only white space"

// TestBlankIdentifiersRefused: an identifier sent as an empty string or
// only white space, in a body, an array of ids or a path, is 400 naming
// it by its full path, on every area; nothing is created, changed or
// published; the same request with a normal id goes through.
func TestBlankIdentifiersRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 1_000_000)
	now := time.Now().UTC().Format(time.RFC3339)
	trip := n.do("POST", "/v1/trips", k, map[string]any{"vehicle_id": "veh-up"}).json(t)["trip_id"].(string)
	point := map[string]any{"latitude": 40.0, "longitude": -83.0, "timestamp": now}
	telemetry := func(v string) map[string]any {
		return map[string]any{"timestamp": now, "vehicle_id": v, "data_type": "environmental", "data": map[string]any{"cabin": map[string]any{"temp": 21}}}
	}
	event := func(src map[string]any) map[string]any {
		return map[string]any{"event_type": "harsh_braking", "category": "safety_events", "timestamp": now, "severity": "high", "source": src}
	}
	incident := func(f string, v any) map[string]any {
		b := map[string]any{"event_type": "breakdown", "severity_level": "moderate", "location": map[string]any{"latitude": 40.0, "longitude": -83.0}}
		b[f] = v
		return b
	}
	for _, blank := range []string{"", " ", "\t\n", "\u00a0\u3000"} {
		for _, c := range []struct {
			area, method, path string
			body               any
			field              string
		}{
			{"trips", "POST", "/v1/trips", map[string]any{"vehicle_id": blank}, "vehicle_id"},
			{"trips", "POST", "/v1/trips", map[string]any{"vehicle_id": "veh-9", "driver_id": blank}, "driver_id"},
			{"uploads", "POST", "/v1/locations/batch", map[string]any{"trip_id": trip, "locations": []any{point}, "device_info": map[string]any{"device_id": blank}}, "device_info.device_id"},
			{"uploads", "POST", "/v1/locations/batch", map[string]any{"trip_id": blank, "locations": []any{point}}, "trip_id"},
			{"uploads", "POST", "/v1/locations/single", map[string]any{"trip_id": trip, "latitude": 40.0, "longitude": -83.0, "timestamp": now, "device_info": map[string]any{"device_id": blank}}, "device_info.device_id"},
			{"ingest", "POST", "/v1/telemetry", map[string]any{"messages": []any{telemetry("veh-t"), telemetry(blank)}}, "messages[1].vehicle_id"},
			{"ingest", "POST", "/v1/events", map[string]any{"events": []any{event(map[string]any{"vehicle_id": blank, "driver_id": "drv-1"})}}, "events[0].source.vehicle_id"},
			{"ingest", "POST", "/v1/events", map[string]any{"events": []any{event(map[string]any{"driver_id": blank, "vehicle_id": "veh-e"})}}, "events[0].source.driver_id"},
			{"ingest", "POST", "/v1/events", map[string]any{"events": []any{event(map[string]any{"vehicle_id": "veh-e", "trip_id": blank})}}, "events[0].source.trip_id"},
			{"ingest", "POST", "/v1/events", map[string]any{"events": []any{event(map[string]any{"vehicle_id": "veh-e"}), event(map[string]any{"vehicle_id": "veh-e", "fleet_id": blank})}}, "events[1].source.fleet_id"},
			{"streams", "POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"veh-1", blank}}}, "event_filters.vehicle_ids[1]"},
			{"streams", "POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"driver_ids": []string{blank}}}, "event_filters.driver_ids[0]"},
			{"streams", "POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"geofences": []string{blank}}}, "event_filters.geofences[0]"},
			{"streams", "POST", "/api/v1/streaming/telemetry/start", map[string]any{"data_types": []string{"gps_enhanced"}, "vehicles": []string{blank}}, "vehicles[0]"},
			{"streams", "POST", "/api/v1/streaming/events/stop", map[string]any{"stream_id": blank}, "stream_id"},
			{"optimization", "POST", "/api/v1/fleet/optimization/routes", map[string]any{"fleet_id": "f-1",
				"vehicles":     []any{map[string]any{"vehicle_id": blank, "start_location": map[string]any{"latitude": 40.0, "longitude": -83.0}}},
				"destinations": []any{map[string]any{"destination_id": "d-1", "location": map[string]any{"latitude": 40.01, "longitude": -83.0}}}}, "vehicles[0].vehicle_id"},
			{"optimization", "POST", "/api/v1/fleet/optimization/routes", map[string]any{"fleet_id": "f-1",
				"vehicles":     []any{map[string]any{"vehicle_id": "v-1", "start_location": map[string]any{"latitude": 40.0, "longitude": -83.0}}},
				"destinations": []any{map[string]any{"destination_id": "d-1", "location": map[string]any{"latitude": 40.01, "longitude": -83.0}}, map[string]any{"destination_id": blank, "location": map[string]any{"latitude": 40.02, "longitude": -83.0}}}}, "destinations[1].destination_id"},
			{"emergency", "POST", "/v1/emergency/incidents", incident("vehicle_id", blank), "vehicle_id"},
			{"emergency", "POST", "/v1/emergency/incidents", incident("driver_id", blank), "driver_id"},
			{"emergency", "POST", "/v1/emergency/alerts", map[string]any{"alert_type": "road_hazard", "severity": "high", "title": "Flooding", "message": "Avoid the river road",
				"affected_area":   map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5},
				"target_audience": map[string]any{"specific_drivers": []string{"drv-1", blank}}, "delivery_channels": []any{map[string]any{"channel": "in_app_alert"}}}, "target_audience.specific_drivers[1]"},
			{"emergency", "POST", "/v1/emergency/alerts", map[string]any{"alert_type": "road_hazard", "severity": "high", "title": "Flooding", "message": "Avoid the river road",
				"affected_area":   map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5},
				"target_audience": map[string]any{"specific_vehicles": []string{blank}}, "delivery_channels": []any{map[string]any{"channel": "in_app_alert"}}}, "target_audience.specific_vehicles[0]"},
			{"contacts", "POST", "/v1/contacts", map[string]any{"name": "Ann", "roles": []string{"dispatcher"}, "links": map[string]any{"vehicle_ids": []string{blank}}}, "links.vehicle_ids[0]"},
			{"vehicles", "PUT", "/v1/vehicles/veh-p", map[string]any{"fleet_id": blank}, "fleet_id"},
			{"tokens", "POST", "/v1/tokens", map[string]any{"scopes": []string{"streams:read"}, "stream_ids": []string{blank}}, "stream_ids[0]"},
		} {
			r := n.do(c.method, c.path, k, c.body)
			if r.Status != 400 || r.errCode(t) != "validation_failed" {
				t.Errorf("%s %s %s with %q: %d %s, want 400 validation_failed", c.area, c.method, c.path, blank, r.Status, r.Body)
				continue
			}
			d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
			if d[c.field] != blankRefusal {
				t.Errorf("%s %s with %q: details %v, want %s: %s", c.method, c.path, blank, d, c.field, blankRefusal)
			}
		}
		// path parameters: refused as every malformed path parameter is
		for _, c := range []struct{ method, path, param string }{
			{"GET", "/v1/trips/%20", "trip_id"},
			{"PUT", "/v1/vehicles/%20%20", "vehicle_id"},
			{"PUT", "/v1/devices/%C2%A0/settings", "device_id"},
			{"DELETE", "/v1/api-keys/%20", "key_id"},
		} {
			var body any
			if c.method == "PUT" {
				body = map[string]any{}
			}
			r := n.do(c.method, c.path, k, body)
			d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
			if r.Status != 400 || r.errCode(t) != "invalid_request" || d[c.param] != blankRefusal {
				t.Errorf("%s %s: %d %s, want 400 invalid_request naming %s", c.method, c.path, r.Status, r.Body, c.param)
			}
		}
	}

	// nothing was created or changed
	if l := n.do("GET", "/v1/trips", k, nil).json(t)["trips"].([]any); len(l) != 1 {
		t.Errorf("refused starts left %d trips, want the one started", len(l))
	}
	if r := n.do("GET", "/v1/vehicles/veh-p", k, nil); r.Status != 404 {
		t.Errorf("a refused vehicle profile was stored: %d %s", r.Status, r.Body)
	}
	if l := n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any); len(l) != 0 {
		t.Errorf("refused starts made %d streams", len(l))
	}
	if p := n.do("GET", "/v1/emergency/incidents", k, nil).json(t)["pagination"].(map[string]any); p["total_count"] != 0.0 {
		t.Errorf("refused reports made %v incidents", p["total_count"])
	}
	if l := n.do("GET", "/v1/contacts", k, nil).json(t)["contacts"].([]any); len(l) != 0 {
		t.Errorf("refused contacts made %d", len(l))
	}
	if a := n.do("GET", "/v1/trips/"+trip, k, nil).json(t)["analytics"].(map[string]any); a["locations_count"] != 0.0 {
		t.Errorf("refused uploads stored %v points", a["locations_count"])
	}

	// an event stream of the vehicle stays silent through the refused
	// ingests: the first message it gets is the one sent with good ids
	sid := startEventStream(t, n, k, "veh-e")
	ws := n.dial(t, k, "stream_id="+sid)
	expectSubscribed(t, ws)
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{event(map[string]any{"vehicle_id": "veh-e", "fleet_id": " "})}}); r.Status != 400 {
		t.Fatalf("blank fleet_id: %d %s", r.Status, r.Body)
	}
	good := event(map[string]any{"vehicle_id": "veh-e", "driver_id": "drv-1", "trip_id": "t-1", "fleet_id": "f-1"})
	good["event_id"] = "good-1"
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{good}}); r.Status != 202 {
		t.Fatalf("good ids: %d %s", r.Status, r.Body)
	}
	if got := readEvents(t, ws, 1); len(got) != 1 || !strings.Contains(string(got[0].Message), `"good-1"`) {
		t.Errorf("the stream got %s first, want the event sent with good ids", got[0].Message)
	}

	// the same requests with normal ids go through; ids are exact
	// strings, spaces inside or around kept as sent
	for _, c := range []struct {
		method, path string
		body         any
		want         int
	}{
		{"POST", "/v1/trips", map[string]any{"vehicle_id": " veh 9 ", "driver_id": "drv-9"}, 201},
		{"POST", "/v1/locations/batch", map[string]any{"trip_id": trip, "locations": []any{point}, "device_info": map[string]any{"device_id": "dev-1"}}, 200},
		{"POST", "/v1/telemetry", map[string]any{"messages": []any{telemetry("veh-t")}}, 202},
		{"POST", "/api/v1/streaming/events/start", map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"veh-1"}, "geofences": []string{"depot"}}}, 201},
		{"POST", "/v1/emergency/incidents", incident("vehicle_id", "veh-1"), 201},
		{"PUT", "/v1/vehicles/veh-p", map[string]any{"fleet_id": "f-1"}, 200},
	} {
		if r := n.do(c.method, c.path, k, c.body); r.Status != c.want {
			t.Errorf("%s %s with normal ids: %d %s", c.method, c.path, r.Status, r.Body)
		}
	}
	if l := n.do("GET", "/v1/trips?vehicle_id="+"%20veh%209%20", k, nil).json(t)["trips"].([]any); len(l) != 1 {
		t.Errorf("the trip of vehicle %q: %d found", " veh 9 ", len(l))
	}
}
