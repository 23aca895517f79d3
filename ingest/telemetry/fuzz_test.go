package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
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
// and encode to JSON with finite float64 numbers.
func checkOutcome(t *testing.T, f *fixture, list string, err error) {
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
		return
	}
	if len(calls) != 1 {
		t.Fatalf("accepted request published in %d calls", len(calls))
	}
	for _, m := range all(t, calls) {
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
	f.Fuzz(func(t *testing.T, data []byte) {
		list, ok := fuzzList(data)
		if !ok {
			return
		}
		fx := newFixture(t, telemetry.Config{})
		res, err := fx.svc.IngestEvents(context.Background(), "o", "test", list)
		checkOutcome(t, fx, "events", err)
		if err == nil && len(res.EventIDs) != len(list) {
			t.Fatalf("%d ids for %d events", len(res.EventIDs), len(list))
		}
	})
}
