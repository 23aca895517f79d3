package expr_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

func ptr[T any](v T) *T { return &v }

// harshBraking is a safety event, Tuesday 2025-03-04 10:30 UTC.
func harshBraking() *event.Envelope {
	return &event.Envelope{Org: "org1", Env: "live", Kind: event.KindEvent, Event: &event.Event{
		EventID:   "evt_1",
		EventType: "harsh_braking",
		Category:  event.CategorySafety,
		Timestamp: time.Date(2025, 3, 4, 10, 30, 0, 0, time.UTC),
		Severity:  "high",
		Priority:  "urgent",
		Source:    event.Source{VehicleID: "veh_1", DriverID: "drv_1", TripID: "trip_1"},
		Location: &event.Location{Latitude: 37.77, Longitude: -122.42, Address: "Market St",
			Geofence: "depot_sf", SpeedLimit: ptr(50.0), RoadType: "urban"},
		EventData: map[string]any{
			"deceleration_g":    0.82,
			"initial_speed":     65.0,
			"final_speed":       12.0,
			"weather_condition": "rain",
			"preceding_events":  []any{"rapid_acceleration", "sharp_turn", 3.0},
			"details":           map[string]any{"abs_active": true, "wheels": []any{1.0, 2.0}},
			"cleared":           nil,
			"last_service_date": "2025-01-15T08:00:00Z",
		},
		Metadata:       event.Metadata{CorrelationID: "corr_1", SequenceNumber: 42, SourceSystem: "detector"},
		RiskAssessment: map[string]any{"collision_risk": "moderate"},
	}}
}

func engine(vehicle string, rpm, coolant float64) *event.Envelope {
	return &event.Envelope{Kind: event.KindTelemetry, Telemetry: &event.Telemetry{
		Timestamp: time.Date(2025, 3, 4, 10, 30, 0, 0, time.UTC),
		VehicleID: vehicle,
		DataType:  "engine_diagnostics",
		Sequence:  7,
		Data: map[string]any{
			"engine":       map[string]any{"rpm": rpm, "coolant_temp": coolant, "load_percentage": 40.0},
			"status_codes": map[string]any{"dtc_count": 2.0, "pending_codes": []any{"P0300", "P0171"}, "mil_status": true},
		},
		QualityIndicators: &event.QualityIndicators{SignalStrength: ptr(-70.0), SensorHealth: "good"},
	}}
}

func fuel(vehicle string, pct float64) *event.Envelope {
	return &event.Envelope{Kind: event.KindTelemetry, Telemetry: &event.Telemetry{
		Timestamp: time.Date(2025, 3, 4, 10, 30, 0, 0, time.UTC),
		VehicleID: vehicle,
		DataType:  "fuel_system",
		Data:      map[string]any{"fuel_level": map[string]any{"percentage": pct, "liters": 40.0}},
	}}
}

func mustCompile(t testing.TB, s expr.Spec) *expr.Program {
	t.Helper()
	p, err := expr.Compile(s)
	if err != nil {
		t.Fatalf("Compile(%+v): %v", s, err)
	}
	return p
}

func cond(field, op string, v any) expr.Condition {
	return expr.Condition{Field: field, Operator: op, Value: v}
}

func TestOperators(t *testing.T) {
	ev := harshBraking()
	tests := []struct {
		name string
		c    expr.Condition
		want bool
	}{
		{"= string", cond("severity", "=", "high"), true},
		{"= string other", cond("severity", "=", "low"), false},
		{"== string", cond("event_type", "==", "harsh_braking"), true},
		{"= number", cond("event_data.deceleration_g", "=", 0.82), true},
		{"= number int", cond("metadata.sequence_number", "=", 42), true},
		{"= number other", cond("event_data.deceleration_g", "==", 0.8), false},
		{"= number vs string", cond("event_data.weather_condition", "=", 5.0), false},
		{"= bool", cond("event_data.details.abs_active", "=", true), true},
		{"= bool false", cond("event_data.details.abs_active", "=", false), false},
		{"= null missing", cond("source.trip_id", "=", nil), false},
		{"= null absent field", cond("event_data.nope", "=", nil), true},
		{"= null json null", cond("event_data.cleared", "=", nil), true},
		{"= null omitempty", cond("metadata.processing_time", "=", nil), true},
		{"= time", cond("timestamp", "=", "2025-03-04T11:30:00+01:00"), true},
		{"= time string field", cond("event_data.last_service_date", "=", "2025-01-15T09:00:00+01:00"), true},
		{"= string exact time text", cond("event_data.last_service_date", "=", "2025-01-15T08:00:00Z"), true},
		{"= array index", cond("event_data.preceding_events.1", "=", "sharp_turn"), true},
		{"= array index out of range", cond("event_data.preceding_events.9", "=", nil), true},
		{"= nested array", cond("event_data.details.wheels.0", "=", 1), true},
		{"= location", cond("location.latitude", "=", 37.77), true},
		{"= location pointer", cond("location.speed_limit", "=", 50), true},
		{"= location nil pointer", cond("location.accuracy", "=", nil), true},
		{"= risk", cond("risk_assessment.collision_risk", "=", "moderate"), true},
		{"!= string", cond("severity", "!=", "low"), true},
		{"!= string same", cond("severity", "!=", "high"), false},
		{"!= missing", cond("event_data.nope", "!=", "x"), true},
		{"!= null present", cond("source.driver_id", "!=", nil), true},
		{"!= null absent", cond("event_data.nope", "!=", nil), false},
		{"> number", cond("event_data.deceleration_g", ">", 0.5), true},
		{"> number equal", cond("event_data.deceleration_g", ">", 0.82), false},
		{">= number equal", cond("event_data.deceleration_g", ">=", 0.82), true},
		{"< number", cond("event_data.final_speed", "<", 20), true},
		{"< number false", cond("event_data.final_speed", "<", 12), false},
		{"<= number equal", cond("event_data.final_speed", "<=", 12), true},
		{"> missing", cond("event_data.nope", ">", 0), false},
		{"> string field", cond("event_data.weather_condition", ">", 0), false},
		{"> time", cond("timestamp", ">", "2025-03-04T10:00:00Z"), true},
		{"< time", cond("timestamp", "<", "2025-03-04T10:00:00Z"), false},
		{">= time equal other zone", cond("timestamp", ">=", "2025-03-04T05:30:00-05:00"), true},
		{"< time string field", cond("event_data.last_service_date", "<", "2025-02-01T00:00:00Z"), true},
		{"> time non-time string", cond("event_data.weather_condition", ">", "2025-02-01T00:00:00Z"), false},
		{"> number sequence", cond("metadata.sequence_number", ">", 41), true},
		{"in strings", cond("severity", "in", []any{"high", "critical"}), true},
		{"in strings miss", cond("severity", "in", []any{"low", "medium"}), false},
		{"in []string", cond("source.vehicle_id", "in", []string{"veh_9", "veh_1"}), true},
		{"in numbers", cond("event_data.initial_speed", "in", []any{60.0, 65.0}), true},
		{"in mixed", cond("event_data.initial_speed", "in", []any{"65", 65}), true},
		{"in null", cond("event_data.nope", "in", []any{nil, "x"}), true},
		{"in empty", cond("severity", "in", []any{}), false},
		{"in many", cond("event_type", "in", []any{"a", "b", "c", "d", "e", "f", "g", "h", "i", "harsh_braking"}), true},
		{"in time", cond("timestamp", "in", []any{"2025-03-04T10:30:00Z"}), true},
		{"contains substring", cond("location.address", "contains", "Market"), true},
		{"contains substring miss", cond("location.address", "contains", "market"), false},
		{"contains array", cond("event_data.preceding_events", "contains", "sharp_turn"), true},
		{"contains array number", cond("event_data.preceding_events", "contains", 3), true},
		{"contains array miss", cond("event_data.preceding_events", "contains", "x"), false},
		{"contains object key", cond("event_data.details", "contains", "abs_active"), true},
		{"contains number field", cond("event_data.initial_speed", "contains", "6"), false},
		{"contains missing", cond("event_data.nope", "contains", "x"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{tt.c}})
			if got := p.Match(ev); got != tt.want {
				t.Errorf("%s %s %v: Match = %v, want %v", tt.c.Field, tt.c.Operator, tt.c.Value, got, tt.want)
			}
		})
	}
}

func TestTelemetryConditions(t *testing.T) {
	env := engine("veh_1", 3200, 95)
	tests := []struct {
		c    expr.Condition
		want bool
	}{
		{cond("data.engine.rpm", ">", 3000), true},
		{cond("data.engine.rpm", "<", 3000), false},
		{cond("data_type", "=", "engine_diagnostics"), true},
		{cond("vehicle_id", "in", []any{"veh_1"}), true},
		{cond("sequence", ">=", 7), true},
		{cond("data.status_codes.pending_codes", "contains", "P0300"), true},
		{cond("data.status_codes.mil_status", "=", true), true},
		{cond("quality_indicators.signal_strength", "<", -60), true},
		{cond("quality_indicators.data_completeness", "=", nil), true},
		{cond("quality_indicators.sensor_health", "=", "good"), true},
		{cond("timestamp", "<", "2026-01-01T00:00:00Z"), true},
		{cond("data", "contains", "engine"), true},
	}
	for _, tt := range tests {
		p := mustCompile(t, expr.Spec{Kind: expr.KindTelemetry, Conditions: []expr.Condition{tt.c}})
		if got := p.Match(env); got != tt.want {
			t.Errorf("%s %s %v: Match = %v, want %v", tt.c.Field, tt.c.Operator, tt.c.Value, got, tt.want)
		}
	}
}

func TestEventFilters(t *testing.T) {
	tests := []struct {
		name string
		spec expr.Spec
		want bool
	}{
		{"empty", expr.Spec{}, true},
		{"category", expr.Spec{Categories: []string{event.CategorySafety}}, true},
		{"category miss", expr.Spec{Categories: []string{event.CategoryGeofence}}, false},
		{"severity", expr.Spec{Severities: []string{"high", "critical"}}, true},
		{"severity miss", expr.Spec{Severities: []string{"low"}}, false},
		{"priority", expr.Spec{Priorities: []string{"urgent"}}, true},
		{"priority miss", expr.Spec{Priorities: []string{"normal", "emergency"}}, false},
		{"vehicle", expr.Spec{VehicleIDs: []string{"veh_0", "veh_1"}}, true},
		{"vehicle miss", expr.Spec{VehicleIDs: []string{"veh_2"}}, false},
		{"many vehicles", expr.Spec{VehicleIDs: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "veh_1"}}, true},
		{"driver", expr.Spec{DriverIDs: []string{"drv_1"}}, true},
		{"driver miss", expr.Spec{DriverIDs: []string{"drv_2"}}, false},
		{"geofence location", expr.Spec{Geofences: []string{"depot_sf"}}, true},
		{"geofence miss", expr.Spec{Geofences: []string{"depot_la"}}, false},
		{"all", expr.Spec{Categories: []string{event.CategorySafety}, Severities: []string{"high"},
			VehicleIDs: []string{"veh_1"}, Conditions: []expr.Condition{cond("event_data.deceleration_g", ">", 0.5)}}, true},
		{"all but one condition", expr.Spec{Categories: []string{event.CategorySafety},
			Conditions: []expr.Condition{cond("event_data.deceleration_g", ">", 0.5), cond("event_data.final_speed", ">", 50)}}, false},
		{"contradicting condition", expr.Spec{VehicleIDs: []string{"veh_1"},
			Conditions: []expr.Condition{cond("source.vehicle_id", "=", "veh_2")}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.spec.Kind = expr.KindEvent
			p := mustCompile(t, tt.spec)
			if got := p.Match(harshBraking()); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFleetFilter: a fleet-scoped program takes the events of its fleet
// only; an event without a fleet is of none.
func TestFleetFilter(t *testing.T) {
	p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, FleetIDs: []string{"fleet_9"}})
	for _, c := range []struct {
		fleet string
		want  bool
	}{{"fleet_9", true}, {"fleet_8", false}, {"", false}} {
		env := harshBraking()
		env.Event.Source.FleetID = c.fleet
		if got := p.Match(env); got != c.want {
			t.Errorf("fleet %q: Match = %v, want %v", c.fleet, got, c.want)
		}
	}
	byCond := mustCompile(t, expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{cond("source.fleet_id", "=", "fleet_9")}})
	env := harshBraking()
	if byCond.Match(env) {
		t.Error("source.fleet_id condition matched an event without a fleet")
	}
	env.Event.Source.FleetID = "fleet_9"
	if !byCond.Match(env) {
		t.Error("source.fleet_id condition missed its fleet")
	}
	if _, err := expr.Compile(expr.Spec{Kind: expr.KindTelemetry, FleetIDs: []string{"f"}}); err == nil {
		t.Error("a telemetry program with fleet ids compiled")
	}
}

func TestGeofenceFromEventData(t *testing.T) {
	env := harshBraking()
	env.Event.Location.Geofence = ""
	env.Event.EventData["geofence_id"] = "gf_9"
	p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, Geofences: []string{"gf_9"}})
	if !p.Match(env) {
		t.Error("event_data.geofence_id did not match")
	}
}

func TestTelemetryFilters(t *testing.T) {
	tests := []struct {
		name string
		spec expr.Spec
		env  *event.Envelope
		want bool
	}{
		{"vehicles", expr.Spec{VehicleIDs: []string{"veh_1"}}, engine("veh_1", 800, 90), true},
		{"vehicles miss", expr.Spec{VehicleIDs: []string{"veh_1"}}, engine("veh_2", 800, 90), false},
		{"data type", expr.Spec{DataTypes: []string{"engine_diagnostics"}}, engine("veh_1", 800, 90), true},
		{"data type miss", expr.Spec{DataTypes: []string{"fuel_system"}}, engine("veh_1", 800, 90), false},
		{"min engine temp reached", expr.Spec{MinEngineTemp: ptr(90.0)}, engine("veh_1", 800, 90), true},
		{"min engine temp below", expr.Spec{MinEngineTemp: ptr(90.0)}, engine("veh_1", 800, 89.9), false},
		{"min engine temp other type", expr.Spec{MinEngineTemp: ptr(90.0)}, fuel("veh_1", 50), true},
		{"max fuel level", expr.Spec{MaxFuelLevel: ptr(20.0)}, fuel("veh_1", 20), true},
		{"max fuel level above", expr.Spec{MaxFuelLevel: ptr(20.0)}, fuel("veh_1", 20.5), false},
		{"max fuel level other type", expr.Spec{MaxFuelLevel: ptr(20.0)}, engine("veh_1", 800, 90), true},
		{"rpm threshold", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000}}, engine("veh_1", 3000, 80), true},
		{"rpm threshold below", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000}}, engine("veh_1", 2999, 80), false},
		{"any threshold: coolant", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000, "coolant_temp": 100}}, engine("veh_1", 900, 104), true},
		{"any threshold: rpm", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000, "coolant_temp": 100}}, engine("veh_1", 3500, 80), true},
		{"any threshold: none", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000, "coolant_temp": 100}}, engine("veh_1", 900, 80), false},
		{"thresholds other type", expr.Spec{AlertThresholds: map[string]float64{"engine_rpm": 3000}}, fuel("veh_1", 50), true},
		{"event program, telemetry message", expr.Spec{Kind: expr.KindEvent}, engine("veh_1", 0, 0), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.spec.Kind == "" {
				tt.spec.Kind = expr.KindTelemetry
			}
			p := mustCompile(t, tt.spec)
			if got := p.Match(tt.env); got != tt.want {
				t.Errorf("Match = %v, want %v", got, tt.want)
			}
		})
	}
	p := mustCompile(t, expr.Spec{Kind: expr.KindTelemetry})
	if p.Match(harshBraking()) {
		t.Error("telemetry program matched an event")
	}
	if p.Match(nil) || p.Match(&event.Envelope{}) {
		t.Error("matched an empty envelope")
	}
	var nilProgram *expr.Program
	if nilProgram.Match(harshBraking()) {
		t.Error("nil program matched")
	}
}

// TestMatchMsgpack checks values as the bus decodes them: msgpack gives
// sized integers, not float64.
func TestMatchMsgpack(t *testing.T) {
	env := harshBraking()
	env.Event.EventData["count"] = 3
	env.Event.EventData["big"] = int64(1) << 40
	env.Event.EventData["neg"] = -200
	b, err := event.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	got, err := event.Unmarshal(b)
	if err != nil {
		t.Fatal(err)
	}
	p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{
		cond("event_data.count", "=", 3),
		cond("event_data.big", ">", 1e12),
		cond("event_data.neg", "<", -100),
		cond("event_data.deceleration_g", ">=", 0.82),
		cond("event_data.preceding_events", "contains", 3),
		cond("timestamp", "=", "2025-03-04T10:30:00Z"),
	}})
	if !p.Match(got) {
		t.Errorf("no match after a msgpack round trip: %#v", got.Event.EventData)
	}
}

func TestMatchDoesNotAllocate(t *testing.T) {
	p := mustCompile(t, expr.Spec{
		Kind:       expr.KindEvent,
		Categories: []string{event.CategorySafety, event.CategoryEmergency},
		Severities: []string{"high", "critical"},
		VehicleIDs: []string{"veh_1", "veh_2"},
		Geofences:  []string{"depot_sf"},
		Timezone:   "America/Los_Angeles",
		Conditions: []expr.Condition{
			cond("event_data.deceleration_g", ">", 0.5),
			cond("event_data.weather_condition", "in", []any{"rain", "snow"}),
			cond("event_data.preceding_events", "contains", "sharp_turn"),
			cond("timestamp", ">", "2025-01-01T00:00:00Z"),
			cond("location.address", "contains", "Market"),
		},
		ExcludeWeekends: true,
	})
	env := harshBraking()
	if !p.Match(env) {
		t.Fatal("no match")
	}
	if n := testing.AllocsPerRun(100, func() { p.Match(env) }); n != 0 {
		t.Errorf("Match allocates %v times", n)
	}
	tp := mustCompile(t, expr.Spec{Kind: expr.KindTelemetry, VehicleIDs: []string{"veh_1"},
		MinEngineTemp: ptr(80.0), AlertThresholds: map[string]float64{"engine_rpm": 3000},
		Conditions: []expr.Condition{cond("data.engine.load_percentage", "<", 90)}})
	tenv := engine("veh_1", 3200, 95)
	if !tp.Match(tenv) {
		t.Fatal("no telemetry match")
	}
	if n := testing.AllocsPerRun(100, func() { tp.Match(tenv) }); n != 0 {
		t.Errorf("telemetry Match allocates %v times", n)
	}
}

func TestKeys(t *testing.T) {
	tests := []struct {
		name string
		spec expr.Spec
		want expr.IndexKeys
	}{
		{"wildcard", expr.Spec{Kind: expr.KindEvent}, expr.IndexKeys{Kind: expr.KindEvent}},
		{"lists", expr.Spec{Kind: expr.KindEvent, VehicleIDs: []string{"b", "a", "b"}, Categories: []string{event.CategorySafety}},
			expr.IndexKeys{Kind: expr.KindEvent, VehicleIDs: []string{"a", "b"}, Categories: []string{event.CategorySafety}}},
		{"condition pins vehicle", expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{cond("source.vehicle_id", "in", []any{"v2", "v1"})}},
			expr.IndexKeys{Kind: expr.KindEvent, VehicleIDs: []string{"v1", "v2"}}},
		{"condition narrows vehicles", expr.Spec{Kind: expr.KindEvent, VehicleIDs: []string{"v1", "v3"}, Conditions: []expr.Condition{cond("source.vehicle_id", "in", []any{"v2", "v1"})}},
			expr.IndexKeys{Kind: expr.KindEvent, VehicleIDs: []string{"v1"}}},
		{"condition pins category", expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{cond("category", "=", event.CategoryEmergency)}},
			expr.IndexKeys{Kind: expr.KindEvent, Categories: []string{event.CategoryEmergency}}},
		{"!= does not pin", expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{cond("category", "!=", event.CategoryEmergency)}},
			expr.IndexKeys{Kind: expr.KindEvent}},
		{"null does not pin", expr.Spec{Kind: expr.KindEvent, Conditions: []expr.Condition{cond("source.vehicle_id", "in", []any{"v1", nil})}},
			expr.IndexKeys{Kind: expr.KindEvent}},
		{"telemetry", expr.Spec{Kind: expr.KindTelemetry, VehicleIDs: []string{"v1"}, DataTypes: []string{"fuel_system", "engine_diagnostics"},
			Conditions: []expr.Condition{cond("data_type", "=", "fuel_system")}},
			expr.IndexKeys{Kind: expr.KindTelemetry, VehicleIDs: []string{"v1"}, DataTypes: []string{"fuel_system"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := mustCompile(t, tt.spec).Keys()
			if !equalKeys(got, tt.want) {
				t.Errorf("Keys = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func equalKeys(a, b expr.IndexKeys) bool {
	eq := func(x, y []string) bool {
		if len(x) != len(y) {
			return false
		}
		for i := range x {
			if x[i] != y[i] {
				return false
			}
		}
		return true
	}
	return a.Kind == b.Kind && eq(a.VehicleIDs, b.VehicleIDs) && eq(a.Categories, b.Categories) && eq(a.DataTypes, b.DataTypes)
}
