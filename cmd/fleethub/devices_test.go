package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api/conformance"
)

func TestDeviceSettings(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	if r := n.do("GET", "/v1/devices/dev-1/settings", k, nil); r.Status != 404 {
		t.Fatalf("no settings yet: %d", r.Status)
	}
	body := map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": 30, "data_types": []string{"location", "obd_data"}},
		"safety_features": map[string]any{"harsh_event_detection": map[string]any{"enabled": true, "braking_threshold": -0.3},
			"speeding_alerts": map[string]any{"enabled": true, "threshold_over_limit": 5, "alert_frequency": "immediate"}}}
	r := n.do("PUT", "/v1/devices/dev-1/settings", k, body)
	if r.Status != 200 {
		t.Fatalf("put: %d %s", r.Status, r.Body)
	}
	a := r.json(t)
	if a["settings_version"] != "v1" || a["effective_immediately"] != false || a["estimated_impact"].(map[string]any)["alert_frequency_change"] != "increased" {
		t.Errorf("applied %s", r.Body)
	}
	// merge: a second PUT of one group keeps the others
	r = n.do("PUT", "/v1/devices/dev-1/settings", k, map[string]any{"power_management": map[string]any{"sleep_mode_enabled": true, "sleep_delay_minutes": 5}})
	a = r.json(t)
	sa := a["settings_applied"].(map[string]any)
	if a["settings_version"] != "v2" || sa["telemetry_settings"] == nil || sa["power_management"] == nil {
		t.Errorf("merge: %s", r.Body)
	}
	if g := n.do("GET", "/v1/devices/dev-1/settings", k, nil).json(t); g["settings_version"] != "v2" {
		t.Errorf("get: %v", g["settings_version"])
	}
	// a PUT that changes nothing (empty, or a group as it is) makes no
	// new version
	for _, same := range []map[string]any{{}, {"power_management": map[string]any{"sleep_mode_enabled": true}}} {
		r := n.do("PUT", "/v1/devices/dev-1/settings", k, same)
		if a := r.json(t); r.Status != 200 || a["settings_version"] != "v2" || a["applied_at"] != sa0(t, n, k) {
			t.Errorf("%v changes nothing, yet: %d %s", same, r.Status, r.Body)
		}
	}
	if r := n.do("GET", "/v1/devices/dev-1/settings", other, nil); r.Status != 404 {
		t.Errorf("another org: %d", r.Status)
	}
	for _, c := range []struct {
		body  map[string]any
		field string
		code  string
	}{
		{map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": 5}}, "telemetry_settings.collection_interval_seconds", "validation_failed"},
		{map[string]any{"telemetry_settings": map[string]any{"data_types": []string{"radar"}}}, "telemetry_settings.data_types[0]", "invalid_request"},
		{map[string]any{"telemetry_settings": map[string]any{"data_types": []string{}}}, "telemetry_settings.data_types", "validation_failed"},
		{map[string]any{"safety_features": map[string]any{"harsh_event_detection": map[string]any{"braking_threshold": 0.5}}}, "safety_features.harsh_event_detection.braking_threshold", "validation_failed"},
		{map[string]any{"power_management": map[string]any{"low_power_threshold": 80}}, "power_management.low_power_threshold", "validation_failed"},
		{map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"alert_frequency": "hourly"}}}, "safety_features.speeding_alerts.alert_frequency", "invalid_request"},
		{map[string]any{"turbo_mode": true}, "turbo_mode", "validation_failed"},
	} {
		r := n.do("PUT", "/v1/devices/dev-1/settings", k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		if d := r.json(t)["error"].(map[string]any)["details"].(map[string]any); d[c.field] == nil {
			t.Errorf("%v: details %v", c.body, d)
		}
	}
	// daily_summary is a value like the others (fleet/digest sends the
	// summaries)
	daily := map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"alert_frequency": "daily_summary"}}}
	if r := n.do("PUT", "/v1/devices/dev-2/settings", k, daily); r.Status != 200 ||
		r.json(t)["settings_applied"].(map[string]any)["safety_features"].(map[string]any)["speeding_alerts"].(map[string]any)["alert_frequency"] != "daily_summary" {
		t.Errorf("daily_summary: %d %s", r.Status, r.Body)
	}
	// unknown settings and values of the wrong type, named by their full
	// path as on every other route
	for _, c := range []struct {
		body        map[string]any
		code, field string
	}{
		{map[string]any{"telemetry_settings": map[string]any{"foo": 1}}, "validation_failed", "telemetry_settings.foo"},
		{map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"loud": true}}}, "validation_failed", "safety_features.speeding_alerts.loud"},
		{map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": "x"}}, "invalid_request", "telemetry_settings.collection_interval_seconds"},
		{map[string]any{"telemetry_settings": map[string]any{"data_types": []any{"location", 3}}}, "invalid_request", "telemetry_settings.data_types[1]"},
	} {
		r := n.do("PUT", "/v1/devices/dev-1/settings", k, c.body)
		if r.Status != 400 || r.errCode(t) != c.code || r.json(t)["error"].(map[string]any)["details"].(map[string]any)[c.field] == nil {
			t.Errorf("%v: %d %s, want %s naming %s", c.body, r.Status, r.Body, c.code, c.field)
		}
	}
	g := n.do("GET", "/v1/devices/dev-1/settings", k, nil).json(t)
	if g["settings_version"] != "v2" {
		t.Errorf("bad input changed the version: %v", g["settings_version"])
	}
	if dt := g["settings_applied"].(map[string]any)["telemetry_settings"].(map[string]any)["data_types"].([]any); len(dt) != 2 {
		t.Errorf("data_types after bad input: %v", dt)
	}
	// a repeated data type is stored once, in first-seen order, and the
	// list is replaced whole
	r = n.do("PUT", "/v1/devices/dev-1/settings", k, map[string]any{"telemetry_settings": map[string]any{"data_types": []string{"camera", "location", "camera", "location"}}})
	if a := r.json(t); r.Status != 200 || a["settings_version"] != "v3" {
		t.Fatalf("repeated data types: %d %s", r.Status, r.Body)
	}
	ts := n.do("GET", "/v1/devices/dev-1/settings", k, nil).json(t)["settings_applied"].(map[string]any)["telemetry_settings"].(map[string]any)
	if dt := ts["data_types"].([]any); len(dt) != 2 || dt[0] != "camera" || dt[1] != "location" {
		t.Errorf("data_types stored %v, want [camera location]", dt)
	}
}

// TestDeviceSettingsDriveDetection: a device that disables speeding
// alerts gets no speeding events; a lower braking threshold catches a
// gentler stop.
func TestDeviceSettingsDriveDetection(t *testing.T) {
	cfg := testConfig(t)
	cfg.SpeedLimitKmh = 80
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	n.do("PUT", "/v1/devices/quiet/settings", k, map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"enabled": false}}})
	t0 := time.Now().Add(-30 * time.Minute).UTC()
	sp := constant(70, 30)
	for v := 72.0; v < 100; v += 2 {
		sp = append(sp, v)
	}
	sp = append(sp, constant(100, 120)...)
	for v := 98.0; v > 70; v -= 2 {
		sp = append(sp, v)
	}
	sp = append(sp, constant(70, 30)...)
	id := n.startTrip(k, "veh-q", t0)
	r := n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": id, "locations": track(t0, 40, -83, sp), "device_info": map[string]any{"device_id": "quiet"}})
	if ev := r.json(t)["events_detected"].([]any); len(ev) != 0 {
		t.Errorf("speeding alerts disabled, got %v", ev)
	}
	// an id with a reserved character is sent percent-encoded and is the
	// same device as the upload's device_info names
	if r := n.do("PUT", "/v1/devices/sp%20dev/settings", k, map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"enabled": false}}}); r.Status != 200 || r.json(t)["device_id"] != "sp dev" {
		t.Fatalf("put sp%%20dev: %d %s", r.Status, r.Body)
	}
	if r := n.do("GET", "/v1/devices/sp%20dev/settings", k, nil); r.Status != 200 || r.json(t)["device_id"] != "sp dev" {
		t.Errorf("get sp%%20dev: %d %s", r.Status, r.Body)
	}
	idsp := n.startTrip(k, "veh-s", t0)
	r = n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": idsp, "locations": track(t0, 40, -83, sp), "device_info": map[string]any{"device_id": "sp dev"}})
	if ev := r.json(t)["events_detected"].([]any); len(ev) != 0 {
		t.Errorf("speeding alerts disabled on \"sp dev\", got %v", ev)
	}
	id2 := n.startTrip(k, "veh-l", t0)
	r = n.do("POST", "/v1/locations/batch", k, map[string]any{"trip_id": id2, "locations": track(t0, 40, -83, sp), "device_info": map[string]any{"device_id": "loud"}})
	if ev := r.json(t)["events_detected"].([]any); len(ev) != 1 {
		t.Errorf("default settings: %v", ev)
	}
}

// sa0 is dev-1's applied_at as stored.
func sa0(t *testing.T, n *node, k string) any {
	t.Helper()
	return n.do("GET", "/v1/devices/dev-1/settings", k, nil).json(t)["applied_at"]
}

// estimated_impact.alert_frequency_change follows every safety setting
// against the detector's defaults: a threshold at its default changes
// nothing, cornering and speeding count, and settings pulling both ways
// are mixed.
func TestDeviceAlertFrequencyChange(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	group := func(name string) func(kv ...any) map[string]any {
		return func(kv ...any) map[string]any {
			m := map[string]any{}
			for i := 0; i+1 < len(kv); i += 2 {
				m[kv[i].(string)] = kv[i+1]
			}
			return map[string]any{"safety_features": map[string]any{name: m}}
		}
	}
	harsh, speeding := group("harsh_event_detection"), group("speeding_alerts")
	for i, c := range []struct {
		body map[string]any
		want string
	}{
		{harsh("acceleration_threshold", 0.35, "braking_threshold", -0.4, "cornering_threshold", 0.4), "unchanged"},
		{harsh("cornering_threshold", 0.2), "increased"},
		{harsh("cornering_threshold", 0.8), "decreased"},
		{harsh("acceleration_threshold", 0.2, "braking_threshold", -0.8), "mixed"},
		{harsh("enabled", false, "acceleration_threshold", 0.2), "decreased"},
		{speeding("enabled", false), "decreased"},
		{speeding("threshold_over_limit", 0), "increased"},
		{speeding("threshold_over_limit", 5, "alert_frequency", "immediate"), "unchanged"},
		{speeding("alert_frequency", "once_per_trip"), "decreased"},
		{speeding("alert_frequency", "daily_summary"), "decreased"},
		{speeding("alert_frequency", "once_per_minute", "threshold_over_limit", 2), "mixed"},
	} {
		r := n.do("PUT", fmt.Sprintf("/v1/devices/dev-%d/settings", i), k, c.body)
		if r.Status != 200 {
			t.Errorf("%v: %d %s", c.body, r.Status, r.Body)
			continue
		}
		if got := r.json(t)["estimated_impact"].(map[string]any)["alert_frequency_change"]; got != c.want {
			t.Errorf("%v: alert_frequency_change %v, want %s", c.body, got, c.want)
		}
	}
}

// A range refusal states its bounds as numbers are written, never in
// exponent form.
func TestDeviceRangeMessage(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("PUT", "/v1/devices/dev-1/settings", k, map[string]any{"connectivity": map[string]any{"data_usage_limit_mb": 1e8}})
	if d, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any); r.Status != 400 || d["connectivity.data_usage_limit_mb"] != "must be between 0 and 10000000" {
		t.Errorf("a data usage limit over the range: %d %s", r.Status, r.Body)
	}
}

// TestDeviceSettingNullClears: a setting or a group sent as null is
// removed from the device's settings (the default again), as a JSON merge
// patch reads it, in a new version; the other settings stay, the detector
// takes the default again, and a null of what is not set changes nothing.
func TestDeviceSettingNullClears(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	put := func(body string) map[string]any {
		t.Helper()
		r := n.do("PUT", "/v1/devices/dev-n/settings", k, body)
		if r.Status != 200 {
			t.Fatalf("put %s: %d %s", body, r.Status, r.Body)
		}
		return r.json(t)
	}
	put(`{"power_management":{"sleep_mode_enabled":true,"sleep_delay_minutes":5},"connectivity":{"roaming_enabled":false},` +
		`"safety_features":{"speeding_alerts":{"threshold_over_limit":20}}}`)
	a := put(`{"power_management":{"sleep_mode_enabled":null},"safety_features":{"speeding_alerts":{"threshold_over_limit":null}}}`)
	sa := a["settings_applied"].(map[string]any)
	if a["settings_version"] != "v2" || fmt.Sprint(sa["power_management"]) != "map[sleep_delay_minutes:5]" || sa["safety_features"] != nil ||
		fmt.Sprint(sa["connectivity"]) != "map[roaming_enabled:false]" {
		t.Errorf("nulls: %v %v", a["settings_version"], sa)
	}
	if len(a["validation_results"].(map[string]any)["optimizations_applied"].([]any)) != 0 || a["estimated_impact"].(map[string]any)["alert_frequency_change"] != "unchanged" {
		t.Errorf("assessed with the cleared settings: %v %v", a["validation_results"], a["estimated_impact"])
	}
	a = put(`{"connectivity":null}`)
	if sa := a["settings_applied"].(map[string]any); a["settings_version"] != "v3" || sa["connectivity"] != nil || sa["power_management"] == nil {
		t.Errorf("a group null: %v %v", a["settings_version"], sa)
	}
	if a := put(`{"connectivity":null,"telemetry_settings":{"batch_upload_size":null},"safety_features":{}}`); a["settings_version"] != "v3" {
		t.Errorf("nulls of what is not set made version %v", a["settings_version"])
	}
	if g := n.do("GET", "/v1/devices/dev-n/settings", k, nil).json(t); fmt.Sprint(g["settings_applied"]) != "map[power_management:map[sleep_delay_minutes:5]]" {
		t.Errorf("read back: %v", g["settings_applied"])
	}
}

// TestDeviceSettingNullsAreInTheDocument: every setting and every group
// of PUT /v1/devices/{device_id}/settings sent as null is taken (cleared),
// and the OpenAPI document's request schema admits that body too, the
// settings with a fixed set of values (preferred_network,
// alert_frequency) included.
func TestDeviceSettingNullsAreInTheDocument(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	op, _ := doc["paths"].(map[string]any)["/v1/devices/{device_id}/settings"].(map[string]any)["put"].(map[string]any)
	body := op["requestBody"].(map[string]any)["content"].(map[string]any)["application/json"].(map[string]any)["schema"].(map[string]any)
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	// object is the properties of the object s describes, through $ref,
	// allOf and the non-null alternative of oneOf; nil when s is no object
	var object func(s map[string]any) map[string]any
	object = func(s map[string]any) map[string]any {
		if ref, ok := s["$ref"].(string); ok {
			return object(schemas[strings.TrimPrefix(ref, "#/components/schemas/")].(map[string]any))
		}
		if p, ok := s["properties"].(map[string]any); ok {
			return p
		}
		for _, key := range []string{"allOf", "oneOf"} {
			alts, _ := s[key].([]any)
			for _, a := range alts {
				if p := object(a.(map[string]any)); p != nil {
					return p
				}
			}
		}
		return nil
	}
	// nulls are the bodies sending null at each path below path
	var nulls func(path []string, s map[string]any) [][]string
	nulls = func(path []string, s map[string]any) [][]string {
		var out [][]string
		for name, ps := range object(s) {
			p := append(slices.Clone(path), name)
			out = append(out, p)
			out = append(out, nulls(p, ps.(map[string]any))...)
		}
		return out
	}
	paths := nulls(nil, body)
	if len(paths) < 20 {
		t.Fatalf("only %d settings and groups in the document: %v", len(paths), paths)
	}
	for _, p := range paths {
		var v any
		for i := len(p) - 1; i >= 0; i-- {
			v = map[string]any{p[i]: v}
		}
		if err := conformance.Validate(doc, body, v); err != nil {
			t.Errorf("%s: null is taken by the service, refused by the document: %v", strings.Join(p, "."), err)
		}
		if r := n.do("PUT", "/v1/devices/dev-n/settings", k, v); r.Status != 200 {
			t.Errorf("%s null: %d %s", strings.Join(p, "."), r.Status, r.Body)
		}
	}
}

// TestLongPathIDsRefusedAsPathParameters: a device or vehicle id in the
// path longer than its documented 200 characters is 400 invalid_request
// naming the parameter, as every other path parameter problem is, on
// every route that takes it; 200 characters, multibyte ones included,
// are taken.
func TestLongPathIDsRefusedAsPathParameters(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	long := strings.Repeat("d", 201)
	cases := []struct{ method, path, param string }{
		{"PUT", "/v1/devices/" + long + "/settings", "device_id"},
		{"GET", "/v1/devices/" + long + "/settings", "device_id"},
		{"PUT", "/v1/vehicles/" + long, "vehicle_id"},
		{"GET", "/v1/vehicles/" + long, "vehicle_id"},
		{"DELETE", "/v1/vehicles/" + long, "vehicle_id"},
	}
	for _, c := range cases {
		var body any
		if c.method == "PUT" {
			body = map[string]any{}
		}
		r := n.do(c.method, c.path, k, body)
		var e struct {
			Error struct {
				Code    string            `json:"code"`
				Details map[string]string `json:"details"`
			} `json:"error"`
		}
		_ = json.Unmarshal(r.Body, &e)
		if r.Status != 400 || e.Error.Code != "invalid_request" || e.Error.Details[c.param] != "must be 1 to 200 characters" {
			t.Errorf("%s %s: %d %s, want 400 invalid_request naming %s", c.method, c.path[:30], r.Status, r.Body, c.param)
		}
	}
	ok := strings.Repeat("é", 200)
	if r := n.do("PUT", "/v1/devices/"+url.PathEscape(ok)+"/settings", k, map[string]any{}); r.Status != 200 {
		t.Errorf("a device id of 200 characters: %d %s", r.Status, r.Body)
	}
	if r := n.do("PUT", "/v1/vehicles/"+url.PathEscape(ok), k, map[string]any{}); r.Status != 200 {
		t.Errorf("a vehicle id of 200 characters: %d %s", r.Status, r.Body)
	}
}

// TestDeviceBatteryImpact: battery_life_impact is high under a 30 s
// collection interval, moderate under 60 s, low from 60 s, and sleep mode
// takes it one step lower, from moderate to low as from high to moderate.
func TestDeviceBatteryImpact(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for i, c := range []struct {
		interval float64
		sleep    bool
		want     string
	}{
		{10, false, "high"},
		{10, true, "moderate"},
		{30, false, "moderate"},
		{30, true, "low"},
		{60, false, "low"},
		{60, true, "low"},
	} {
		body := map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": c.interval},
			"power_management": map[string]any{"sleep_mode_enabled": c.sleep}}
		r := n.do("PUT", fmt.Sprintf("/v1/devices/bat-%d/settings", i), k, body)
		if r.Status != 200 {
			t.Fatalf("%v: %d %s", body, r.Status, r.Body)
		}
		if got := r.json(t)["estimated_impact"].(map[string]any)["battery_life_impact"]; got != c.want {
			t.Errorf("interval %v s, sleep mode %v: battery_life_impact %v, want %s", c.interval, c.sleep, got, c.want)
		}
	}
}

// TestDeviceBatchUploadSizeIsWhole: batch_upload_size counts points, so a
// fraction is refused naming it and changes nothing; a whole number in
// range is taken.
func TestDeviceBatchUploadSizeIsWhole(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	if r := n.do("PUT", "/v1/devices/b-1/settings", k, map[string]any{"telemetry_settings": map[string]any{"batch_upload_size": 100}}); r.Status != 200 {
		t.Fatalf("a whole batch size: %d %s", r.Status, r.Body)
	}
	r := n.do("PUT", "/v1/devices/b-1/settings", k, map[string]any{"telemetry_settings": map[string]any{"batch_upload_size": 1.5}})
	e, _ := r.json(t)["error"].(map[string]any)
	if d, _ := e["details"].(map[string]any); r.Status != 400 || e["code"] != "validation_failed" || d["telemetry_settings.batch_upload_size"] == nil {
		t.Errorf("a fractional batch size: %d %s, want 400 validation_failed naming telemetry_settings.batch_upload_size", r.Status, r.Body)
	}
	g := n.do("GET", "/v1/devices/b-1/settings", k, nil).json(t)
	if g["settings_version"] != "v1" || g["settings_applied"].(map[string]any)["telemetry_settings"].(map[string]any)["batch_upload_size"] != 100.0 {
		t.Errorf("after the refusal: %v", g)
	}
}

// TestDeviceEffectiveImmediatelyOnlyForWhatTheHubApplies:
// effective_immediately is true for a version that changes the safety
// settings alone, which the hub applies to trips in progress itself, and
// false for one that sets or clears a telemetry, power or connectivity
// setting: only the device applies those, when it next reads its
// settings, and the hub pushes nothing to it.
func TestDeviceEffectiveImmediatelyOnlyForWhatTheHubApplies(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	speeding := func(mph float64) map[string]any {
		return map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"threshold_over_limit": mph}}}
	}
	for _, c := range []struct {
		device string
		body   map[string]any
		want   bool
	}{
		{"eff-1", speeding(8), true},
		{"eff-1", map[string]any{"power_management": map[string]any{"sleep_delay_minutes": 10}}, false},
		{"eff-1", speeding(12), true},
		{"eff-1", map[string]any{"power_management": nil}, false},
		{"eff-1", map[string]any{"safety_features": map[string]any{"speeding_alerts": nil}}, true},
		{"eff-2", map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": 30}}, false},
		{"eff-2", map[string]any{"connectivity": map[string]any{"roaming_enabled": true}, "safety_features": map[string]any{"harsh_event_detection": map[string]any{"enabled": false}}}, false},
		{"eff-2", map[string]any{"telemetry_settings": map[string]any{"collection_interval_seconds": 30}, "safety_features": map[string]any{"harsh_event_detection": map[string]any{"enabled": true}}}, true},
	} {
		r := n.do("PUT", "/v1/devices/"+c.device+"/settings", k, c.body)
		if r.Status != 200 {
			t.Fatalf("%s %v: %d %s", c.device, c.body, r.Status, r.Body)
		}
		a := r.json(t)
		if a["effective_immediately"] != c.want {
			t.Errorf("%s %v (%v): effective_immediately %v, want %v", c.device, c.body, a["settings_version"], a["effective_immediately"], c.want)
		}
		if g := n.do("GET", "/v1/devices/"+c.device+"/settings", k, nil).json(t); g["effective_immediately"] != c.want {
			t.Errorf("%s read back after %v: effective_immediately %v, want %v", c.device, c.body, g["effective_immediately"], c.want)
		}
	}
}
