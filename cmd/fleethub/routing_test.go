package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
)

// tinyOSM is the routing engine's fixture: seven nodes, a one-way street,
// a footway and a part of the network cars cannot reach (drawn in
// internal/routing/fixture_test.go).
func tinyOSM(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../internal/routing/testdata/tiny.osm.pbf")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRoutingMatrixTiny serves the fixture: kilometers and seconds per
// cell, where each location snapped, null rows for a location no road is
// near, and the request's validation.
func TestRoutingMatrixTiny(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	body := map[string]any{"sources": []map[string]any{{"lat": 40.000, "lon": -83.000}, {"lat": 40.002, "lon": -83.000}},
		"targets": []map[string]any{{"lat": 40.002, "lon": -83.000}, {"lat": 40.004, "lon": -83.000}}, "costing": "auto"}
	r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	rows := d["sources_to_targets"].([]any)
	if len(rows) != 2 || len(rows[0].([]any)) != 2 || d["units"] != "kilometers" {
		t.Fatalf("matrix %v", d)
	}
	// node 1 → node 3: 222.4 m along a two-way and a one-way street at 25 km/h
	c := rows[0].([]any)[0].(map[string]any)
	if c["distance"] != 0.222 || c["time"] != 32.0 {
		t.Errorf("1→3: %v, want 0.222 km, 32.0 s", c)
	}
	if c := rows[1].([]any)[0].(map[string]any); c["distance"] != 0.0 || c["time"] != 0.0 {
		t.Errorf("3→3: %v, want 0", c)
	}
	// node 8 is on an island cars cannot leave: the location is put on
	// the nearest road of the main network, node 3, 222.4 m away
	if tg := d["targets"].([]any)[1].(map[string]any); tg["snapped"] != true || tg["snap_distance"] != 222.4 || tg["reason"] != nil {
		t.Errorf("node 8 by car: %v", tg)
	}
	if c := rows[0].([]any)[1].(map[string]any); c["distance"] != 0.222 {
		t.Errorf("1→8 by car: %v, want to node 3", c)
	}
	// a location at the pole snaps nowhere: its row is null, with a reason
	pole := map[string]any{"sources": []map[string]any{{"lat": 90, "lon": 0}, {"lat": 40.0, "lon": -83.0}}, "targets": body["targets"], "costing": "auto"}
	r = n.do("POST", "/v1/routing/sources_to_targets", k, pole)
	pd := r.json(t)["data"].(map[string]any)
	if src := pd["sources"].([]any)[0].(map[string]any); r.Status != 200 || src["snapped"] != false || src["reason"] == nil || src["snap_distance"] != nil {
		t.Errorf("pole: %d %v", r.Status, src)
	}
	for _, cell := range pd["sources_to_targets"].([]any)[0].([]any) {
		if c := cell.(map[string]any); c["distance"] != nil || c["time"] != nil {
			t.Errorf("pole row: %v", c)
		}
	}
	if c := pd["sources_to_targets"].([]any)[1].([]any)[0].(map[string]any); c["distance"] != 0.222 {
		t.Errorf("the pole spoiled the next row: %v", c)
	}
	// the same location twice, on a two-way street and on the one-way
	// 2→3: every cell between copies of one location is 0
	one := map[string]any{"lat": 40.0015, "lon": -83.000}
	dup := []map[string]any{{"lat": 40.000, "lon": -83.000}, {"lat": 40.000, "lon": -83.000}, one, one}
	r = n.do("POST", "/v1/routing/sources_to_targets", k, map[string]any{"sources": dup, "targets": dup, "costing": "auto"})
	if r.Status != 200 {
		t.Fatalf("duplicates: %d %s", r.Status, r.Body)
	}
	dd := r.json(t)["data"].(map[string]any)
	for i, row := range dd["sources_to_targets"].([]any) {
		for j, cell := range row.([]any) {
			c := cell.(map[string]any)
			if same := i/2 == j/2; same && (c["distance"] != 0.0 || c["time"] != 0.0) || !same && (c["distance"] == nil || c["distance"] == 0.0) {
				t.Errorf("duplicates %d→%d: %v", i, j, c)
			}
		}
	}
	body["costing"] = "pedestrian"
	r = n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if c := r.json(t)["data"].(map[string]any)["sources_to_targets"].([]any)[0].([]any)[1].(map[string]any); r.Status != 200 || c["distance"] != 0.445 {
		t.Errorf("1→8 on foot: %d %v, want 0.445 km", r.Status, c)
	}
	big := make([]map[string]any, 51)
	for i := range big {
		big[i] = map[string]any{"lat": 40.0, "lon": -83.0}
	}
	two := []map[string]any{{"lat": 40.0, "lon": -83.0}, {"lat": 40.0, "lon": -83.0}}
	// each bad request answers 400 naming the field: invalid_request for a
	// costing outside the set, validation_failed for the rest
	for _, tc := range []struct {
		field string
		body  map[string]any
		code  string
	}{
		{"sources", map[string]any{"sources": big, "targets": body["targets"], "costing": "auto"}, "validation_failed"},
		{"targets", map[string]any{"sources": body["sources"], "targets": big, "costing": "auto"}, "validation_failed"},
		{"costing", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "hovercraft"}, "invalid_request"},
		{"sources[0].lat", map[string]any{"sources": []map[string]any{{"lat": 95, "lon": 0}}, "targets": body["targets"], "costing": "auto"}, "validation_failed"},
		{"targets[1].lon", map[string]any{"sources": body["sources"], "targets": []map[string]any{{"lat": 40, "lon": -83}, {"lat": 40, "lon": 181}}, "costing": "auto"}, "validation_failed"},
		{"sources", map[string]any{"targets": body["targets"], "costing": "auto"}, "validation_failed"},
		{"targets", map[string]any{"sources": two, "targets": []map[string]any{}, "costing": "auto"}, "validation_failed"},
		{"truck", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "auto", "truck": map[string]any{"height": 3}}, "validation_failed"},
		{"truck.height", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"height": 30}}, "validation_failed"},
		{"truck.weight", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"weight": -1}}, "validation_failed"},
		{"truck.length", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"length": 41}}, "validation_failed"},
		{"truck.width", map[string]any{"sources": body["sources"], "targets": body["targets"], "costing": "truck", "truck": map[string]any{"width": 0.5}}, "validation_failed"},
	} {
		r := n.do("POST", "/v1/routing/sources_to_targets", k, tc.body)
		if r.Status != 400 || r.errCode(t) != tc.code {
			t.Errorf("%s: %d %s", tc.field, r.Status, r.Body)
			continue
		}
		if !errorNames(t, r, tc.field) {
			t.Errorf("%s: the error does not name the field: %s", tc.field, r.Body)
		}
	}
}

// errorNames reports whether an error answer names field in its details
// and, when it is the only field, in its message.
func errorNames(t *testing.T, r resp, field string) bool {
	t.Helper()
	e, _ := r.json(t)["error"].(map[string]any)
	details, _ := e["details"].(map[string]any)
	if _, ok := details[field]; !ok {
		return false
	}
	msg, _ := e["message"].(string)
	return len(details) > 1 || strings.HasPrefix(msg, field+": ")
}

// TestRoutingMatrix serves the Columbus extract (validation is in
// TestRoutingMatrixTiny).
func TestRoutingMatrix(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // contracts a city: beside the crash tests, which mostly wait
	cfg := testConfig(t)
	cfg.OSM = sharedData(t, "osm/us-oh-columbus.osm.pbf")
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	body := map[string]any{"sources": []map[string]any{{"lat": 39.9612, "lon": -82.9988}, {"lat": 39.97, "lon": -83.005}},
		"targets": []map[string]any{{"lat": 39.955, "lon": -82.99}}, "costing": "auto"}
	r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	d := r.json(t)["data"].(map[string]any)
	rows := d["sources_to_targets"].([]any)
	if len(rows) != 2 || len(rows[0].([]any)) != 1 || d["units"] != "kilometers" {
		t.Fatalf("matrix %v", d)
	}
	c := rows[0].([]any)[0].(map[string]any)
	if c["distance"].(float64) <= 0 || c["time"].(float64) <= 0 {
		t.Errorf("cell %v", c)
	}
}

// TestRoutingMatrixTruckSize serves internal/routing/testdata/trucks.osm.pbf
// (a square 1–4–3–2, a short road 1–2 posted for 20 t, a side street
// entered one way and left by a road posted for 40 t): the truck's size
// from the request changes its routes, and a truck too heavy to leave
// the side street is placed on the roads it can leave.
func TestRoutingMatrixTruckSize(t *testing.T) {
	p, err := filepath.Abs("../../internal/routing/testdata/trucks.osm.pbf")
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	cfg.OSM = p
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	node := map[int][2]float64{1: {40, -83}, 2: {40, -82.998}, 3: {40.003, -82.998}, 4: {40.003, -83}}
	a, b, side := [2]float64{40.0003, -83}, [2]float64{40.0003, -82.998}, [2]float64{40.005, -82.999}
	dist := func(ps ...[2]float64) float64 {
		m := 0.0
		for i := 1; i < len(ps); i++ {
			m += geo.Distance(geo.Point{Lat: ps[i-1][0], Lon: ps[i-1][1]}, geo.Point{Lat: ps[i][0], Lon: ps[i][1]})
		}
		return m / 1000
	}
	short, round := dist(a, node[1], node[2], b), dist(a, node[4], node[3], b)
	toSquare := dist(side, [2]float64{40.003, -82.999}) * 1000
	ask := func(truck map[string]any) map[string]any {
		t.Helper()
		var pts []map[string]any
		for _, q := range [][2]float64{a, b, side} {
			pts = append(pts, map[string]any{"lat": q[0], "lon": q[1]})
		}
		body := map[string]any{"sources": pts, "targets": pts, "costing": "truck"}
		if truck != nil {
			body["truck"] = truck
		}
		r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
		if r.Status != 200 {
			t.Fatalf("truck %v: %d %s", truck, r.Status, r.Body)
		}
		return r.json(t)["data"].(map[string]any)
	}
	cell := func(d map[string]any, i, j int) map[string]any {
		return d["sources_to_targets"].([]any)[i].([]any)[j].(map[string]any)
	}
	near := func(v any, want, tol float64) bool {
		f, ok := v.(float64)
		return ok && f >= want-tol && f <= want+tol
	}
	for _, tc := range []struct {
		name  string
		truck map[string]any
		km    float64 // a to b
		snap  float64 // meters from the side street location to its road
	}{
		{"default truck (36.3 t)", nil, round, 0},
		{"12 t truck", map[string]any{"weight": 12, "height": 3.2}, short, 0},
		{"44 t truck", map[string]any{"weight": 44}, round, toSquare},
	} {
		d := ask(tc.truck)
		if c := cell(d, 0, 1); !near(c["distance"], tc.km, 0.0015) {
			t.Errorf("%s: a→b %v, want %.3f km", tc.name, c, tc.km)
		}
		if s := d["sources"].([]any)[2].(map[string]any); s["snapped"] != true || s["reason"] != nil || !near(s["snap_distance"], tc.snap, 0.5) {
			t.Errorf("%s: the side street location %v, want snapped %.1f m away", tc.name, s, tc.snap)
		}
		for i := range 3 {
			for j := range 3 {
				if c := cell(d, i, j); c["distance"] == nil || c["time"] == nil {
					t.Errorf("%s: %d→%d is null: %v", tc.name, i, j, c)
				}
			}
		}
	}
}

// TestRoutingMatrixXML serves the fixture's network from its OSM XML
// form compressed with bzip2 (internal/routing/testdata/tiny.osm.bz2):
// the matrix answers as on the .osm.pbf.
func TestRoutingMatrixXML(t *testing.T) {
	cfg := testConfig(t)
	p, err := filepath.Abs("../../internal/routing/testdata/tiny.osm.bz2")
	if err != nil {
		t.Fatal(err)
	}
	cfg.OSM = p
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	body := map[string]any{"sources": []map[string]any{{"lat": 40.000, "lon": -83.000}}, "targets": []map[string]any{{"lat": 40.002, "lon": -83.000}}, "costing": "auto"}
	r := n.do("POST", "/v1/routing/sources_to_targets", k, body)
	if r.Status != 200 {
		t.Fatalf("%d %s", r.Status, r.Body)
	}
	// node 1 → node 3, as TestRoutingMatrixTiny
	if c := r.json(t)["data"].(map[string]any)["sources_to_targets"].([]any)[0].([]any)[0].(map[string]any); c["distance"] != 0.222 || c["time"] != 32.0 {
		t.Errorf("1→3: %v, want 0.222 km, 32.0 s", c)
	}
}

// TestRoutingEmptyExtract: an extract without roads, or not an extract
// at all, stops the server at start, with an error naming --osm, the
// file and the format it was read as.
func TestRoutingEmptyExtract(t *testing.T) {
	for _, tc := range []struct {
		name string
		b    []byte
		says string
	}{{"empty", nil, "has no roads"}, {"not-a-pbf", []byte("no roads here"), "read as .osm.pbf: routing: pbf: blob header"},
		{"bad-xml", []byte(`<osm><node id="7" lat="91" lon="0"/></osm>`), "read as OSM XML: line 1: node 7: lat 91 out of range"}} {
		p := filepath.Join(t.TempDir(), tc.name+".osm.pbf")
		if err := os.WriteFile(p, tc.b, 0o644); err != nil {
			t.Fatal(err)
		}
		cfg := testConfig(t)
		cfg.OSM = p
		a, err := newApp(context.Background(), cfg, testLogger(t))
		if err == nil || a != nil || !strings.HasPrefix(err.Error(), "--osm: ") || !strings.Contains(err.Error(), p) || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: newApp = %v, %v; want an error naming --osm and %s: %s", tc.name, a, err, p, tc.says)
		}
	}
}

// TestRoutingSchemaRequiresWhatTheServiceRequires: each top-level field
// of a routing request that /v1/openapi.json lists as required is
// refused by name when left out, and every other may be left out.
func TestRoutingSchemaRequiresWhatTheServiceRequires(t *testing.T) {
	cfg := testConfig(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"routing:read"}, 100000)
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any `json:"properties"`
				Required   []string       `json:"required"`
			} `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	full := map[string]map[string]any{
		"routing.MatrixBody": {"sources": []map[string]any{{"lat": 40.000, "lon": -83.000}}, "targets": []map[string]any{{"lat": 40.002, "lon": -83.000}},
			"costing": "auto", "avoid": []string{"tolls"}},
		"routing.MatchBody": {"costing": "auto", "points": []map[string]any{{"latitude": 40.000, "longitude": -83.000, "timestamp": "2026-11-23T10:00:00Z"}}},
	}
	paths := map[string]string{"routing.MatrixBody": "/v1/routing/sources_to_targets", "routing.MatchBody": "/api/v1/fleet/routing/match"}
	for name, body := range full {
		s, ok := doc.Components.Schemas[name]
		if !ok {
			t.Fatalf("no schema %s", name)
		}
		for field := range s.Properties {
			if field == "truck" { // truck costing only: left out here already
				continue
			}
			less := map[string]any{}
			for f, v := range body {
				if f != field {
					less[f] = v
				}
			}
			r := n.do("POST", paths[name], k, less)
			if slices.Contains(s.Required, field) {
				if r.Status != 400 || !errorNames(t, r, field) {
					t.Errorf("%s without %s, which the document requires: %d %s", name, field, r.Status, r.Body)
				}
			} else if r.Status != 200 {
				t.Errorf("%s without %s, which the document leaves optional: %d %s", name, field, r.Status, r.Body)
			}
		}
	}
}
