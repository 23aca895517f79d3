package telemetry_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

const fullEvent = `{
	"event_id": "ext-42", "event_type": "harsh_braking", "category": "safety_events", "timestamp": "2026-11-23T09:59:00Z",
	"severity": "high", "priority": "urgent",
	"source": {"vehicle_id": "veh-1", "driver_id": "drv-1", "trip_id": "trip_1"},
	"location": {"latitude": 40.1, "longitude": -83.2, "address": "Main St", "geofence": "depot", "accuracy": 4,
		"speed_limit": 50, "road_type": "urban", "emergency_services_distance": 2.5},
	"event_data": {"deceleration_g": 0.62, "initial_speed": 72, "final_speed": 18, "preceding_events": [{"type": "speeding", "n": 1}]},
	"metadata": {"correlation_id": "corr-1", "sequence_number": 9, "processing_time": "whatever", "source_system": "fleet-cam"},
	"risk_assessment": {"collision_risk": "medium", "passenger_impact": 0.2},
	"automatic_actions": {"alert_sent": true},
	"emergency_response": {"response_initiated": false},
	"escalation": {"level": 1},
	"recommendations": ["coach the driver"],
	"predictive_indicators": {"risk_trend": 0.1},
	"performance_metrics": {"on_time_departure": true}
}`

var evtID = regexp.MustCompile(`^evt_[0-9a-f]{24}$`)

func TestEventsFullAndDefaults(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	minimal := `{"event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00+01:00","severity":"low","source":{"driver_id":"drv-9"}}`
	res, err := f.svc.IngestEvents(context.Background(), "org-a", "live", objs(t, "["+fullEvent+","+minimal+"]"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Accepted != 2 || res.EventIDs[0] != "ext-42" || !evtID.MatchString(res.EventIDs[1]) || !res.IngestedAt.Equal(t0) {
		t.Fatalf("result %+v", res)
	}
	calls := f.bus.take()
	if len(calls) != 1 {
		t.Fatalf("%d publish calls, want 1", len(calls))
	}
	ms := all(t, calls)
	if len(ms) != 2 {
		t.Fatalf("%d messages", len(ms))
	}
	full, min := ms[0], ms[1]
	if full.Topic != hub.TopicEvents || string(full.Key) != "veh-1" || string(min.Key) != "drv-9" {
		t.Errorf("keys %s %s", full.Key, min.Key)
	}
	e := full.env.Event
	if full.env.Kind != event.KindEvent || full.env.Org != "org-a" || full.env.Env != "live" {
		t.Errorf("envelope %+v", full.env)
	}
	if e.EventID != "ext-42" || e.EventType != "harsh_braking" || e.Category != "safety_events" || e.Severity != "high" || e.Priority != "urgent" ||
		!e.Timestamp.Equal(t0.Add(-time.Minute)) || e.Source != (event.Source{VehicleID: "veh-1", DriverID: "drv-1", TripID: "trip_1"}) {
		t.Errorf("event %+v", e)
	}
	l := e.Location
	if l == nil || l.Latitude != 40.1 || l.Longitude != -83.2 || l.Address != "Main St" || l.Geofence != "depot" || *l.Accuracy != 4 ||
		*l.SpeedLimit != 50 || l.RoadType != "urban" || *l.EmergencyServicesDistance != 2.5 {
		t.Errorf("location %+v", l)
	}
	if e.EventData["deceleration_g"] != 0.62 || e.EventData["preceding_events"].([]any)[0].(map[string]any)["n"] != 1.0 {
		t.Errorf("event_data %#v", e.EventData)
	}
	md := e.Metadata
	if md.CorrelationID != "corr-1" || md.SequenceNumber != 9 || md.SourceSystem != "fleet-cam" || md.ProcessingTime != t0.Format(time.RFC3339Nano) {
		t.Errorf("metadata %+v", md)
	}
	if e.RiskAssessment["passenger_impact"] != 0.2 || e.AutomaticActions["alert_sent"] != true || e.EmergencyResponse == nil ||
		e.Escalation["level"] != 1.0 || e.Recommendations == nil || e.PredictiveIndicators == nil || e.PerformanceMetrics == nil {
		t.Errorf("category objects %+v", e)
	}
	m := min.env.Event
	if m.Priority != "normal" || m.Metadata.SourceSystem != "external" || m.Metadata.ProcessingTime == "" || m.EventID != res.EventIDs[1] {
		t.Errorf("defaults %+v", m)
	}
}

func TestEventKeys(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	body := `[
		{"event_type":"a","category":"trip_lifecycle","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"trip_id":"t1"}},
		{"event_type":"a","category":"trip_lifecycle","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"trip_id":"t1","driver_id":"d1"}},
		{"event_type":"a","category":"trip_lifecycle","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"trip_id":"t1","driver_id":"d1","vehicle_id":"v1"}}]`
	if _, err := f.svc.IngestEvents(context.Background(), "o", "test", objs(t, body)); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range all(t, f.bus.take()) {
		keys = append(keys, string(m.Key))
	}
	if strings.Join(keys, ",") != "t1,d1,v1" {
		t.Fatalf("keys %v", keys)
	}
}

func TestEventValidation(t *testing.T) {
	base := func(over string) string {
		return `{"event_type":"harsh_braking","category":"safety_events","timestamp":"2026-11-23T09:00:00Z","severity":"high","source":{"vehicle_id":"v"}` + over + `}`
	}
	deep := strings.Repeat(`{"a":`, 20) + "1" + strings.Repeat("}", 20)
	cases := []struct {
		name string
		ev   string
		want map[string]string
	}{
		{"valid", base(""), nil},
		{"emergency priority", base(`,"priority":"emergency"`), nil},
		{"null location fields absent", base(`,"location":{"latitude":-90,"longitude":180}`), nil},
		{"empty", `{}`, map[string]string{"events[0].event_type": "required", "events[0].category": "required",
			"events[0].timestamp": "required", "events[0].severity": "required", "events[0].source": "required"}},
		{"category", strings.Replace(base(""), "safety_events", "safety", 1), map[string]string{"events[0].category": "one of"}},
		{"severity", strings.Replace(base(""), `"high"`, `"severe"`, 1), map[string]string{"events[0].severity": "one of"}},
		{"priority", base(`,"priority":"asap"`), map[string]string{"events[0].priority": "one of"}},
		{"event type case", strings.Replace(base(""), "harsh_braking", "HarshBraking", 1), map[string]string{"events[0].event_type": "snake_case"}},
		{"event type long", strings.Replace(base(""), "harsh_braking", strings.Repeat("a", 101), 1), map[string]string{"events[0].event_type": "100"}},
		{"event type number", strings.Replace(base(""), `"harsh_braking"`, "7", 1), map[string]string{"events[0].event_type": "string"}},
		{"timestamp", strings.Replace(base(""), "2026-11-23T09:00:00Z", "yesterday", 1), map[string]string{"events[0].timestamp": "ISO 8601"}},
		{"future", strings.Replace(base(""), "2026-11-23T09:00:00Z", ts(10*time.Minute), 1), map[string]string{"events[0].timestamp": "future"}},
		{"source empty", strings.Replace(base(""), `{"vehicle_id":"v"}`, `{}`, 1), map[string]string{"events[0].source": "at least one"}},
		{"source string", strings.Replace(base(""), `{"vehicle_id":"v"}`, `"v"`, 1), map[string]string{"events[0].source": "object"}},
		{"source unknown", strings.Replace(base(""), `{"vehicle_id":"v"}`, `{"vehicle_id":"v","fleet":"f"}`, 1), map[string]string{"events[0].source.fleet": "unknown"}},
		{"source number", strings.Replace(base(""), `{"vehicle_id":"v"}`, `{"vehicle_id":5}`, 1), map[string]string{"events[0].source.vehicle_id": "string",
			"events[0].source": "at least one"}},
		{"latitude", base(`,"location":{"latitude":91,"longitude":0}`), map[string]string{"events[0].location.latitude": "-90 and 90"}},
		{"longitude", base(`,"location":{"latitude":0,"longitude":-181}`), map[string]string{"events[0].location.longitude": "-180 and 180"}},
		{"no latitude", base(`,"location":{"longitude":1}`), map[string]string{"events[0].location.latitude": "required"}},
		{"location unknown", base(`,"location":{"latitude":1,"longitude":1,"alt":3}`), map[string]string{"events[0].location.alt": "unknown"}},
		{"accuracy", base(`,"location":{"latitude":1,"longitude":1,"accuracy":-1}`), map[string]string{"events[0].location.accuracy": "≥ 0"}},
		{"location array", base(`,"location":[1,2]`), map[string]string{"events[0].location": "object"}},
		{"metadata unknown", base(`,"metadata":{"trace":"x"}`), map[string]string{"events[0].metadata.trace": "unknown"}},
		{"sequence number", base(`,"metadata":{"sequence_number":-1}`), map[string]string{"events[0].metadata.sequence_number": "negative"}},
		{"sequence number zero", base(`,"metadata":{"sequence_number":0}`), nil},
		{"sequence number max", base(`,"metadata":{"sequence_number":9007199254740991}`), nil},
		{"sequence number 2^53", base(`,"metadata":{"sequence_number":9007199254740992}`), map[string]string{"events[0].metadata.sequence_number": "at most 9007199254740991"}},
		{"sequence number beyond int64", base(`,"metadata":{"sequence_number":123456789012345678901234567890}`), map[string]string{"events[0].metadata.sequence_number": "at most 9007199254740991"}},
		{"sequence number huge negative", base(`,"metadata":{"sequence_number":-123456789012345678901234567890}`), map[string]string{"events[0].metadata.sequence_number": "negative"}},
		{"sequence number fraction", base(`,"metadata":{"sequence_number":1.5}`), map[string]string{"events[0].metadata.sequence_number": "integer from 0 to 9007199254740991"}},
		{"sequence number 1.0", base(`,"metadata":{"sequence_number":1.0}`), map[string]string{"events[0].metadata.sequence_number": "plain integer"}},
		{"sequence number 1e3", base(`,"metadata":{"sequence_number":1e3}`), map[string]string{"events[0].metadata.sequence_number": "without a fraction or exponent"}},
		{"sequence number 1e999", base(`,"metadata":{"sequence_number":1e999}`), map[string]string{"events[0].metadata.sequence_number": "at most"}},
		{"sequence number 1e20", base(`,"metadata":{"sequence_number":1E20}`), map[string]string{"events[0].metadata.sequence_number": "at most"}},
		{"sequence number -2.0", base(`,"metadata":{"sequence_number":-2.0}`), map[string]string{"events[0].metadata.sequence_number": "negative"}},
		{"sequence number string", base(`,"metadata":{"sequence_number":"7"}`), map[string]string{"events[0].metadata.sequence_number": "integer from 0"}},
		{"sequence number null", base(`,"metadata":{"sequence_number":null}`), map[string]string{"events[0].metadata.sequence_number": "integer from 0"}},
		{"sequence number bool", base(`,"metadata":{"sequence_number":true}`), map[string]string{"events[0].metadata.sequence_number": "integer from 0"}},
		{"late from client", base(`,"metadata":{"late":true}`), map[string]string{"events[0].metadata.late": "set by the hub"}},
		{"late false from client", base(`,"metadata":{"sequence_number":3,"late":false}`), map[string]string{"events[0].metadata.late": "not by clients"}},
		{"correlation id long", base(`,"metadata":{"correlation_id":"` + strings.Repeat("c", 201) + `"}`), map[string]string{"events[0].metadata.correlation_id": "at most 200"}},
		{"correlation id 200", base(`,"metadata":{"correlation_id":"` + strings.Repeat("c", 200) + `"}`), nil},
		{"source ids long", strings.Replace(base(""), `{"vehicle_id":"v"}`, `{"vehicle_id":"`+strings.Repeat("v", 10240)+`","driver_id":"`+strings.Repeat("d", 201)+
			`","trip_id":"`+strings.Repeat("t", 201)+`"}`, 1), map[string]string{"events[0].source.vehicle_id": "at most 200", "events[0].source.driver_id": "at most 200",
			"events[0].source.trip_id": "at most 200", "events[0].source": "at least one"}},
		{"event id 10 KB", base(`,"event_id":"` + strings.Repeat("x", 10240) + `"`), map[string]string{"events[0].event_id": "at most 100"}},
		{"event id 101", base(`,"event_id":"` + strings.Repeat("x", 101) + `"`), map[string]string{"events[0].event_id": "at most 100"}},
		{"event id 100", base(`,"event_id":"` + strings.Repeat("x", 100) + `"`), nil},
		{"event id multibyte", base(`,"event_id":"` + strings.Repeat("é", 50) + `"`), map[string]string{"events[0].event_id": "letters"}},
		{"event id number", base(`,"event_id":42`), map[string]string{"events[0].event_id": "string"}},
		{"event_data array", base(`,"event_data":[1]`), map[string]string{"events[0].event_data": "object"}},
		{"event_data deep", base(`,"event_data":` + deep), map[string]string{"events[0].event_data.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a.a": "deeper"}},
		{"event_data overflow", base(`,"event_data":{"x":[1,1e999]}`), map[string]string{"events[0].event_data.x[1]": "finite"}},
		{"recommendations string", base(`,"recommendations":"rest"`), map[string]string{"events[0].recommendations": "array or an object"}},
		{"enrichment", base(`,"enrichment":{}`), map[string]string{"events[0].enrichment": "unknown field"}},
		{"event id chars", base(`,"event_id":"a b"`), map[string]string{"events[0].event_id": "letters"}},
		{"event id empty", base(`,"event_id":""`), map[string]string{"events[0].event_id": "letters"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, telemetry.Config{})
			_, err := f.svc.IngestEvents(context.Background(), "o", "test", []map[string]any{obj(t, c.ev)})
			published := len(f.bus.take())
			if c.want == nil {
				if err != nil || published != 1 {
					t.Fatalf("valid event: %v, %d calls", err, published)
				}
				return
			}
			if published != 0 {
				t.Fatal("an invalid event was published")
			}
			ve := validation(t, err)
			for p, part := range c.want {
				if !strings.Contains(ve.Fields[p], part) {
					t.Errorf("%s: %q, want it to mention %q (all: %v)", p, ve.Fields[p], part, ve.Fields)
				}
			}
			if len(ve.Fields) != len(c.want) {
				t.Errorf("errors %v, want only %v", ve.Fields, c.want)
			}
		})
	}
}

// An event_id repeated within a request is accepted: every copy is
// published, in request order, and the repeats are counted.
func TestEventDuplicatesInRequest(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	ev := `{"event_id":"%s","event_type":"a","category":"driver_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"driver_id":"d"},"event_data":{"n":%d}}`
	noID := `{"event_type":"a","category":"driver_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"driver_id":"d"}}`
	ids := []string{"x1", "x2", "x1", "x3", "x2", "x1"}
	var body []string
	for i, id := range ids {
		body = append(body, fmt.Sprintf(ev, id, i))
		if i == 2 {
			body = append(body, noID, noID)
		}
	}
	res, err := f.svc.IngestEvents(context.Background(), "o", "test", objs(t, "["+strings.Join(body, ",")+"]"))
	if err != nil {
		t.Fatal(err)
	}
	// x1 three times (2 repeats), x2 twice (1); the two assigned ids differ
	if res.Accepted != 8 || len(res.EventIDs) != 8 || res.Duplicates != 3 || strings.Join(res.DuplicateEventIDs, ",") != "x1,x2" {
		t.Fatalf("result %+v", res)
	}
	if res.EventIDs[3] == res.EventIDs[4] || !evtID.MatchString(res.EventIDs[3]) {
		t.Errorf("assigned ids %v", res.EventIDs)
	}
	calls := f.bus.take()
	if len(calls) != 1 {
		t.Fatalf("%d publish calls", len(calls))
	}
	var got []string
	for _, e := range events(all(t, calls), "") {
		got = append(got, fmt.Sprint(e.EventID, "/", e.EventData["n"]))
	}
	if want := "x1/0 x2/1 x1/2 " + res.EventIDs[3] + "/<nil> " + res.EventIDs[4] + "/<nil> x3/3 x2/4 x1/5"; strings.Join(got, " ") != want {
		t.Fatalf("published %v, want %s", got, want)
	}

	res, err = f.svc.IngestEvents(context.Background(), "o", "test", objs(t, "["+fmt.Sprintf(ev, "y", 0)+","+noID+"]"))
	if err != nil || res.Duplicates != 0 || res.DuplicateEventIDs != nil {
		t.Fatalf("no repeats: %+v %v", res, err)
	}
	// an invalid event still fails the whole request, repeats or not
	bad := `{"event_id":"x1","event_type":"a","category":"driver_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{}}`
	_, err = f.svc.IngestEvents(context.Background(), "o", "test", objs(t, "["+fmt.Sprintf(ev, "x1", 0)+","+bad+"]"))
	if ve := validation(t, err); len(ve.Fields) != 1 || ve.Fields["events[1].source"] == "" {
		t.Errorf("bad repeat: %v", ve.Fields)
	}
	if n := len(f.bus.take()); n != 1 {
		t.Fatalf("%d publish calls after the second request, want 1", n)
	}
}

func TestEventBatch(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	for _, c := range []struct {
		n    int
		nil_ bool
		code string
	}{{0, true, "validation_failed"}, {0, false, "validation_failed"}, {1001, false, "batch_too_large"}} {
		var evs []map[string]any
		if !c.nil_ {
			evs = make([]map[string]any, c.n)
		}
		_, err := f.svc.IngestEvents(context.Background(), "o", "test", evs)
		if ve := validation(t, err); ve.Code != c.code || ve.Fields["events"] == "" {
			t.Errorf("%d events: %s %v", c.n, ve.Code, ve.Fields)
		}
	}
	if len(f.bus.take()) != 0 {
		t.Fatal("published")
	}
}

// Go callers may pass sequence numbers as Go integers or integral
// float64s; the same range applies.
func TestEventSequenceNumberGoValues(t *testing.T) {
	for _, c := range []struct {
		v    any
		want int64
		msg  string
	}{
		{int64(7), 7, ""}, {7, 7, ""}, {int32(7), 7, ""}, {float64(7), 7, ""},
		{int64(telemetry.MaxSequenceNumber), telemetry.MaxSequenceNumber, ""},
		{int64(telemetry.MaxSequenceNumber + 1), 0, "at most"}, {float64(1 << 53), 0, "at most"},
		{-1, 0, "negative"}, {float64(-1), 0, "negative"}, {1.5, 0, "integer from 0"}, {"7", 0, "integer from 0"}, {nil, 0, "integer from 0"},
	} {
		f := newFixture(t, telemetry.Config{})
		ev := obj(t, `{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v"}}`)
		ev["metadata"] = map[string]any{"sequence_number": c.v}
		_, err := f.svc.IngestEvents(context.Background(), "o", "test", []map[string]any{ev})
		if c.msg != "" {
			if ve := validation(t, err); !strings.Contains(ve.Fields["events[0].metadata.sequence_number"], c.msg) || len(ve.Fields) != 1 {
				t.Errorf("%T %v: %v", c.v, c.v, ve.Fields)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%T %v: %v", c.v, c.v, err)
		}
		if got := events(all(t, f.bus.take()), ""); len(got) != 1 || got[0].Metadata.SequenceNumber != c.want {
			t.Errorf("%T %v: published %+v", c.v, c.v, got)
		}
	}
}
