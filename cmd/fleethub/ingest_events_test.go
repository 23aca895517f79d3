package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// An event_id repeated within one POST /v1/events is accepted (202), the
// answer counts the repeats, every copy is published, and stream
// deduplication decides what streams see: a deduplicating stream gets the
// first copy, a stream without deduplication every copy. Bad sequence
// numbers and a client-set metadata.late are refused with 400 and publish
// nothing.
func TestIngestEventsDuplicatesAndBadInput(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	filters := map[string]any{"vehicle_ids": []string{"veh-dup"}}
	dedup := subscribe(t, n, k, startStream(t, n, k, map[string]any{"event_filters": filters, "processing_rules": map[string]any{"deduplication": true}}))
	plain := subscribe(t, n, k, startStream(t, n, k, map[string]any{"event_filters": filters}))

	ev := func(id string, i int) map[string]any {
		return map[string]any{"event_id": id, "event_type": "harsh_braking", "category": "safety_events", "timestamp": stamp(-time.Second),
			"severity": "high", "source": map[string]any{"vehicle_id": "veh-dup"}, "event_data": map[string]any{"copy": i}}
	}
	r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{ev("dup-1", 0), ev("dup-2", 1), ev("dup-1", 2), ev("dup-1", 3)}})
	if r.Status != 202 {
		t.Fatalf("repeats: %d %s", r.Status, r.Body)
	}
	n.conforms("POST", "/v1/events", r)
	b := r.json(t)
	if b["accepted"] != 4.0 || fmt.Sprint(b["event_ids"]) != "[dup-1 dup-2 dup-1 dup-1]" || b["duplicates"] != 2.0 || fmt.Sprint(b["duplicate_event_ids"]) != "[dup-1]" {
		t.Fatalf("answer %s", r.Body)
	}

	base := `{"event_type":"harsh_braking","category":"safety_events","timestamp":"` + stamp(-time.Second) + `","severity":"high","source":{"vehicle_id":"veh-dup"}`
	for _, c := range []struct{ body, field, msg string }{
		{`{"events":[` + base + `},` + base + `,"metadata":{"sequence_number":1e3}}]}`, "events[1].metadata.sequence_number",
			"must be written as a plain integer, without a fraction or exponent (1000, not 1e3 or 1000.0)"},
		{`{"events":[` + base + `,"metadata":{"sequence_number":-4}}]}`, "events[0].metadata.sequence_number", "must not be negative (an integer from 0 to 9007199254740991)"},
		{`{"events":[` + base + `,"metadata":{"sequence_number":9007199254740992}}]}`, "events[0].metadata.sequence_number", "must be at most 9007199254740991 (2^53-1)"},
		{`{"events":[` + base + `,"metadata":{"sequence_number":2,"late":true}}]}`, "events[0].metadata.late",
			"is set by the hub (on events delivered after their place in sequence order), not by clients; leave it out"},
		{`{"events":[` + base + `,"event_id":"` + strings.Repeat("x", 10240) + `"}]}`, "events[0].event_id", "must be at most 100 characters"},
	} {
		r := n.do("POST", "/v1/events", k, c.body)
		if r.Status != 400 || r.errCode(t) != "validation_failed" {
			t.Errorf("%s: %d %.300s", c.field, r.Status, r.Body)
			continue
		}
		n.conforms("POST", "/v1/events", r)
		e := r.json(t)["error"].(map[string]any)
		if d := e["details"].(map[string]any); len(d) != 1 || d[c.field] != c.msg {
			t.Errorf("%s: details %v", c.field, d)
		}
	}

	// the marker comes after everything on the vehicle's partition: what
	// a stream delivers before it is all it will get of the above
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{ev("marker", 9)}}); r.Status != 202 || r.json(t)["duplicates"] != 0.0 {
		t.Fatalf("marker: %d %s", r.Status, r.Body)
	}
	got := func(ds []delivered) string {
		var out []string
		for _, d := range ds {
			var m struct {
				EventID   string `json:"event_id"`
				EventData struct {
					Copy int `json:"copy"`
				} `json:"event_data"`
			}
			if err := json.Unmarshal(d.Message, &m); err != nil {
				t.Fatal(err)
			}
			out = append(out, fmt.Sprint(m.EventID, "/", m.EventData.Copy))
		}
		return strings.Join(out, " ")
	}
	if s := got(readEvents(t, dedup, 3)); s != "dup-1/0 dup-2/1 marker/9" {
		t.Errorf("deduplicating stream delivered %s", s)
	}
	if s := got(readEvents(t, plain, 5)); s != "dup-1/0 dup-2/1 dup-1/2 dup-1/3 marker/9" {
		t.Errorf("stream without deduplication delivered %s", s)
	}
}

// The OpenAPI document describes the new answer field and the rules.
func TestIngestEventsOpenAPI(t *testing.T) {
	n := startNode(t, testConfig(t))
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	schemas := doc["components"].(map[string]any)["schemas"].(map[string]any)
	find := func(prop string) map[string]any {
		for _, s := range schemas {
			if p, ok := s.(map[string]any)["properties"].(map[string]any); ok {
				if _, ok := p["event_ids"]; ok && prop == "duplicates" {
					return p
				}
				if _, ok := p["sequence_number"]; ok && prop == "sequence_number" {
					if _, client := p["processing_time"]; client {
						if _, server := p["late"]; !server {
							return p
						}
					}
				}
			}
		}
		t.Fatalf("no schema with %s", prop)
		return nil
	}
	acc := find("duplicates")
	if d, _ := acc["duplicates"].(map[string]any); d["type"] != "integer" || !strings.Contains(fmt.Sprint(d["description"]), "repeat an event_id") {
		t.Errorf("duplicates %v", acc["duplicates"])
	}
	if _, ok := acc["duplicate_event_ids"]; !ok {
		t.Errorf("no duplicate_event_ids in %v", acc)
	}
	md := find("sequence_number")
	if d := fmt.Sprint(md["sequence_number"].(map[string]any)["description"]); !strings.Contains(d, "9007199254740991") || !strings.Contains(d, "unsequenced") {
		t.Errorf("sequence_number: %s", d)
	}
}
