package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// sharedData returns the path of rel in the real data beside the
// repository (../shared/data). Without it the test is skipped, except under
// CI=true, where the data must be there and the test fails.
func sharedData(t testing.TB, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", rel))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the shared data file %s is missing: %v", p, err)
		}
		t.Skipf("shared data file %s is missing: skipping (it sits beside the repository in ../shared/data)", p)
	}
	return p
}

// addressFixture is the geocoder's 30 invented addresses in Glen Oaks, NY
// and Westerville, OH (OpenAddresses layout), in the repository.
func addressFixture(t *testing.T) string {
	t.Helper()
	p, err := filepath.Abs("../../internal/geocode/testdata/addresses.csv")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestGeocodingFixture serves the fixture: what each route answers, and
// how each refuses a bad query.
func TestGeocodingFixture(t *testing.T) {
	cfg := testConfig(t)
	cfg.Addresses = addressFixture(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"geocoding:read"}, 100000)
	get := func(path string) map[string]any { return n.do("GET", path, k, nil).json(t) }

	s := get("/v1/search?q=" + url.QueryEscape("90-05 212th St Glen Oaks NY"))
	if s["success"] != true || s["count"].(float64) < 1 {
		t.Fatalf("search: %v", s)
	}
	top := s["results"].([]any)[0].(map[string]any)
	if top["id"] != "fx-07" || top["confidence"].(float64) < 0.8 || top["address"] != "90-05 212th Street, Glen Oaks, NY 11004" ||
		top["latitude"] != 40.74172 || top["longitude"] != -73.71702 {
		t.Errorf("top result %v", top)
	}
	if top := get("/v1/search?q=" + url.QueryEscape("401 Aplegate Lane Westerville"))["results"].([]any)[0].(map[string]any); top["id"] != "fx-29" {
		t.Errorf("fuzzy top %v", top)
	}
	a := get("/v1/autocomplete?q=" + url.QueryEscape("240-16 Brad") + "&limit=3")
	sug := a["suggestions"].([]any)
	if len(sug) != 3 || sug[0].(map[string]any)["id"] != "fx-02" || sug[0].(map[string]any)["text"] != "240-16 Braddock Avenue, Glen Oaks, NY 11004" {
		t.Errorf("autocomplete %v", a)
	}
	if v := get("/v1/validate?q=" + url.QueryEscape("36 N State St, Westerville, OH 43081")); v["exists"] != true || v["id"] != "fx-20" {
		t.Errorf("validate existing: %v", v)
	}
	if v := get("/v1/validate?q=" + url.QueryEscape("17 Lakeview Terrace, Westerville, OH")); v["exists"] != false || v["id"] != nil {
		t.Errorf("validate missing: %v", v)
	}
	for _, p := range []string{"/v1/search", "/v1/autocomplete?q=", "/v1/search?q=main&limit=0", "/v1/autocomplete?q=main&limit=21",
		"/v1/search?q=main&limit=101", "/v1/validate?q=" + strings.Repeat("a", 501)} {
		r := n.do("GET", p, k, nil)
		if m := r.json(t); r.Status != 400 || m["success"] != false || m["error"] == "" {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	if s := get("/v1/search?q=main&country=FR"); s["count"].(float64) != 0 {
		t.Errorf("non-US country: %v", s)
	}
}

func TestGeocodingWithoutAddressesAnswers501(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"geocoding:read"}, 100000)
	for _, p := range []string{"/v1/search?q=main", "/v1/autocomplete?q=main", "/v1/validate?q=main"} {
		if r := n.do("GET", p, k, nil); r.Status != 501 {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
}

func TestGeocoding(t *testing.T) {
	cfg := testConfig(t)
	cfg.Addresses = sharedData(t, "addresses/us-rrad-openaddresses-sample.csv") + "," + sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv")
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"geocoding:read"}, 100000)
	get := func(path string) map[string]any { return n.do("GET", path, k, nil).json(t) }

	s := get("/v1/search?q=" + url.QueryEscape("1745 T St SE Washington DC"))
	if s["success"] != true || s["count"].(float64) < 1 {
		t.Fatalf("search: %v", s)
	}
	top := s["results"].([]any)[0].(map[string]any)
	if top["id"] != "rrad-1" || top["confidence"].(float64) < 0.8 || top["address"] != "1745 T Street Southeast, Washington, DC 20020" {
		t.Errorf("top result %v", top)
	}
	// fuzzy: a typo still finds it
	if top := get("/v1/search?q=" + url.QueryEscape("6007 Aplegate Lane Louisville"))["results"].([]any)[0].(map[string]any); top["id"] != "rrad-2" {
		t.Errorf("fuzzy top %v", top)
	}
	a := get("/v1/autocomplete?q=" + url.QueryEscape("203-06 109th Av") + "&limit=3")
	sug := a["suggestions"].([]any)
	if len(sug) == 0 || len(sug) > 3 || !strings.HasPrefix(sug[0].(map[string]any)["text"].(string), "203-06 109th Avenue") {
		t.Errorf("autocomplete %v", a)
	}
	if v := get("/v1/validate?q=" + url.QueryEscape("1745 T Street Southeast, Washington, DC 20020")); v["exists"] != true || v["id"] != "rrad-1" {
		t.Errorf("validate existing: %v", v)
	}
	if v := get("/v1/validate?q=" + url.QueryEscape("99999 Nowhere Boulevard Atlantis")); v["exists"] != false {
		t.Errorf("validate missing: %v", v)
	}
	for _, p := range []string{"/v1/search", "/v1/autocomplete?q=", "/v1/search?q=main&limit=0", "/v1/autocomplete?q=main&limit=21"} {
		r := n.do("GET", p, k, nil)
		if m := r.json(t); r.Status != 400 || m["success"] != false || m["error"] == "" {
			t.Errorf("%s: %d %s", p, r.Status, r.Body)
		}
	}
	if s := get("/v1/search?q=main&country=FR"); s["count"].(float64) != 0 {
		t.Errorf("non-US country: %v", s)
	}
}

// TestLocationNamesEnrichment: a stream asking for location_names gets
// the nearest indexed address of each event, on the fixture and on the
// real data.
func TestLocationNamesEnrichment(t *testing.T) {
	for _, c := range []struct {
		name      string
		addresses func(t *testing.T) string
		lat, lon  float64
		want      string
	}{
		{"fixture", addressFixture, 40.74180, -73.71702, "90-05 212th Street, Glen Oaks, NY 11004"},
		{"real data", func(t *testing.T) string { return sharedData(t, "addresses/us-rrad-openaddresses-sample.csv") },
			38.86705, -76.97925, "1745 T Street Southeast, Washington, DC 20020"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := testConfig(t)
			cfg.Addresses = c.addresses(t)
			if got := locationName(t, cfg, c.lat, c.lon); got != c.want {
				t.Errorf("location_name %v, want %q", got, c.want)
			}
		})
	}
}

// locationName streams one event at lat, lon through a node and returns
// its location_name enrichment.
func locationName(t *testing.T, cfg *config, lat, lon float64) any {
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"veh-dc"}},
		"processing_rules": map[string]any{"enrichment": []string{"location_names"}}})
	id := r.json(t)["stream_id"].(string)
	c := n.dial(t, k, "stream_id="+id)
	ev := map[string]any{"event_type": "harsh_braking", "category": "safety_events", "timestamp": "2026-11-23T10:00:00Z", "severity": "high", "priority": "urgent",
		"source": map[string]any{"vehicle_id": "veh-dc"}, "location": map[string]any{"latitude": lat, "longitude": lon}}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{ev}}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	got := readEvents(t, c, 1)
	var m struct {
		Enrichment map[string]any `json:"enrichment"`
	}
	if err := jsonUnmarshal(got[0].Message, &m); err != nil {
		t.Fatal(err)
	}
	return m.Enrichment["location_name"]
}

// TestLocationNamesRefusedWithoutAddresses: on a server without
// --addresses the location_names enrichment would add nothing, so a
// stream start or configure asking for it is 400 naming it and makes or
// changes nothing; the other enrichments are taken.
func TestLocationNamesRefusedWithoutAddresses(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"processing_rules": map[string]any{"enrichment": []string{"driver_info", "location_names"}}})
	if r.Status != 400 || !strings.Contains(string(r.Body), "processing_rules.enrichment[1]") || !strings.Contains(string(r.Body), "--addresses") {
		t.Fatalf("start with location_names: %d %s, want 400 naming processing_rules.enrichment[1]", r.Status, r.Body)
	}
	if l := n.do("GET", "/api/v1/streaming/streams", k, nil).json(t)["streams"].([]any); len(l) != 0 {
		t.Errorf("the refused start made %d streams", len(l))
	}
	r = n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"processing_rules": map[string]any{"enrichment": []string{"driver_info"}}})
	if r.Status != 201 {
		t.Fatalf("start with driver_info: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{
		"processing_rules": map[string]any{"enrichment": []string{"location_names"}}})
	if r.Status != 400 || !strings.Contains(string(r.Body), "processing_rules.enrichment[0]") {
		t.Errorf("configure with location_names: %d %s, want 400 naming processing_rules.enrichment[0]", r.Status, r.Body)
	}
}
