package main

import (
	"strings"
	"testing"
	"time"
)

// TestEmptyEnumValuesRefused: an optional field of a fixed set of values
// sent as "" is a value outside its set, never read as left out (the
// default): 400 invalid_request naming the field by its full path with
// the allowed values, validation_failed naming both beside an unknown
// field or a problem the route's own checks find, and nothing is created
// or changed. At configure, where null removes a setting, "" in the patch
// is refused the same way.
func TestEmptyEnumValuesRefused(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	area := map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 5}
	alert := func(channel map[string]any) map[string]any {
		return map[string]any{"alert_type": "road_hazard", "severity": "high", "title": "Flooding", "message": "Avoid the river road",
			"affected_area": area, "target_audience": map[string]any{"include": []string{"active_drivers"}}, "delivery_channels": []any{channel},
			"expiration": time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true}
	}
	withTitle := func(b map[string]any, title string) map[string]any {
		b["title"] = title
		return b
	}
	plan := func(dest map[string]any, constraints map[string]any) map[string]any {
		d := map[string]any{"destination_id": "d-1", "location": map[string]any{"latitude": 40.01, "longitude": -83.0}}
		for f, v := range dest {
			d[f] = v
		}
		b := map[string]any{"fleet_id": "f-1",
			"vehicles":     []any{map[string]any{"vehicle_id": "v-1", "start_location": map[string]any{"latitude": 40.0, "longitude": -83.0}}},
			"destinations": []any{d}}
		if constraints != nil {
			b["constraints"] = constraints
		}
		return b
	}
	r := n.do("POST", "/v1/emergency/alerts", k, alert(map[string]any{"channel": "in_app_alert"}))
	if r.Status != 201 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	alertID := r.json(t)["alert_id"].(string)
	r = n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"data_types": []string{"gps_enhanced"}, "stream_config": map[string]any{"frequency": "low"}})
	if r.Status != 201 {
		t.Fatalf("telemetry start: %d %s", r.Status, r.Body)
	}
	tel := r.json(t)["stream_id"].(string)
	r = n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": map[string]any{"reliability": "at_most_once"}})
	if r.Status != 201 {
		t.Fatalf("events start: %d %s", r.Status, r.Body)
	}
	ev := r.json(t)["stream_id"].(string)
	const (
		vehicleTypes = "must be one of car, van, truck, bus, motorcycle, other"
		fuelTypes    = "must be one of gasoline, diesel, hybrid, lpg, electric"
		units        = "must be one of km, mi"
		methods      = "must be one of websocket, webhook"
		frequencies  = "must be one of low, medium, high, custom"
		reliability  = "must be one of at_least_once, at_most_once"
	)
	for _, c := range []struct {
		name, method, path string
		body               map[string]any
		code               string
		want               map[string]string
	}{
		{"vehicle_type", "PUT", "/v1/vehicles/veh-e", map[string]any{"vehicle_type": ""}, "invalid_request", map[string]string{"vehicle_type": vehicleTypes}},
		{"fuel_type", "PUT", "/v1/vehicles/veh-e", map[string]any{"fuel_type": ""}, "invalid_request", map[string]string{"fuel_type": fuelTypes}},
		{"odometer_unit", "PUT", "/v1/vehicles/veh-e", map[string]any{"odometer_unit": ""}, "invalid_request", map[string]string{"odometer_unit": units}},
		{"the three profile fields", "PUT", "/v1/vehicles/veh-e", map[string]any{"vehicle_type": "", "fuel_type": "", "odometer_unit": ""}, "invalid_request",
			map[string]string{"vehicle_type": vehicleTypes, "fuel_type": fuelTypes, "odometer_unit": units}},
		{"beside an unknown field", "PUT", "/v1/vehicles/veh-e", map[string]any{"vehicle_type": "", "colour": "red"}, "validation_failed",
			map[string]string{"vehicle_type": vehicleTypes, "colour": "unknown field"}},
		{"telemetry delivery_method", "POST", "/api/v1/streaming/telemetry/start", map[string]any{"data_types": []string{"gps_enhanced"}, "delivery_method": ""},
			"invalid_request", map[string]string{"delivery_method": methods}},
		{"telemetry stream_config.frequency", "POST", "/api/v1/streaming/telemetry/start", map[string]any{"data_types": []string{"gps_enhanced"}, "stream_config": map[string]any{"frequency": ""}},
			"invalid_request", map[string]string{"stream_config.frequency": frequencies}},
		{"telemetry stream_config.quality_settings.precision", "POST", "/api/v1/streaming/telemetry/start", map[string]any{"data_types": []string{"gps_enhanced"}, "stream_config": map[string]any{"quality_settings": map[string]any{"precision": ""}}},
			"invalid_request", map[string]string{"stream_config.quality_settings.precision": "must be one of standard, high"}},
		{"events stream_config.delivery_method", "POST", "/api/v1/streaming/events/start", map[string]any{"stream_config": map[string]any{"delivery_method": ""}},
			"invalid_request", map[string]string{"stream_config.delivery_method": methods}},
		{"events stream_config.reliability", "POST", "/api/v1/streaming/events/start", map[string]any{"stream_config": map[string]any{"reliability": ""}},
			"invalid_request", map[string]string{"stream_config.reliability": reliability}},
		{"configure telemetry frequency", "PUT", "/api/v1/streaming/telemetry/configure/" + tel, map[string]any{"stream_config": map[string]any{"frequency": ""}},
			"invalid_request", map[string]string{"stream_config.frequency": frequencies}},
		{"configure telemetry delivery_method", "PUT", "/api/v1/streaming/telemetry/configure/" + tel, map[string]any{"delivery_method": ""},
			"invalid_request", map[string]string{"delivery_method": methods}},
		{"configure telemetry state", "PUT", "/api/v1/streaming/telemetry/configure/" + tel, map[string]any{"state": ""},
			"invalid_request", map[string]string{"state": "must be one of active, paused"}},
		{"configure events reliability", "PUT", "/api/v1/streaming/events/configure/" + ev, map[string]any{"stream_config": map[string]any{"reliability": ""}},
			"invalid_request", map[string]string{"stream_config.reliability": reliability}},
		{"configure events delivery_method", "PUT", "/api/v1/streaming/events/configure/" + ev, map[string]any{"stream_config": map[string]any{"delivery_method": ""}},
			"invalid_request", map[string]string{"stream_config.delivery_method": methods}},
		{"a destination's priority", "POST", "/api/v1/fleet/optimization/routes", plan(map[string]any{"priority": ""}, nil),
			"invalid_request", map[string]string{"destinations[0].priority": "must be one of low, normal, high, urgent"}},
		{"constraints.time_window_violations", "POST", "/api/v1/fleet/optimization/routes", plan(nil, map[string]any{"time_window_violations": ""}),
			"invalid_request", map[string]string{"constraints.time_window_violations": "must be one of none, allow"}},
		{"a delivery channel's priority", "POST", "/v1/emergency/alerts", alert(map[string]any{"channel": "in_app_alert", "priority": ""}),
			"invalid_request", map[string]string{"delivery_channels[0].priority": "must be one of immediate, high, normal, low"}},
		{"an acknowledgment's recipient_type", "POST", "/v1/emergency/alerts/" + alertID + "/acknowledge", map[string]any{"recipient_id": "drv-1", "recipient_type": ""},
			"invalid_request", map[string]string{"recipient_type": "must be one of driver, vehicle, field_personnel, dispatcher, supervisor, emergency_management, emergency_contact"}},
		// text with a default (a language, a time zone) sent as "": refused
		// as it would read as left out
		{"a contact's language", "POST", "/v1/contacts", map[string]any{"name": "Ann", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550004100"}, "language": ""},
			"validation_failed", map[string]string{"language": "must not be empty: leave it out for the default"}},
		{"a contact's quiet_hours.timezone", "POST", "/v1/contacts", map[string]any{"name": "Ann", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550004100"},
			"quiet_hours": map[string]any{"start": "22:00", "end": "06:00", "timezone": ""}},
			"validation_failed", map[string]string{"quiet_hours.timezone": "must not be empty: leave it out for the default"}},
		// beside a problem the route's own checks find: one answer names both
		{"vehicle_type beside a long fleet_id", "PUT", "/v1/vehicles/veh-e", map[string]any{"vehicle_type": "", "fleet_id": strings.Repeat("f", 201)}, "validation_failed",
			map[string]string{"vehicle_type": vehicleTypes, "fleet_id": "must be at most 200 characters"}},
		{"a destination's priority beside a bad constraint", "POST", "/api/v1/fleet/optimization/routes", plan(map[string]any{"priority": ""}, map[string]any{"max_route_duration": -1}),
			"validation_failed", map[string]string{"destinations[0].priority": "must be one of low, normal, high, urgent", "constraints.max_route_duration": "must be greater than 0"}},
		{"a channel's priority beside an empty title", "POST", "/v1/emergency/alerts", withTitle(alert(map[string]any{"channel": "in_app_alert", "priority": ""}), ""),
			"validation_failed", map[string]string{"delivery_channels[0].priority": "must be one of immediate, high, normal, low", "title": "is required, at most 100 characters"}},
		{"recipient_type beside a missing recipient_id", "POST", "/v1/emergency/alerts/" + alertID + "/acknowledge", map[string]any{"recipient_type": ""},
			"validation_failed", map[string]string{"recipient_type": "must be one of driver, vehicle, field_personnel, dispatcher, supervisor, emergency_management, emergency_contact", "recipient_id": "is required"}},
	} {
		r := n.do(c.method, c.path, k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%s: %d %s, want 400 %s", c.name, r.Status, r.Body, c.code)
			continue
		}
		d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if len(d) != len(c.want) {
			t.Errorf("%s: details %v, want %v", c.name, d, c.want)
		}
		for f, m := range c.want {
			if d[f] != m {
				t.Errorf("%s: details[%s] = %v, want %q", c.name, f, d[f], m)
			}
		}
	}
	// nothing was created or changed
	if r := n.do("GET", "/v1/vehicles/veh-e", k, nil); r.Status != 404 {
		t.Errorf("a refused vehicle profile was stored: %d %s", r.Status, r.Body)
	}
	if l := n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any); len(l) != 2 {
		t.Errorf("refused starts: %d streams, want the 2 started", len(l))
	}
	if l := n.do("GET", "/v1/contacts", k, nil).json(t)["contacts"].([]any); len(l) != 0 {
		t.Errorf("refused contacts: %d stored", len(l))
	}
	if l := n.do("GET", "/v1/emergency/alerts", k, nil).json(t)["alerts"].([]any); len(l) != 1 {
		t.Errorf("refused alerts: %d alerts, want the one sent", len(l))
	}
	st := n.do("GET", "/api/v1/streaming/events/status/"+ev, k, nil).json(t)
	if cfg, _ := st["configuration"].(map[string]any)["stream_config"].(map[string]any); cfg["reliability"] != "at_most_once" {
		t.Errorf("after the refused configures: stream_config %v", cfg)
	}
	// null still removes the setting: the default comes back
	if r := n.do("PUT", "/api/v1/streaming/events/configure/"+ev, k, map[string]any{"stream_config": map[string]any{"reliability": nil}}); r.Status != 200 {
		t.Errorf("configure reliability null: %d %s", r.Status, r.Body)
	}
	// the values of the sets are taken
	if r := n.do("PUT", "/v1/vehicles/veh-e", k, map[string]any{"vehicle_type": "van", "fuel_type": "diesel", "odometer_unit": "mi"}); r.Status != 200 {
		t.Errorf("a profile with values of the sets: %d %s", r.Status, r.Body)
	}
}
