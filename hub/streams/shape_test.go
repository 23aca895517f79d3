package streams

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

func TestRoundNumber(t *testing.T) {
	for _, c := range []struct {
		name string
		in   float64
		want float64
	}{
		{"latitude", 37.7749295, 37.77493},
		{"longitude", -122.4194155, -122.41942},
		{"rpm", 2450.37, 2450},
		{"voltage", 13.84372, 13.84},
		{"acceleration_x", 0.0341779, 0.03418},
		{"odometer", 123456.7, 123457},
		{"dtc_count", 3, 3},
		{"x", 0, 0},
		{"tiny", 1e-14, 1e-14},
	} {
		if got := roundNumber(c.name, c.in); got != c.want {
			t.Errorf("roundNumber(%s, %v) = %v, want %v", c.name, c.in, got, c.want)
		}
	}
	if got := roundNumber("x", math.Inf(1)); !math.IsInf(got, 1) {
		t.Errorf("inf rounded to %v", got)
	}
}

func f64(v float64) *float64 { return &v }

func engineMessage(rpm, coolant float64) *event.Telemetry {
	return &event.Telemetry{Timestamp: time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC), VehicleID: "veh-1", DataType: "engine_diagnostics", Sequence: 7,
		Data:              map[string]any{"engine": map[string]any{"rpm": rpm, "coolant_temp": coolant, "load_percentage": 41.237}, "status_codes": map[string]any{"pending_codes": []any{"P0300"}}},
		QualityIndicators: &event.QualityIndicators{SignalStrength: f64(87.654), SensorHealth: "good"}}
}

func encoded(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestShapeMessage: each setting changes what it says and leaves the
// original message alone.
func TestShapeMessage(t *testing.T) {
	no, yes := false, true
	if shapeOf(&TelemetryConfig{StreamConfig: &TelemetryStreamConfig{IncludeMetadata: &yes, QualitySettings: &QualitySettings{Precision: "high"}}}) != nil {
		t.Error("a stream asking for nothing has a shape")
	}
	msg := engineMessage(2450.37, 96.44)
	noMeta := shapeOf(&TelemetryConfig{StreamConfig: &TelemetryStreamConfig{IncludeMetadata: &no}})
	m := encoded(t, noMeta.Message(msg))
	if _, ok := m["sequence"]; ok {
		t.Errorf("include_metadata false kept sequence: %v", m)
	}
	if _, ok := m["quality_indicators"]; ok || m["vehicle_id"] != "veh-1" || m["data"] == nil {
		t.Errorf("include_metadata false: %v", m)
	}
	std := shapeOf(&TelemetryConfig{StreamConfig: &TelemetryStreamConfig{QualitySettings: &QualitySettings{Precision: "standard"}}})
	m = encoded(t, std.Message(msg))
	engine := m["data"].(map[string]any)["engine"].(map[string]any)
	if engine["rpm"] != 2450.0 || engine["coolant_temp"] != 96.44 || engine["load_percentage"] != 41.24 || m["sequence"] != 7.0 ||
		m["quality_indicators"].(map[string]any)["signal_strength"] != 87.65 {
		t.Errorf("precision standard: %v", m)
	}
	if msg.Data["engine"].(map[string]any)["rpm"] != 2450.37 || *msg.QualityIndicators.SignalStrength != 87.654 {
		t.Error("the original message was changed")
	}
	calc := shapeOf(&TelemetryConfig{StreamConfig: &TelemetryStreamConfig{QualitySettings: &QualitySettings{CalculatedMetrics: true}}})
	fuel := &event.Telemetry{DataType: "fuel_system", Data: map[string]any{"fuel_level": map[string]any{"gallons": 10.0}, "consumption": map[string]any{"average_mpg": 25.0, "fuel_rate_lph": 3.785411784}}}
	cm := encoded(t, calc.Message(fuel))["calculated_metrics"].(map[string]any)
	if math.Abs(cm["fuel_liters"].(float64)-37.85411784) > 1e-9 || cm["estimated_range_miles"] != 250.0 || math.Abs(cm["fuel_rate_gph"].(float64)-1) > 1e-12 {
		t.Errorf("calculated metrics %v", cm)
	}
	if _, ok := cm["fuel_gallons"]; ok {
		t.Errorf("a metric the message has was calculated: %v", cm)
	}
}

// TestShapeAlerts: one alert per threshold reached, of the data type
// that carries its field; ids stable across calls.
func TestShapeAlerts(t *testing.T) {
	tc := &TelemetryConfig{StreamConfig: &TelemetryStreamConfig{AlertIntegration: &AlertIntegration{RealTimeAlerts: true}},
		Filters: &TelemetryFilters{MaxFuelLevel: f64(20), AlertThresholds: &AlertThresholds{EngineRPM: f64(4500), CoolantTemp: f64(105)}}}
	s := shapeOf(tc)
	if s.Message(engineMessage(1, 1)) != nil {
		t.Error("an alerts-only shape copies the message")
	}
	if got := s.Alerts("tstr_1", engineMessage(4000, 100)); len(got) != 0 {
		t.Errorf("below every threshold: %d alerts", len(got))
	}
	got := s.Alerts("tstr_1", engineMessage(5000, 100))
	if len(got) != 1 {
		t.Fatalf("%d alerts, want 1", len(got))
	}
	a := encoded(t, got[0])
	d := a["event_data"].(map[string]any)
	if a["event_type"] != AlertEventType || a["category"] != "maintenance_events" || d["threshold"] != "engine_rpm" || d["value"] != 5000.0 || d["limit"] != 4500.0 ||
		a["source"].(map[string]any)["vehicle_id"] != "veh-1" || a["metadata"] == nil {
		t.Errorf("alert %v", a)
	}
	again := encoded(t, s.Alerts("tstr_1", engineMessage(5000, 100))[0])
	if again["event_id"] != a["event_id"] {
		t.Error("the same message raised another alert id")
	}
	low := &event.Telemetry{VehicleID: "veh-1", DataType: "fuel_system", Data: map[string]any{"fuel_level": map[string]any{"percentage": 12.0}}}
	if got := s.Alerts("tstr_1", low); len(got) != 1 || encoded(t, got[0])["event_data"].(map[string]any)["comparison"] != "<=" {
		t.Errorf("low fuel: %v", got)
	}
}
