package ingestapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

// eventJSON is a valid event for vehicle v; extra is spliced in as more
// fields (",\"event_id\":\"x\"").
func eventJSON(extra string) string {
	return fmt.Sprintf(`{"event_type":"door_open","category":"vehicle_events","timestamp":%q,"severity":"low","source":{"vehicle_id":"v"}%s}`, now(-time.Second), extra)
}

// An event_id repeated within a request is accepted: 202, every event is
// published, and the answer counts the repeats.
func TestEventsDuplicatesAccepted(t *testing.T) {
	s := start(t, "events:write")
	var evs []string
	for _, id := range []string{"a", "b", "a", "", "a", "c", "b"} {
		extra := ""
		if id != "" {
			extra = fmt.Sprintf(`,"event_id":%q`, id)
		}
		evs = append(evs, eventJSON(extra))
	}
	r := s.post(t, "/v1/events", ct, `{"events":[`+strings.Join(evs, ",")+`]}`)
	if r.status != 202 {
		t.Fatalf("repeats: %d %s", r.status, r.raw)
	}
	ids, _ := r.body["event_ids"].([]any)
	if r.body["accepted"] != 7.0 || len(ids) != 7 || r.body["duplicates"] != 3.0 || fmt.Sprint(r.body["duplicate_event_ids"]) != "[a b]" {
		t.Fatalf("answer %s", r.raw)
	}
	if got := fmt.Sprint(ids[:3], ids[4:]); got != "[a b a] [a c b]" || !strings.HasPrefix(ids[3].(string), "evt_") {
		t.Errorf("event_ids %v", ids)
	}
	s.bus.mu.Lock()
	var published []string
	for _, m := range s.bus.msgs {
		env, err := event.Unmarshal(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		published = append(published, env.Event.EventID)
	}
	s.bus.mu.Unlock()
	if fmt.Sprint(published) != fmt.Sprint(ids) {
		t.Fatalf("published %v, answered %v", published, ids)
	}

	// without repeats: duplicates is 0 and the id list is left out
	r = s.post(t, "/v1/events", ct, `{"events":[`+eventJSON(`,"event_id":"d"`)+`,`+eventJSON("")+`]}`)
	if r.status != 202 || r.body["duplicates"] != 0.0 || r.body["accepted"] != 2.0 {
		t.Fatalf("no repeats: %d %s", r.status, r.raw)
	}
	if _, ok := r.body["duplicate_event_ids"]; ok {
		t.Errorf("duplicate_event_ids present without repeats: %s", r.raw)
	}
}

// Bad sequence numbers, client-set metadata.late and over-long ids are
// answered 400 validation_failed in the documented error shape, naming the
// field path, and nothing of the request is published.
func TestEventsBadInput(t *testing.T) {
	s := start(t, "events:write")
	long := func(n int, c string) string { return strings.Repeat(c, n) }
	for _, c := range []struct {
		name, extra, field, msg string
	}{
		{"negative sequence", `,"metadata":{"sequence_number":-1}`, "events[3].metadata.sequence_number", "must not be negative (an integer from 0 to 9007199254740991)"},
		{"fractional sequence", `,"metadata":{"sequence_number":1.5}`, "events[3].metadata.sequence_number", "must be an integer from 0 to 9007199254740991"},
		{"string sequence", `,"metadata":{"sequence_number":"12"}`, "events[3].metadata.sequence_number", "must be an integer from 0 to 9007199254740991"},
		{"sequence 2^53", `,"metadata":{"sequence_number":9007199254740992}`, "events[3].metadata.sequence_number", "must be at most 9007199254740991 (2^53-1)"},
		{"sequence 1e400", `,"metadata":{"sequence_number":1e400}`, "events[3].metadata.sequence_number", "must be at most 9007199254740991 (2^53-1)"},
		{"sequence 1e3", `,"metadata":{"sequence_number":1e3}`, "events[3].metadata.sequence_number",
			"must be written as a plain integer, without a fraction or exponent (1000, not 1e3 or 1000.0)"},
		{"sequence 1.0", `,"metadata":{"sequence_number":1.0}`, "events[3].metadata.sequence_number",
			"must be written as a plain integer, without a fraction or exponent (1000, not 1e3 or 1000.0)"},
		{"late", `,"metadata":{"sequence_number":4,"late":true}`, "events[3].metadata.late",
			"is set by the hub (on events delivered after their place in sequence order), not by clients; leave it out"},
		{"10 KB event_id", `,"event_id":"` + long(10240, "e") + `"`, "events[3].event_id", "must be at most 100 characters"},
		{"event_id charset", `,"event_id":"a/b"`, "events[3].event_id", "must be 1 to 100 letters, digits, _, -, . or :"},
		{"long correlation_id", `,"metadata":{"correlation_id":"` + long(201, "c") + `"}`, "events[3].metadata.correlation_id", "must be at most 200 characters"},
	} {
		good := eventJSON(`,"event_id":"ok","metadata":{"sequence_number":1}`)
		r := s.post(t, "/v1/events", ct, `{"events":[`+good+`,`+good+`,`+good+`,`+eventJSON(c.extra)+`]}`)
		if r.status != 400 || r.code() != "validation_failed" {
			t.Errorf("%s: %d %.300s", c.name, r.status, r.raw)
			continue
		}
		e, _ := r.body["error"].(map[string]any)
		if d := r.details(); len(d) != 1 || d[c.field] != c.msg || e["message"] != c.field+": "+c.msg {
			t.Errorf("%s: error %v", c.name, e)
		}
		if id, _ := r.body["request_id"].(string); id == "" {
			t.Errorf("%s: no request_id: %.300s", c.name, r.raw)
		}
		if len(r.raw) > 2000 {
			t.Errorf("%s: error body of %d bytes", c.name, len(r.raw))
		}
	}
	// long source ids, all three at once
	r := s.post(t, "/v1/events", ct, `{"events":[`+strings.Replace(eventJSON(""), `{"vehicle_id":"v"}`,
		`{"vehicle_id":"`+long(10240, "v")+`","driver_id":"`+long(201, "d")+`","trip_id":"`+long(201, "t")+`"}`, 1)+`]}`)
	d := r.details()
	for _, f := range []string{"events[0].source.vehicle_id", "events[0].source.driver_id", "events[0].source.trip_id"} {
		if d[f] != "must be at most 200 characters" {
			t.Errorf("%s: %v (%d)", f, d[f], r.status)
		}
	}
	if r.status != 400 {
		t.Errorf("long source ids: %d", r.status)
	}
	if n := s.bus.count(); n != 0 {
		t.Fatalf("bad requests published %d messages", n)
	}
	// the edges are accepted
	r = s.post(t, "/v1/events", ct, `{"events":[`+eventJSON(`,"event_id":"`+long(100, "e")+`","metadata":{"sequence_number":9007199254740991,"correlation_id":"`+long(200, "c")+`"}`)+
		`,`+eventJSON(`,"metadata":{"sequence_number":0}`)+`]}`)
	if r.status != 202 || s.bus.count() != 2 {
		t.Fatalf("edges: %d %s", r.status, r.raw)
	}
	s.bus.mu.Lock()
	env, err := event.Unmarshal(s.bus.msgs[0].Value)
	s.bus.mu.Unlock()
	if err != nil || env.Event.Metadata.SequenceNumber != 9007199254740991 {
		t.Fatalf("published sequence_number %+v %v", env, err)
	}
}

// A member repeated in its object, in an event, its free-form event_data
// or a telemetry message's data, refuses the request by path: the fast
// reader declines it and the general path names it; nothing is published.
func TestIngestRefusesRepeatedMembers(t *testing.T) {
	s := start(t, "events:write", "telemetry:write")
	const refusal = "is repeated: a member name appears once in its object"
	good := eventJSON("")
	tm := `{"timestamp":%q,"vehicle_id":"v","data_type":"environmental","data":{"cabin":{"temp":21%s}}}`
	for _, c := range []struct{ path, body, field string }{
		{"/v1/events", `{"events":[` + good + `,` + good + `,` + eventJSON(`,"event_data":{"a":1,"b":{"c":1,"c":2}}`) + `]}`, "events[2].event_data.b.c"},
		{"/v1/events", `{"events":[` + good + `,` + eventJSON(`,"event_data":{"a":1,"a":"two"}`) + `]}`, "events[1].event_data.a"},
		{"/v1/events", `{"events":[` + eventJSON(`,"severity":"high"`) + `]}`, "events[0].severity"},
		{"/v1/events", `{"events":[` + good + `],"events":[` + good + `]}`, "events"},
		{"/v1/telemetry", `{"messages":[` + fmt.Sprintf(tm, now(-time.Second), ``) + `,` + fmt.Sprintf(tm, now(-time.Second), `,"temp":22`) + `]}`, "messages[1].data.cabin.temp"},
	} {
		r := s.post(t, c.path, ct, c.body)
		if r.status != 400 || r.code() != "validation_failed" {
			t.Errorf("%s: %d %.300s", c.body, r.status, r.raw)
			continue
		}
		if d := r.details(); len(d) != 1 || d[c.field] != refusal {
			t.Errorf("%s: details %v, want %s", c.body, d, c.field)
		}
	}
	if n := s.bus.count(); n != 0 {
		t.Fatalf("refused requests published %d messages", n)
	}
}
