package expr_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/filters/expr"
)

func TestCompileErrors(t *testing.T) {
	ev := func(s expr.Spec) expr.Spec { s.Kind = expr.KindEvent; return s }
	tel := func(s expr.Spec) expr.Spec { s.Kind = expr.KindTelemetry; return s }
	conds := func(c ...expr.Condition) expr.Spec { return ev(expr.Spec{Conditions: c}) }
	long := strings.Repeat("a.", 20) + "a"
	tests := []struct {
		name  string
		spec  expr.Spec
		field string
		msg   string // a part of the message
	}{
		{"kind", expr.Spec{}, "kind", "unknown stream kind"},
		{"kind other", expr.Spec{Kind: "point"}, "kind", "unknown stream kind"},
		{"category", ev(expr.Spec{Categories: []string{"safety_events", "bogus"}}), "event_filters.categories[1]", `unknown category "bogus"`},
		{"severity", ev(expr.Spec{Severities: []string{"High"}}), "event_filters.severity_levels[0]", "unknown severity"},
		{"priority", ev(expr.Spec{Priorities: []string{"normal", "urgent", "asap"}}), "event_filters.priority_levels[2]", "unknown priority"},
		{"vehicle empty", ev(expr.Spec{VehicleIDs: []string{"v1", ""}}), "event_filters.vehicle_ids[1]", "must not be empty"},
		{"driver empty", ev(expr.Spec{DriverIDs: []string{""}}), "event_filters.driver_ids[0]", "must not be empty"},
		{"geofence empty", ev(expr.Spec{Geofences: []string{""}}), "event_filters.geofences[0]", "must not be empty"},
		{"timezone", ev(expr.Spec{Timezone: "Mars/Olympus_Mons"}), "event_filters.time_filters.timezone", "unknown time zone"},
		{"timezone local", ev(expr.Spec{Timezone: "Local"}), "event_filters.time_filters.timezone", "IANA"},
		{"timezone path", ev(expr.Spec{Timezone: "../../etc/passwd"}), "event_filters.time_filters.timezone", "unknown time zone"},
		{"telemetry field on event", ev(expr.Spec{DataTypes: []string{"fuel_system"}}), "data_types", "only for telemetry"},
		{"min engine temp on event", ev(expr.Spec{MinEngineTemp: ptr(1.0)}), "filters.min_engine_temp", "only for telemetry"},
		{"max fuel on event", ev(expr.Spec{MaxFuelLevel: ptr(1.0)}), "filters.max_fuel_level", "only for telemetry"},
		{"thresholds on event", ev(expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 1}}), "filters.alert_thresholds", "only for telemetry"},
		{"category on telemetry", tel(expr.Spec{Categories: []string{"safety_events"}}), "event_filters.categories", "only for event"},
		{"business hours on telemetry", tel(expr.Spec{BusinessHoursOnly: true}), "event_filters.time_filters.business_hours_only", "only for event"},
		{"weekends on telemetry", tel(expr.Spec{ExcludeWeekends: true}), "event_filters.time_filters.exclude_weekends", "only for event"},
		{"timezone on telemetry", tel(expr.Spec{Timezone: "UTC"}), "event_filters.time_filters.timezone", "only for event"},
		{"telemetry vehicle empty", tel(expr.Spec{VehicleIDs: []string{""}}), "vehicles[0]", "must not be empty"},
		{"data type", tel(expr.Spec{DataTypes: []string{"engine_diagnostics", "tire_pressure"}}), "data_types[1]", `unknown data type "tire_pressure"`},
		{"min engine temp NaN", tel(expr.Spec{MinEngineTemp: ptr(math.NaN())}), "filters.min_engine_temp", "finite"},
		{"max fuel level range", tel(expr.Spec{MaxFuelLevel: ptr(120.0)}), "filters.max_fuel_level", "percentage"},
		{"max fuel level negative", tel(expr.Spec{MaxFuelLevel: ptr(-1.0)}), "filters.max_fuel_level", "percentage"},
		{"threshold unknown", tel(expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000, "oil_temp": 1}}), "filters.alert_thresholds.oil_temp", "unknown alert threshold"},
		{"threshold Inf", tel(expr.Spec{AlertThresholds: map[string]float64{"coolant_temp": math.Inf(1)}}), "filters.alert_thresholds.coolant_temp", "finite"},
		{"threshold negative rpm", tel(expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": -1}}), "filters.alert_thresholds.engine_rpm", "negative"},
		{"telemetry condition", tel(expr.Spec{Conditions: []expr.Condition{cond("severity", "=", "low")}}), "filters.custom_conditions[0].field", `unknown field "severity" of telemetry`},
		{"too many conditions", conds(make([]expr.Condition, expr.MaxConditions+1)...), "event_filters.custom_conditions", "at most"},
		{"field empty", conds(cond("severity", "=", "low"), cond("", "=", 1)), "event_filters.custom_conditions[1].field", "must not be empty"},
		{"field unknown", conds(cond("speed", "=", 1)), "event_filters.custom_conditions[0].field", `unknown field "speed"`},
		{"field empty segment", conds(cond("event_data..x", "=", 1)), "event_filters.custom_conditions[0].field", "empty segment"},
		{"field trailing dot", conds(cond("event_data.", "=", 1)), "event_filters.custom_conditions[0].field", "empty segment"},
		{"field object", conds(cond("source", "=", "x")), "event_filters.custom_conditions[0].field", "is an object"},
		{"field unknown subfield", conds(cond("source.depot_id", "=", "x")), "event_filters.custom_conditions[0].field", `unknown field "source.depot_id"`},
		{"field below scalar", conds(cond("severity.level", "=", "x")), "event_filters.custom_conditions[0].field", "is not an object"},
		{"field too deep", conds(cond("event_data."+long, "=", 1)), "event_filters.custom_conditions[0].field", "segments"},
		{"field too long", conds(cond("event_data."+strings.Repeat("x", expr.MaxFieldLen), "=", 1)), "event_filters.custom_conditions[0].field", "longer"},
		{"operator unknown", conds(cond("severity", "=", "low"), cond("severity", "like", "low")), "event_filters.custom_conditions[1].operator", `unknown operator "like"`},
		{"operator empty", conds(cond("severity", "", "low")), "event_filters.custom_conditions[0].operator", "unknown operator"},
		{"operator case", conds(cond("severity", "IN", []any{"low"})), "event_filters.custom_conditions[0].operator", "unknown operator"},
		{"= array", conds(cond("event_data.x", "=", []any{1})), "event_filters.custom_conditions[0].value", "string, number, boolean or null"},
		{"= object", conds(cond("event_data.x", "=", map[string]any{})), "event_filters.custom_conditions[0].value", "string, number, boolean or null"},
		{"= NaN", conds(cond("event_data.x", "=", math.NaN())), "event_filters.custom_conditions[0].value", "string, number, boolean or null"},
		{"= enum", conds(cond("severity", "=", "hgh")), "event_filters.custom_conditions[0].value", `unknown value "hgh"`},
		{"!= enum", conds(cond("category", "!=", "safety")), "event_filters.custom_conditions[0].value", "unknown value"},
		{"= string field number", conds(cond("event_type", "=", 3)), "event_filters.custom_conditions[0].value", "must be a string"},
		{"= number field string", conds(cond("location.latitude", "=", "37")), "event_filters.custom_conditions[0].value", "must be a number"},
		{"= time field", conds(cond("timestamp", "=", "yesterday")), "event_filters.custom_conditions[0].value", "RFC3339"},
		{"> string", conds(cond("event_data.x", ">", "abc")), "event_filters.custom_conditions[0].value", "ordering operators need a number or an RFC3339 time"},
		{"> numeric string", conds(cond("event_data.x", ">", "5")), "event_filters.custom_conditions[0].value", "ordering operators"},
		{"> bool", conds(cond("event_data.x", ">", true)), "event_filters.custom_conditions[0].value", "ordering operators"},
		{"> null", conds(cond("event_data.x", ">", nil)), "event_filters.custom_conditions[0].value", "ordering operators"},
		{"< array", conds(cond("event_data.x", "<", []any{1})), "event_filters.custom_conditions[0].value", "ordering operators"},
		{">= time on number field", conds(cond("location.latitude", ">=", "2025-01-01T00:00:00Z")), "event_filters.custom_conditions[0].value", "must be a number"},
		{"<= number on time field", conds(cond("timestamp", "<=", 5)), "event_filters.custom_conditions[0].value", "RFC3339"},
		{"> number on an enum field", conds(cond("severity", ">", 2)), "event_filters.custom_conditions[0].operator", "do not apply to severity"},
		{"> time on an enum field", conds(cond("category", ">", "2025-01-01T00:00:00Z")), "event_filters.custom_conditions[0].operator", "do not apply to category"},
		{"> number on an id", conds(cond("source.vehicle_id", ">", 1)), "event_filters.custom_conditions[0].operator", "do not apply to source.vehicle_id"},
		{"< string on a string field", conds(cond("event_type", "<", "b")), "event_filters.custom_conditions[0].operator", "do not apply to event_type"},
		{"in scalar", conds(cond("severity", "in", "low")), "event_filters.custom_conditions[0].value", "in needs an array"},
		{"in null", conds(cond("severity", "in", nil)), "event_filters.custom_conditions[0].value", "in needs an array"},
		{"in nested", conds(cond("event_data.x", "in", []any{1, []any{2}})), "event_filters.custom_conditions[0].value[1]", "string, number, boolean or null"},
		{"in enum", conds(cond("priority", "in", []any{"normal", "asap"})), "event_filters.custom_conditions[0].value[1]", `unknown value "asap"`},
		{"in too many", conds(cond("event_data.x", "in", make([]any, expr.MaxValues+1))), "event_filters.custom_conditions[0].value", "at most"},
		{"contains null", conds(cond("event_data.x", "contains", nil)), "event_filters.custom_conditions[0].value", "contains needs"},
		{"contains array", conds(cond("event_data.x", "contains", []any{"a"})), "event_filters.custom_conditions[0].value", "contains needs"},
		{"contains number field", conds(cond("location.latitude", "contains", "3")), "event_filters.custom_conditions[0].operator", "string or array field"},
		{"contains string field number", conds(cond("event_type", "contains", 3)), "event_filters.custom_conditions[0].value", "must be a string"},
		{"telemetry condition path", tel(expr.Spec{Conditions: []expr.Condition{cond("data.engine.rpm", "between", 1)}}), "filters.custom_conditions[0].operator", "unknown operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := expr.Compile(tt.spec)
			if err == nil {
				t.Fatalf("Compile = %v, nil; want an error on %s", p, tt.field)
			}
			var fe *expr.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("error %v (%T) is not a *FieldError", err, err)
			}
			if fe.Field != tt.field {
				t.Errorf("Field = %q, want %q (message %q)", fe.Field, tt.field, fe.Message)
			}
			if !strings.Contains(fe.Message, tt.msg) {
				t.Errorf("Message = %q, want it to contain %q", fe.Message, tt.msg)
			}
			if !strings.HasPrefix(err.Error(), "expr: "+tt.field+": ") {
				t.Errorf("Error() = %q", err.Error())
			}
		})
	}
}

func TestCompileAccepts(t *testing.T) {
	specs := []expr.Spec{
		{Kind: expr.KindEvent, Timezone: "UTC"},
		{Kind: expr.KindEvent, Timezone: "Asia/Kolkata", BusinessHoursOnly: true, ExcludeWeekends: true},
		{Kind: expr.KindEvent, Conditions: []expr.Condition{
			cond("event_data.x", "in", []string{"a"}),
			cond("event_data.x", "in", []float64{1}),
			cond("event_data.x", "in", []int{1}),
			cond("event_data.x", "=", int64(5)),
			cond("event_data.x", "=", uint8(5)),
			cond("event_data.x", "=", float32(5)),
			cond("event_data.x", ">", "2025-01-01T00:00:00.5+05:30"),
			cond("severity", "=", nil),
			cond("event_data.a.0.b", "=", 1),
			cond("recommendations", "contains", "rotate tires"),
			cond("recommendations.0", "=", "rotate tires"),
			cond("metadata.processing_time", ">", "2025-01-01T00:00:00Z"),
		}},
		{Kind: expr.KindTelemetry, MaxFuelLevel: ptr(0.0), MinEngineTemp: ptr(-40.0),
			AlertThresholds: map[string]float64{"engine_rpm": 0, "coolant_temp": -10}},
	}
	for i, s := range specs {
		if _, err := expr.Compile(s); err != nil {
			t.Errorf("spec %d: %v", i, err)
		}
	}
}
