package expr_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

// startBody is the filter part of a stream start body, as the API layer
// decodes it (kind tells which stream it is).
type startBody struct {
	Kind         string `json:"kind"`
	EventFilters struct {
		Categories     []string `json:"categories"`
		SeverityLevels []string `json:"severity_levels"`
		PriorityLevels []string `json:"priority_levels"`
		VehicleIDs     []string `json:"vehicle_ids"`
		DriverIDs      []string `json:"driver_ids"`
		Geofences      []string `json:"geofences"`
		TimeFilters    struct {
			BusinessHoursOnly bool   `json:"business_hours_only"`
			ExcludeWeekends   bool   `json:"exclude_weekends"`
			Timezone          string `json:"timezone"`
		} `json:"time_filters"`
		CustomConditions []expr.Condition `json:"custom_conditions"`
	} `json:"event_filters"`
	Vehicles  []string `json:"vehicles"`
	DataTypes []string `json:"data_types"`
	Filters   struct {
		MinEngineTemp    *float64           `json:"min_engine_temp"`
		MaxFuelLevel     *float64           `json:"max_fuel_level"`
		AlertThresholds  map[string]float64 `json:"alert_thresholds"`
		CustomConditions []expr.Condition   `json:"custom_conditions"`
	} `json:"filters"`
}

func (b *startBody) spec() expr.Spec {
	f := &b.EventFilters
	s := expr.Spec{
		Kind: b.Kind, Categories: f.Categories, Severities: f.SeverityLevels, Priorities: f.PriorityLevels,
		VehicleIDs: f.VehicleIDs, DriverIDs: f.DriverIDs, Geofences: f.Geofences,
		BusinessHoursOnly: f.TimeFilters.BusinessHoursOnly, ExcludeWeekends: f.TimeFilters.ExcludeWeekends,
		Timezone: f.TimeFilters.Timezone, Conditions: f.CustomConditions,
		DataTypes: b.DataTypes, MinEngineTemp: b.Filters.MinEngineTemp, MaxFuelLevel: b.Filters.MaxFuelLevel,
		AlertThresholds: b.Filters.AlertThresholds,
	}
	if b.Kind == expr.KindTelemetry {
		s.VehicleIDs = b.Vehicles
		s.Conditions = b.Filters.CustomConditions
	}
	return s
}

// probes are messages every compiled fuzz program is run against.
func probes() []*event.Envelope {
	envs := []*event.Envelope{harshBraking(), engine("veh_1", 3200, 95), fuel("veh_2", 10), {}}
	for _, ts := range []string{"2025-03-08T01:00:00Z", "2025-03-09T13:00:00Z", "2025-03-10T12:00:00Z"} {
		envs = append(envs, at(ts))
	}
	return envs
}

// checkProgram checks what must hold for any compiled program: Keys
// cover every match, and an Index of the program agrees with Match.
func checkProgram(t *testing.T, p *expr.Program, envs []*event.Envelope) {
	t.Helper()
	keys := p.Keys()
	var ix expr.Index[int]
	ix.Add(1, p)
	for _, env := range envs {
		m := p.Match(env)
		if got := ix.Match(env, nil); m != (len(got) == 1) {
			t.Fatalf("Match = %v, Index.Match = %v", m, got)
		}
		if !m {
			continue
		}
		var vehicle, second string
		var seconds []string
		switch {
		case env.Event != nil:
			vehicle, second, seconds = env.Event.Source.VehicleID, env.Event.Category, keys.Categories
		case env.Telemetry != nil:
			vehicle, second, seconds = env.Telemetry.VehicleID, env.Telemetry.DataType, keys.DataTypes
		}
		if len(keys.VehicleIDs) > 0 && !slices.Contains(keys.VehicleIDs, vehicle) {
			t.Fatalf("matched vehicle %q outside Keys %v", vehicle, keys.VehicleIDs)
		}
		if len(seconds) > 0 && !slices.Contains(seconds, second) {
			t.Fatalf("matched %q outside Keys %v", second, seconds)
		}
	}
}

func FuzzCompile(f *testing.F) {
	f.Add([]byte(`{"kind":"event","event_filters":{"categories":["safety_events"],"custom_conditions":[{"field":"event_data.deceleration_g","operator":">","value":0.5}]}}`))
	envs := probes()
	f.Fuzz(func(t *testing.T, body []byte) {
		var b startBody
		if json.Unmarshal(body, &b) != nil {
			return
		}
		p, err := expr.Compile(b.spec())
		if err != nil {
			var fe *expr.FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Message == "" {
				t.Fatalf("Compile error %#v is not a *FieldError naming a field", err)
			}
			return
		}
		checkProgram(t, p, envs)
	})
}

// FuzzMatch compiles one condition and checks Match against a reference
// that evaluates the condition on the message's JSON form.
func FuzzMatch(f *testing.F) {
	f.Add("event_data.deceleration_g", ">", "0.5", `{"event_data":{"deceleration_g":0.8}}`, false)
	f.Fuzz(func(t *testing.T, field, op, valueJSON, message string, telemetry bool) {
		var value any
		if json.Unmarshal([]byte(valueJSON), &value) != nil {
			return
		}
		env := &event.Envelope{}
		spec := expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{{Field: field, Operator: op, Value: value}}}
		var msg any
		if telemetry {
			env.Telemetry, msg, spec.Kind = new(event.Telemetry), &env.Telemetry, expr.KindTelemetry
		} else {
			env.Event, msg = new(event.Event), &env.Event
		}
		if json.Unmarshal([]byte(message), msg) != nil {
			return
		}
		p, err := expr.Compile(spec)
		if err != nil {
			var fe *expr.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Compile error %#v is not a *FieldError", err)
			}
			return
		}
		got := p.Match(env)
		checkProgram(t, p, []*event.Envelope{env})

		// The reference: marshal the message, walk the path in the
		// generic JSON tree.
		b, err := json.Marshal(msg)
		if err != nil {
			return
		}
		var tree any
		if err := json.Unmarshal(b, &tree); err != nil {
			t.Fatal(err)
		}
		v, present := walk(tree, strings.Split(field, "."))
		if want := refEval(v, present, op, value); got != want {
			t.Fatalf("Match = %v, reference = %v: %s %s %s on %s (value %#v present %v)", got, want, field, op, valueJSON, b, v, present)
		}
	})
}

func walk(v any, path []string) (any, bool) {
	for _, seg := range path {
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[seg]; !ok {
				return nil, false
			}
		case []any:
			i, ok := digits(seg)
			if !ok || i >= len(x) {
				return nil, false
			}
			v = x[i]
		default:
			return nil, false
		}
	}
	return v, true
}

func digits(s string) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func refTime(s string) (time.Time, bool) {
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}

func refEqual(v any, present bool, c any) bool {
	if c == nil {
		return !present || v == nil
	}
	if !present {
		return false
	}
	switch c := c.(type) {
	case float64:
		x, ok := v.(float64)
		return ok && x == c
	case bool:
		x, ok := v.(bool)
		return ok && x == c
	case string:
		x, ok := v.(string)
		if !ok {
			return false
		}
		if x == c {
			return true
		}
		ct, ok1 := refTime(c)
		xt, ok2 := refTime(x)
		return ok1 && ok2 && xt.Equal(ct)
	}
	return false
}

func refEval(v any, present bool, op string, c any) bool {
	switch op {
	case "=", "==":
		return refEqual(v, present, c)
	case "!=":
		return !refEqual(v, present, c)
	case "in":
		for _, e := range c.([]any) {
			if refEqual(v, present, e) {
				return true
			}
		}
		return false
	case "contains":
		switch x := v.(type) {
		case string:
			s, ok := c.(string)
			return ok && strings.Contains(x, s)
		case []any:
			for _, e := range x {
				if refEqual(e, true, c) {
					return true
				}
			}
		case map[string]any:
			if s, ok := c.(string); ok {
				_, has := x[s]
				return has
			}
		}
		return false
	}
	// Ordering.
	var cmp int
	switch c := c.(type) {
	case float64:
		x, ok := v.(float64)
		if !ok || !present {
			return false
		}
		cmp = compareFloat(x, c)
	case string:
		x, ok := v.(string)
		if !ok || !present {
			return false
		}
		xt, ok1 := refTime(x)
		ct, ok2 := refTime(c)
		if !ok1 || !ok2 {
			return false
		}
		cmp = xt.Compare(ct)
	default:
		return false
	}
	switch op {
	case ">":
		return cmp > 0
	case ">=":
		return cmp >= 0
	case "<":
		return cmp < 0
	}
	return cmp <= 0
}

func compareFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
