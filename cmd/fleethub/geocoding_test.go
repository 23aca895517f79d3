package main

import (
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// addressData is the shared public address sample (OpenAddresses layout).
func addressData(t *testing.T) string {
	t.Helper()
	p, _ := filepath.Abs("../../../shared/data/addresses/us-rrad-openaddresses-sample.csv")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("address data missing at %s: %v", p, err)
	}
	return p
}

func TestGeocoding(t *testing.T) {
	cfg := testConfig(t)
	q, _ := filepath.Abs("../../../shared/data/addresses/us-ny-queens-village-osm-addresses.csv")
	cfg.Addresses = addressData(t) + "," + q
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

func TestLocationNamesEnrichment(t *testing.T) {
	cfg := testConfig(t)
	cfg.Addresses = addressData(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"vehicle_ids": []string{"veh-dc"}},
		"processing_rules": map[string]any{"enrichment": []string{"location_names"}}})
	id := r.json(t)["stream_id"].(string)
	c := n.dial(t, k, "stream_id="+id)
	ev := map[string]any{"event_type": "harsh_braking", "category": "safety_events", "timestamp": "2026-11-23T10:00:00Z", "severity": "high", "priority": "urgent",
		"source": map[string]any{"vehicle_id": "veh-dc"}, "location": map[string]any{"latitude": 38.86705, "longitude": -76.97925}}
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
	if m.Enrichment["location_name"] != "1745 T Street Southeast, Washington, DC 20020" {
		t.Errorf("enrichment %v", m.Enrichment)
	}
}
