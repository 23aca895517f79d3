package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// ingestPath is one request body's two ways in: the reader (fast) and
// the general path (decode, then slow on the list named list).
type ingestPath struct {
	list string
	fast func(f *fixture, body []byte) (telemetry.Result, bool, error)
	slow func(f *fixture, list []map[string]any) (telemetry.Result, error)
}

var (
	telemetryPath = ingestPath{"messages",
		func(f *fixture, body []byte) (telemetry.Result, bool, error) {
			return f.svc.IngestTelemetryJSON(context.Background(), "org-a", "test", body)
		},
		func(f *fixture, list []map[string]any) (telemetry.Result, error) {
			return f.svc.IngestTelemetry(context.Background(), "org-a", "test", list)
		}}
	eventsPath = ingestPath{"events",
		func(f *fixture, body []byte) (telemetry.Result, bool, error) {
			return f.svc.IngestEventsJSON(context.Background(), "org-a", "test", body)
		},
		func(f *fixture, list []map[string]any) (telemetry.Result, error) {
			return f.svc.IngestEvents(context.Background(), "org-a", "test", list)
		}}
)

// general decodes a body as the API does when the reader declines it and
// runs it through the path's general ingest; ok is false when the body is
// not JSON of the request's shape (the API answers invalid_request).
func general(f *fixture, p ingestPath, body []byte) (res telemetry.Result, err error, ok bool) {
	var req map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil || dec.More() || req == nil {
		return res, nil, false
	}
	for k := range req {
		if k != p.list {
			return res, nil, false // the API refuses unknown members
		}
	}
	items, _ := req[p.list].([]any)
	var list []map[string]any
	if items != nil {
		list = make([]map[string]any, len(items))
		for i, e := range items {
			list[i], _ = e.(map[string]any)
		}
	}
	res, err = p.slow(f, list)
	return res, err, true
}

// differ runs a telemetry body through the reader on fast and through
// the general path on slow, and reports how they differ; taken says
// whether the reader took it, n how many events it published.
func differ(t *testing.T, fast, slow *fixture, body []byte) (taken bool, n int, diff string) {
	t.Helper()
	return differOn(t, telemetryPath, fast, slow, body)
}

func differOn(t *testing.T, p ingestPath, fast, slow *fixture, body []byte) (taken bool, n int, diff string) {
	t.Helper()
	fres, taken, ferr := p.fast(fast, body)
	sres, serr, ok := general(slow, p, body)
	fcalls, scalls := fast.bus.take(), slow.bus.take()
	if !taken {
		if ferr != nil || len(fcalls) != 0 {
			return false, 0, fmt.Sprintf("declined, yet err %v and %d publish calls", ferr, len(fcalls))
		}
		return false, 0, ""
	}
	switch {
	case !ok:
		return true, 0, "taken, but the body does not decode as JSON"
	case jsonpath.Repeated(body) != nil:
		return true, 0, fmt.Sprintf("taken, but the API refuses its repeated members %v", jsonpath.Repeated(body))
	case serr != nil || ferr != nil:
		return true, 0, fmt.Sprintf("taken with err %v; general path: %v", ferr, serr)
	case fres.Accepted != sres.Accepted || !reflect.DeepEqual(fres.Sequences, sres.Sequences) || !fres.IngestedAt.Equal(sres.IngestedAt) ||
		len(fres.Generated) != len(sres.Generated) || len(fres.EventIDs) != len(sres.EventIDs) ||
		fres.Duplicates != sres.Duplicates || !reflect.DeepEqual(fres.DuplicateEventIDs, sres.DuplicateEventIDs):
		return true, 0, fmt.Sprintf("result %+v, general path %+v", fres, sres)
	case len(fcalls) != len(scalls):
		return true, 0, fmt.Sprintf("%d publish calls, general path %d", len(fcalls), len(scalls))
	}
	fm, sm := all(t, fcalls), all(t, scalls)
	if len(fm) != len(sm) {
		return true, 0, fmt.Sprintf("%d messages, general path %d", len(fm), len(sm))
	}
	for i := range fm {
		a, b := fm[i], sm[i]
		if a.Topic != b.Topic || !bytes.Equal(a.Key, b.Key) || !a.Time.Equal(b.Time) {
			return true, 0, fmt.Sprintf("message %d: %s %s %v, general path %s %s %v", i, a.Topic, a.Key, a.Time, b.Topic, b.Key, b.Time)
		}
		if a.env.Event != nil && b.env.Event != nil {
			// event ids are random
			a.env.Event.EventID, b.env.Event.EventID = "", ""
		}
		if !reflect.DeepEqual(a.env, b.env) {
			return true, 0, fmt.Sprintf("message %d:\n%s\ngeneral path:\n%s", i, show(a.env), show(b.env))
		}
	}
	return true, len(events(fm, "")), ""
}

func show(e *event.Envelope) string {
	b, _ := json.Marshal(e)
	return string(b)
}

func body(msgs ...string) []byte {
	return []byte(`{"messages":[` + strings.Join(msgs, ",") + `]}`)
}

// The reader publishes what the general path publishes, takes every plain
// valid request, and declines every invalid one.
func TestReaderMatchesGeneralPath(t *testing.T) {
	type tc struct {
		name string
		body []byte
		take bool // the reader must take it (plain and valid)
	}
	var cases []tc
	for _, dt := range event.DataTypes {
		cases = append(cases, tc{dt, body(message("veh-1", dt, samples[dt])), true})
	}
	for _, c := range telemetryCases {
		cases = append(cases, tc{c.name, body(c.msg), false})
	}
	fuel := `"data":{"fuel_level":{"percentage":50}}`
	at := `"timestamp":"2026-11-23T09:00:00Z"`
	cases = append(cases, []tc{
		{"data before data_type", body(`{` + fuel + `,"vehicle_id":"v",` + at + `,"data_type":"fuel_system","sequence":3}`), true},
		{"whitespace everywhere", []byte(" {\n \"messages\" : [ { " + at + " , \"vehicle_id\" : \"v\" ,\t\"data_type\" : \"gps_enhanced\" , \"data\" : { \"pos\" : { \"lat\" : 1.5 , \"lon\" : -2 } , \"q\" : { } } , \"quality_indicators\" : { } } ] } \r\n"), true},
		{"numbers", body(`{` + at + `,"vehicle_id":"v","data_type":"environmental","data":{"n":{"a":-0,"b":1e2,"c":1E-2,"d":0.000001,"e":123456789012345678901234567890,` +
			`"f":1.7976931348623157e308,"g":4.9e-324,"h":-12.5e+3,"i":9007199254740993,"j":0.1,"k":1e22,"l":1e23,"m":3.0e-22,"n":25e-23}}}`), true},
		{"integers", body(`{` + at + `,"vehicle_id":"v","data_type":"electrical_system","sequence":999999999999999999,"data":{"battery":{"cycles":0},"starter_system":{"engagement_count":123456789012345678}}}`), true},
		{"long sequence", body(`{` + at + `,"vehicle_id":"v","data_type":"fuel_system","sequence":9223372036854775807,` + fuel + `}`), false},
		{"integral float sequence", body(`{` + at + `,"vehicle_id":"v","data_type":"fuel_system","sequence":3.0,` + fuel + `}`), false},
		{"timestamps", body(
			`{"timestamp":"2026-11-23T11:00:00.123456789123+02:00","vehicle_id":"v","data_type":"fuel_system",`+fuel+`}`,
			`{"timestamp":"2026-11-23T05:00:00-04:30","vehicle_id":"v","data_type":"fuel_system",`+fuel+`}`,
			`{"timestamp":"1970-01-01T00:30:00+01:00","vehicle_id":"v","data_type":"fuel_system",`+fuel+`}`,
			`{"timestamp":"2024-02-29T23:59:59.5Z","vehicle_id":"v","data_type":"fuel_system",`+fuel+`}`), true},
		{"comma fraction", body(`{"timestamp":"2026-11-23T09:00:00,5Z","vehicle_id":"v","data_type":"fuel_system",` + fuel + `}`), false},
		{"lowercase t", body(`{"timestamp":"2026-11-23t09:00:00Z","vehicle_id":"v","data_type":"fuel_system",` + fuel + `}`), false},
		{"february 30", body(`{"timestamp":"2026-02-30T09:00:00Z","vehicle_id":"v","data_type":"fuel_system",` + fuel + `}`), false},
		{"1969", body(`{"timestamp":"1969-12-31T23:59:59Z","vehicle_id":"v","data_type":"fuel_system",` + fuel + `}`), false},
		{"unicode", body(`{` + at + `,"vehicle_id":"véhicule-ü","data_type":"vehicle_dynamics","data":{"steering":{"wheel_alignment":"ок"}},"quality_indicators":{"sensor_health":"très bien"}}`), true},
		{"escape", body(`{` + at + `,"vehicle_id":"v\u0041","data_type":"fuel_system",` + fuel + `}`), false},
		{"empty vehicle id", body(`{` + at + `,"vehicle_id":"","data_type":"fuel_system",` + fuel + `}`), false},
		{"blank vehicle id", body(`{` + at + `,"vehicle_id":"  ","data_type":"fuel_system",` + fuel + `}`), false},
		{"blank vehicle id of other white space", body(`{` + at + `,"vehicle_id":"\t\u00a0","data_type":"fuel_system",` + fuel + `}`), false},
		{"no-break spaces as UTF-8", body(`{` + at + `,"vehicle_id":"  ","data_type":"fuel_system",` + fuel + `}`), false},
		{"vehicle id with spaces around", body(`{` + at + `,"vehicle_id":" v ","data_type":"fuel_system",` + fuel + `}`), true},
		{"repeated key", body(`{` + at + `,"vehicle_id":"a","vehicle_id":"b","data_type":"fuel_system",` + fuel + `}`), false},
		{"repeated field", body(`{` + at + `,"vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":1,"liters":2}}}`), false},
		{"repeated group", body(`{` + at + `,"vehicle_id":"v","data_type":"gps_enhanced","data":{"g":{"a":1},"g":{"b":2}}}`), false},
		{"codes", body(`{`+at+`,"vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"pending_codes":[],"dtc_count":0}}}`,
			`{`+at+`,"vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"pending_codes":["P1","P2","P3","P4","P5","P6","P7","P8","P9","P10","P11","P12","P13","P14","P15","P16","P17"]}}}`), true},
		{"many fields", body(`{` + at + `,"vehicle_id":"v","data_type":"driver_behavior","data":{"g":{` + fields(64) + `}}}`), true},
		{"too many fields", body(`{` + at + `,"vehicle_id":"v","data_type":"driver_behavior","data":{"g":{` + fields(65) + `}}}`), false},
		{"too many groups", body(`{` + at + `,"vehicle_id":"v","data_type":"driver_behavior","data":{` + groups(33) + `}}`), false},
		{"32 groups", body(`{` + at + `,"vehicle_id":"v","data_type":"driver_behavior","data":{` + groups(32) + `}}`), true},
		{"other top-level key", []byte(`{"messages":[` + message("v", "fuel_system", samples["fuel_system"]) + `],"x":1}`), false},
		{"trailing data", []byte(`{"messages":[` + message("v", "fuel_system", samples["fuel_system"]) + `]} {}`), false},
		{"no messages", []byte(`{}`), false},
		{"empty list", []byte(`{"messages":[]}`), false},
		{"null element", body(message("v", "fuel_system", samples["fuel_system"]), `null`), false},
		{"truncated", body(message("v", "fuel_system", samples["fuel_system"]))[:100], false},
	}...)
	var thousand, tooMany []string
	for i := range 1001 {
		m := message(fmt.Sprint("veh-", i%37), event.DataTypes[i%len(event.DataTypes)], samples[event.DataTypes[i%len(event.DataTypes)]])
		if i < 1000 {
			thousand = append(thousand, m)
		}
		tooMany = append(tooMany, m)
	}
	cases = append(cases, tc{"1000", body(thousand...), true}, tc{"1001", body(tooMany...), false})
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fast, slow := newFixture(t, telemetry.Config{}), newFixture(t, telemetry.Config{})
			taken, _, diff := differ(t, fast, slow, c.body)
			if diff != "" {
				t.Fatal(diff)
			}
			if c.take && !taken {
				t.Fatal("the reader declined a plain valid request")
			}
		})
	}
}

func fields(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"f%d":%d.5`, i, i)
	}
	return b.String()
}

func groups(n int) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"g%d":{"x":%d}`, i, i)
	}
	return b.String()
}

// The rules see the same readings either way: a run of engine
// diagnostics that raises every rule, with the watchdog between
// requests, publishes the same events by both paths.
func TestReaderRulesMatchGeneralPath(t *testing.T) {
	fast, slow := newFixture(t, telemetry.Config{}), newFixture(t, telemetry.Config{})
	steps := [][]string{
		{diag("v1", -900*time.Second, 0, false, 90), diag("v2", -900*time.Second, 1, true, 95, "P0300")},
		{diag("v1", -800*time.Second, 2, false, 115, "P0301", "P0302"), diag("v1", -850*time.Second, 5, true, 80)}, // the second is older: rules take it first
		{diag("v1", -700*time.Second, 3, true, 120, "P0301", "P0303"), diag("v2", -700*time.Second, 4, false, 100, "P0300", "P0420")},
		{diag("v1", -600*time.Second, 3, true, 100), diag("v1", -950*time.Second, 9, true, 130)}, // late: skipped
		{diag("v1", -500*time.Second, 4, false, 112, "P0300")},
	}
	raised := 0
	for i, msgs := range steps {
		taken, n, d := differ(t, fast, slow, body(msgs...))
		if d != "" || !taken {
			t.Fatalf("step %d: taken %v: %s", i, taken, d)
		}
		raised += n
		// a silence between requests, so the next message raises device_online
		for _, f := range []*fixture{fast, slow} {
			f.clk.set(t0.Add(time.Duration(i+1) * 10 * time.Minute))
			if err := f.svc.Check(context.Background()); err != nil {
				t.Fatal(err)
			}
			f.bus.take()
		}
	}
	// dtc rises, check engine lights, overheating and device_online
	if raised < 8 {
		t.Fatalf("%d events raised", raised)
	}
}

// FuzzReadTelemetry: a body the reader takes is one the general path
// accepts and publishes the same way; one it declines has no effect.
func FuzzReadTelemetry(f *testing.F) {
	for _, dt := range event.DataTypes {
		f.Add([]byte(message("veh-1", dt, samples[dt])))
	}
	f.Add([]byte(`[` + diag("v", -2e9, 1, false, 90) + `,` + diag("v", -1e9, 3, true, 120, "P0300") + `]`))
	f.Add([]byte(`{"data":{"n":{"a":-0,"b":1e2}},"vehicle_id":"v","timestamp":"2026-11-23T11:00:00.5+02:00","data_type":"environmental","quality_indicators":{}}`))
	f.Add([]byte(`[{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":1,"liters":2}}}]`))
	f.Add([]byte(`[{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":" ","data_type":"fuel_system","data":{"fuel_level":{"liters":1}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		msgs := data
		if len(bytes.TrimSpace(data)) > 0 && bytes.TrimSpace(data)[0] != '[' {
			msgs = append(append([]byte{'['}, data...), ']')
		}
		b := append(append([]byte(`{"messages":`), msgs...), '}')
		fast, slow := newFixture(t, telemetry.Config{}), newFixture(t, telemetry.Config{})
		if _, _, d := differ(t, fast, slow, b); d != "" {
			t.Fatal(d)
		}
	})
}
