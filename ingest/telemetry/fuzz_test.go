package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/ingest/telemetry"
)

// fuzzList decodes the fuzz input as the API does: an object is one
// element, an array is up to 50 elements; anything else that is JSON is a
// one-element list holding a non-object (nil). ok is false for input that
// is not JSON, which the API rejects before the service sees it.
func fuzzList(data []byte) (list []map[string]any, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	switch x := v.(type) {
	case []any:
		if len(x) > 50 {
			x = x[:50]
		}
		list = make([]map[string]any, len(x))
		for i, e := range x {
			list[i], _ = e.(map[string]any)
		}
	case map[string]any:
		list = []map[string]any{x}
	default:
		list = []map[string]any{nil}
	}
	return list, true
}

// checkOutcome holds for every request: either a field-keyed validation
// error and nothing published, or one Publish call whose messages decode
// and encode to JSON with finite float64 numbers. It returns the
// published messages.
func checkOutcome(t *testing.T, f *fixture, list string, err error) []decoded {
	t.Helper()
	calls := f.bus.take()
	if err != nil {
		var ve *telemetry.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("error is not a *ValidationError: %v", err)
		}
		if ve.Code != "validation_failed" && ve.Code != "batch_too_large" {
			t.Fatalf("code %q", ve.Code)
		}
		if len(ve.Fields) == 0 || len(ve.Fields) > telemetry.MaxErrors {
			t.Fatalf("%d fields", len(ve.Fields))
		}
		for k, msg := range ve.Fields {
			if k != list && !strings.HasPrefix(k, list+"[") || msg == "" {
				t.Fatalf("error not keyed by a field path: %q: %q", k, msg)
			}
		}
		if len(calls) != 0 {
			t.Fatal("published a rejected request")
		}
		return nil
	}
	if len(calls) != 1 {
		t.Fatalf("accepted request published in %d calls", len(calls))
	}
	ms := all(t, calls)
	for _, m := range ms {
		b, err := json.Marshal(m.env)
		if err != nil {
			t.Fatalf("published envelope does not encode to JSON: %v", err)
		}
		var back any
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if tm := m.env.Telemetry; tm != nil {
			walkNumbers(t, tm.Data)
		}
	}
	return ms
}

func walkNumbers(t *testing.T, v any) {
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			walkNumbers(t, e)
		}
	case []any:
		for _, e := range x {
			walkNumbers(t, e)
		}
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("non-finite number published")
		}
	case string, bool:
	default:
		t.Fatalf("published value of type %T", v)
	}
}

func FuzzValidateTelemetry(f *testing.F) {
	for _, dt := range []string{"engine_diagnostics", "fuel_system", "vehicle_dynamics", "electrical_system", "environmental", "gps_enhanced"} {
		f.Add([]byte(message("veh-1", dt, samples[dt])))
	}
	f.Add([]byte(`[` + diag("v", -2e9, 1, false, 90) + `,` + diag("v", -1e9, 3, true, 120, "P0300") + `]`))
	f.Add([]byte(`{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","sequence":1e30,"data":{"fuel_level":{"liters":-0}}}`))
	f.Add([]byte(`[null, 1, "x", {"data":{"":{"":[]}}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, ok := fuzzList(data)
		if !ok {
			return
		}
		fx := newFixture(t, telemetry.Config{})
		_, err := fx.svc.IngestTelemetry(context.Background(), "o", "test", list)
		checkOutcome(t, fx, "messages", err)
	})
}

func FuzzValidateEvent(f *testing.F) {
	f.Add([]byte(fullEvent))
	f.Add([]byte(`[{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"trip_id":"t"},"event_id":"x"},
		{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"trip_id":"t"},"event_id":"x"}]`))
	f.Add([]byte(`{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v"},
		"location":{"latitude":"1","longitude":null},"event_data":{"a":[[[{"b":1e500}]]]},"metadata":{"sequence_number":1.5}}`))
	f.Add([]byte(`[]`))
	f.Add([]byte(`{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v"},"metadata":{"sequence_number":9007199254740991}}`))
	f.Add([]byte(`{"event_type":"a","category":"system_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v"},"metadata":{"sequence_number":1e3,"late":true}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		list, ok := fuzzList(data)
		if !ok {
			return
		}
		// the sequence numbers as sent, before the service normalizes the maps
		sent := make([]any, len(list))
		for i, m := range list {
			if md, ok := m["metadata"].(map[string]any); ok {
				sent[i] = md["sequence_number"]
			}
		}
		fx := newFixture(t, telemetry.Config{})
		res, err := fx.svc.IngestEvents(context.Background(), "o", "test", list)
		ms := checkOutcome(t, fx, "events", err)
		if err != nil {
			return
		}
		checkAcceptedEvents(t, list, sent, res, ms)
	})
}

// checkAcceptedEvents holds for every accepted events request: each event
// is published once, in request order, under its id; ids are within their
// cap; sequence numbers were sent as plain integers from 0 to 2^53-1;
// nothing arrives late-flagged; and the repeats are counted.
func checkAcceptedEvents(t *testing.T, list []map[string]any, sent []any, res telemetry.Result, ms []decoded) {
	t.Helper()
	if res.Accepted != len(list) || len(res.EventIDs) != len(list) || len(ms) != len(list) {
		t.Fatalf("%d accepted, %d ids, %d published for %d events", res.Accepted, len(res.EventIDs), len(ms), len(list))
	}
	copies := map[string]int{}
	dups, repeated := 0, []string(nil)
	for i, m := range ms {
		e := m.env.Event
		if e == nil || e.EventID != res.EventIDs[i] {
			t.Fatalf("message %d is not event %d (%s)", i, i, res.EventIDs[i])
		}
		if !validID.MatchString(e.EventID) {
			t.Fatalf("published event_id %q", e.EventID)
		}
		if e.Metadata.Late {
			t.Fatal("published a client-set metadata.late")
		}
		seq := e.Metadata.SequenceNumber
		if seq < 0 || seq > telemetry.MaxSequenceNumber {
			t.Fatalf("published sequence_number %d", seq)
		}
		if sent[i] != nil {
			n, ok := sent[i].(json.Number)
			if v, err := strconv.ParseInt(string(n), 10, 64); !ok || err != nil || v != seq {
				t.Fatalf("sequence_number sent as %v published as %d", sent[i], seq)
			}
		}
		if _, given := list[i]["event_id"]; given {
			if copies[e.EventID]++; copies[e.EventID] > 1 {
				dups++
				if copies[e.EventID] == 2 {
					repeated = append(repeated, e.EventID)
				}
			}
		}
	}
	if res.Duplicates != dups || fmt.Sprint(res.DuplicateEventIDs) != fmt.Sprint(repeated) {
		t.Fatalf("duplicates %d %v, want %d %v", res.Duplicates, res.DuplicateEventIDs, dups, repeated)
	}
}

// validID is the documented event_id: 1 to 100 of [A-Za-z0-9_.:-].
var validID = regexp.MustCompile(`^[A-Za-z0-9_.:-]{1,100}$`)
