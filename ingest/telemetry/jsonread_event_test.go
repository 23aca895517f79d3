package telemetry_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/ingest/telemetry"
)

// eventsBody wraps events in a POST /v1/events body.
func eventsBody(evs ...string) []byte {
	return []byte(`{"events":[` + strings.Join(evs, ",") + `]}`)
}

// ev is a valid event of vehicle v with extra members appended.
func ev(v string, extra ...string) string {
	s := `{"event_type":"harsh_braking","category":"safety_events","timestamp":"2026-11-23T09:59:00Z","severity":"high","source":{"vehicle_id":"` + v + `"}`
	for _, e := range extra {
		s += "," + e
	}
	return s + "}"
}

func TestEventReaderMatchesGeneralPath(t *testing.T) {
	type tc struct {
		name string
		body []byte
		take bool // the reader must take it (plain and valid)
	}
	full := ev("v1", `"event_id":"evt-1"`, `"priority":"urgent"`,
		`"location":{"latitude":40.1,"longitude":-83.2,"address":"1 Main St","geofence":"g","road_type":"primary","accuracy":5,"speed_limit":50,"emergency_services_distance":1200.5}`,
		`"metadata":{"correlation_id":"c","sequence_number":7,"source_system":"tms","processing_time":"x"}`,
		`"event_data":{"deceleration_g":0.62,"flags":[true,false,null],"nested":{"a":{"b":[1,-2.5e3,{"c":"d"}]}},"empty":{},"none":[]}`,
		`"risk_assessment":{"score":0.5}`, `"automatic_actions":{"notify":true}`, `"emergency_response":{"eta_s":300}`,
		`"escalation":{"level":2}`, `"predictive_indicators":{"p":0.1}`, `"performance_metrics":{"m":1}`,
		`"recommendations":["slow down",{"x":1}]`)
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	cases := []tc{
		{"minimal", eventsBody(ev("v1")), true},
		{"every member", eventsBody(full), true},
		{"source ids", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00+02:00","severity":"low","source":{"driver_id":"d","trip_id":"t","fleet_id":"f"}}`), true},
		{"recommendations object", eventsBody(ev("v", `"recommendations":{"a":"b"}`)), true},
		{"repeated ids in a request", eventsBody(ev("v", `"event_id":"same"`), ev("w", `"event_id":"same"`), ev("v", `"event_id":"same"`)), true},
		{"whitespace", []byte(" {\n\"events\" : [ " + ev("v", ` "event_data" : { "a" : [ 1 , 2 ] } `) + " ] }\t\n"), true},
		{"unicode", eventsBody(ev("véhicule", `"location":{"latitude":1,"longitude":2,"address":"Straße ü"}`)), true},
		{"repeated key inside event_data", eventsBody(ev("v", `"event_data":{"a":1,"a":2}`)), false},
		{"repeated key deep in a free-form member", eventsBody(ev("v", `"recommendations":["x",{"k":{"a":1,"b":2,"a":1}}]`)), false},
		{"empty key inside event_data", eventsBody(ev("v", `"event_data":{"":1}`)), false},
		{"empty key deep in a free-form member", eventsBody(ev("v", `"risk_assessment":{"a":[{"":true}]}`)), false},
		{"one key in two objects", eventsBody(ev("v", `"event_data":{"a":{"k":1},"b":{"k":1}}`)), true},
		{"values 16 levels down", eventsBody(ev("v", `"event_data":`+deep(15))), true},
		{"values 17 levels down", eventsBody(ev("v", `"event_data":`+deep(16))), false},
		{"numbers", eventsBody(ev("v", `"event_data":{"a":-0,"b":1e2,"c":1E-2,"d":123456789012345678901234567890,"e":4.9e-324}`)), true},
		{"huge number", eventsBody(ev("v", `"event_data":{"a":1e400}`)), false},
		{"sequence as float", eventsBody(ev("v", `"metadata":{"sequence_number":1.0}`)), false},
		{"late set by the client", eventsBody(ev("v", `"metadata":{"late":true}`)), false},
		{"missing severity", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","source":{"vehicle_id":"v"}}`), false},
		{"null severity", eventsBody(ev("v", `"priority":null`)), false},
		{"bad category", eventsBody(`{"event_type":"x","category":"nope","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v"}}`), false},
		{"unknown member", eventsBody(ev("v", `"colour":"red"`)), false},
		{"unknown source member", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v","x":"y"}}`), false},
		{"repeated member", eventsBody(ev("v", `"event_type":"again"`)), false},
		{"escape", eventsBody(ev(`v\u0041`)), false},
		{"future", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2027-01-01T00:00:00Z","severity":"low","source":{"vehicle_id":"v"}}`), false},
		{"event_data not an object", eventsBody(ev("v", `"event_data":[1]`)), false},
		{"location without longitude", eventsBody(ev("v", `"location":{"latitude":1}`)), false},
		{"empty metadata", eventsBody(ev("v", `"metadata":{}`)), true},
		{"largest sequence number", eventsBody(ev("v", `"metadata":{"sequence_number":9007199254740991}`)), true},
		{"sequence number past 2^53-1", eventsBody(ev("v", `"metadata":{"sequence_number":9007199254740992}`)), false},
		{"latitude out of range", eventsBody(ev("v", `"location":{"latitude":90.5,"longitude":0}`)), false},
		{"edge coordinates", eventsBody(ev("v", `"location":{"latitude":-90,"longitude":180,"accuracy":0}`)), true},
		{"negative accuracy", eventsBody(ev("v", `"location":{"latitude":1,"longitude":2,"accuracy":-1}`)), false},
		{"repeated location member", eventsBody(ev("v", `"location":{"latitude":1,"longitude":2,"latitude":3}`)), false},
		{"an empty vehicle id beside a driver", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"","driver_id":"d"}}`), false},
		{"a blank vehicle id", eventsBody(ev("  ")), false},
		{"a blank driver id", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v","driver_id":"\t "}}`), false},
		{"a blank trip id", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v","trip_id":" "}}`), false},
		{"a blank fleet id", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v","fleet_id":" "}}`), false},
		{"an empty fleet id", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"v","fleet_id":""}}`), false},
		{"a no-break space id", eventsBody(ev("\u00a0")), false},
		{"a no-break space id as UTF-8", eventsBody(ev(" 　")), false},
		{"an id with spaces inside", eventsBody(ev(" v 1 ")), true},
		{"a blank geofence", eventsBody(ev("v", `"location":{"latitude":1,"longitude":2,"geofence":" "}`)), false},
		{"a blank correlation id", eventsBody(ev("v", `"metadata":{"correlation_id":""}`)), false},
		{"only a fleet", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"fleet_id":"f"}}`), false},
		{"repeated source id", eventsBody(`{"event_type":"x","category":"driver_events","timestamp":"2026-11-23T09:59:00Z","severity":"low","source":{"vehicle_id":"a","vehicle_id":"b"}}`), false},
		{"id of 200 characters", eventsBody(ev(strings.Repeat("é", 200))), true},
		{"id of 201 characters", eventsBody(ev(strings.Repeat("é", 201))), false},
		{"other top-level key", []byte(`{"events":[` + ev("v") + `],"x":1}`), false},
		{"trailing data", []byte(`{"events":[` + ev("v") + `]} {}`), false},
		{"no events", []byte(`{}`), false},
		{"empty list", []byte(`{"events":[]}`), false},
		{"null element", eventsBody(ev("v"), `null`), false},
		{"truncated", eventsBody(full)[:200], false},
	}
	var thousand, tooMany []string
	for i := range 1001 {
		e := ev(fmt.Sprint("veh-", i%37), fmt.Sprintf(`"event_id":"e-%d"`, i), fmt.Sprintf(`"event_data":{"n":%d}`, i))
		if i < 1000 {
			thousand = append(thousand, e)
		}
		tooMany = append(tooMany, e)
	}
	cases = append(cases, tc{"1000", eventsBody(thousand...), true}, tc{"1001", eventsBody(tooMany...), false})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast, slow := newFixture(t, telemetry.Config{}), newFixture(t, telemetry.Config{})
			taken, _, diff := differOn(t, eventsPath, fast, slow, c.body)
			if diff != "" {
				t.Fatal(diff)
			}
			if c.take != taken {
				t.Fatalf("taken %v, want %v", taken, c.take)
			}
		})
	}
}

func FuzzReadEvents(f *testing.F) {
	f.Add([]byte(ev("v")))
	f.Add([]byte(ev("v", `"event_id":"e1"`, `"event_data":{"a":[1,{"b":null}],"c":"d"}`, `"metadata":{"sequence_number":3}`)))
	f.Add([]byte(ev("v", `"location":{"latitude":40.1,"longitude":-83.2,"speed_limit":50}`, `"recommendations":["x"]`)))
	f.Add([]byte(`[` + ev("v", `"event_id":"same"`) + `,` + ev("w", `"event_id":"same"`) + `]`))
	f.Add([]byte(ev(" ", `"metadata":{"correlation_id":"\t"}`, `"location":{"latitude":1,"longitude":2,"geofence":""}`)))
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := data
		if t := bytes.TrimSpace(data); len(t) > 0 && t[0] != '[' {
			evs = append(append([]byte{'['}, data...), ']')
		}
		b := append(append([]byte(`{"events":`), evs...), '}')
		fast, slow := newFixture(t, telemetry.Config{}), newFixture(t, telemetry.Config{})
		if _, _, d := differOn(t, eventsPath, fast, slow, b); d != "" {
			t.Fatal(d)
		}
	})
}
