package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

// samples carry every documented group and field of the four structured
// data types (docs/ingest.md, Data groups), with valid values.
var samples = map[string]string{
	"engine_diagnostics": `{
		"engine": {"rpm": 2150, "load_percentage": 45.5, "coolant_temp": 92, "oil_pressure": 45, "oil_temp": 98,
			"air_intake_temp": 30, "throttle_position": 22.5, "fuel_trim_bank1": -2.3, "fuel_trim_bank2": 1.8, "timing_advance": 12},
		"exhaust": {"egr_valve_position": 15, "dpf_pressure": 2.1, "nox_level": 120, "exhaust_temp": 420},
		"turbo": {"boost_pressure": 14.5, "turbo_rpm": 95000, "wastegate_position": 35},
		"status_codes": {"dtc_count": 2, "pending_codes": ["P0301", "P0420"], "mil_status": false, "readiness_status": "complete"}}`,
	"fuel_system": `{
		"fuel_level": {"percentage": 65.5, "gallons": 13.1, "liters": 49.6, "range_remaining": 312},
		"consumption": {"instant_mpg": 24.5, "average_mpg": 28.1, "fuel_rate_gph": 1.2, "fuel_rate_lph": 4.5},
		"system_health": {"fuel_pressure": 58, "fuel_temp": 32, "injector_pulse_width": 3.2, "fuel_pump_duty": 45},
		"efficiency_metrics": {"efficiency_score": 82, "eco_driving_score": 76, "fuel_waste_estimate": 0.3, "optimization_potential": 12}}`,
	"vehicle_dynamics": `{
		"motion": {"speed_mph": 45, "speed_kmh": 72.4, "acceleration_x": 0.12, "acceleration_y": -0.03, "acceleration_z": 0.98,
			"angular_velocity_x": 0.01, "angular_velocity_y": 0.02, "angular_velocity_z": -0.5},
		"braking": {"brake_pedal_position": 0, "brake_pressure": 0, "abs_active": false, "brake_temp_front": 120,
			"brake_temp_rear": 95, "brake_wear_front": 35, "brake_wear_rear": 22},
		"steering": {"steering_angle": -5.5, "steering_rate": 2.1, "power_steering_pressure": 850, "wheel_alignment": "within_spec"},
		"suspension": {"ride_height_front": 180, "ride_height_rear": 185, "shock_travel_front": 45, "shock_travel_rear": 50,
			"stability_control_active": false},
		"tires": {"pressure_fl": 35, "pressure_fr": 35, "pressure_rl": 34, "pressure_rr": 34.5, "temp_fl": 40, "temp_fr": 41,
			"temp_rl": 38, "temp_rr": 39, "tread_depth_fl": 7.5, "tread_depth_fr": 7.4, "tread_depth_rl": 8, "tread_depth_rr": 8.1}}`,
	"electrical_system": `{
		"battery": {"voltage": 12.6, "current": -2.5, "state_of_charge": 85, "temperature": 25, "health_percentage": 92,
			"cycles": 340, "internal_resistance": 0.012},
		"charging_system": {"alternator_voltage": 14.2, "alternator_current": 45, "charging_rate": 12, "belt_tension": "normal",
			"regulator_temp": 55},
		"power_distribution": {"main_bus_voltage": 12.4, "accessory_load": 5, "lighting_load": 8, "hvac_load": 12, "total_load": 25},
		"starter_system": {"starter_voltage": 10.5, "starter_current": 180, "engagement_count": 15230, "cranking_time_avg": 0.8}}`,
	"environmental":          `{"cabin": {"temperature": 21.5, "humidity": 40, "co2_ppm": 650}, "ambient": {"temperature": -4, "pressure_hpa": 1013}}`,
	"maintenance_indicators": `{"oil_life": {"remaining_percent": 35, "km_to_change": 4200}, "service": {"days_to_due": 12}}`,
	"gps_enhanced":           `{"position": {"latitude": 40.1, "longitude": -83.0, "altitude_m": 240}, "quality": {"hdop": 0.9, "satellites": 11}}`,
	"driver_behavior":        `{"scores": {"smoothness": 88, "attention": 93}, "counts": {"harsh_brakes": 1, "phone_use_seconds": 0}}`,
}

// message builds a telemetry message of dataType with the given data.
func message(vehicle, dataType, data string) string {
	return fmt.Sprintf(`{"timestamp":%q,"vehicle_id":%q,"data_type":%q,"sequence":7,"data":%s,
		"quality_indicators":{"signal_strength":88,"data_completeness":99.5,"sensor_health":"good"}}`,
		ts(-time.Second), vehicle, dataType, data)
}

// The samples and the schema name the same groups and fields, so the
// tests below reach every documented field.
func TestSamplesCoverTheSchema(t *testing.T) {
	for _, dt := range event.DataTypes {
		if _, ok := samples[dt]; !ok {
			t.Errorf("no sample for data type %s", dt)
		}
	}
	doc := telemetry.DocumentedFields()
	if len(doc) != len(dataTypeStructured) {
		t.Fatalf("schema has %d structured data types", len(doc))
	}
	for dt, groups := range doc {
		sample := obj(t, samples[dt])
		if len(sample) != len(groups) {
			t.Errorf("%s: sample has %d groups, schema %d", dt, len(sample), len(groups))
		}
		for g, fields := range groups {
			sg, _ := sample[g].(map[string]any)
			got := make([]string, 0, len(sg))
			for k := range sg {
				got = append(got, k)
			}
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(fields, ",") {
				t.Errorf("%s.%s: sample has %v, schema %v", dt, g, got, fields)
			}
		}
	}
}

func TestValidMessagesOfEveryDataType(t *testing.T) {
	for _, dt := range event.DataTypes {
		t.Run(dt, func(t *testing.T) {
			f := newFixture(t, telemetry.Config{})
			res, err := f.svc.IngestTelemetry(context.Background(), "org-a", "test", []map[string]any{obj(t, message("veh-1", dt, samples[dt]))})
			if err != nil {
				t.Fatalf("valid %s message: %v", dt, err)
			}
			if res.Accepted != 1 || len(res.Sequences) != 1 || res.Sequences[0] != 7 || !res.IngestedAt.Equal(t0) {
				t.Fatalf("result %+v", res)
			}
			ms := all(t, f.bus.take())
			if len(ms) != 1 {
				t.Fatalf("published %d messages, want 1", len(ms))
			}
			m := ms[0]
			if m.Topic != hub.TopicTelemetry || string(m.Key) != "veh-1" {
				t.Errorf("topic %s key %s", m.Topic, m.Key)
			}
			env := m.env
			if env.Org != "org-a" || env.Env != "test" || env.Kind != event.KindTelemetry || !env.IngestedAt.Equal(t0) || env.Telemetry == nil {
				t.Fatalf("envelope %+v", env)
			}
			tm := env.Telemetry
			if tm.DataType != dt || tm.VehicleID != "veh-1" || tm.Sequence != 7 || !tm.Timestamp.Equal(t0.Add(-time.Second)) {
				t.Errorf("telemetry %+v", tm)
			}
			if q := tm.QualityIndicators; q == nil || *q.SignalStrength != 88 || *q.DataCompleteness != 99.5 || q.SensorHealth != "good" {
				t.Errorf("quality %+v", q)
			}
			// every value arrives with its JSON meaning, numbers as float64
			want := obj(t, samples[dt])
			for g, fields := range want {
				for k, v := range fields.(map[string]any) {
					got := tm.Data[g].(map[string]any)[k]
					if n, ok := v.(json.Number); ok {
						fv, _ := n.Float64()
						if got != fv {
							t.Errorf("data.%s.%s = %#v, want %v", g, k, got, fv)
						}
						continue
					}
					if fmt.Sprint(got) != fmt.Sprint(v) {
						t.Errorf("data.%s.%s = %#v, want %#v", g, k, got, v)
					}
				}
			}
		})
	}
}

// wrong returns a value of the wrong type for v.
func wrong(v any) any {
	switch v.(type) {
	case json.Number:
		return "12"
	case bool:
		return json.Number("1")
	case string:
		return json.Number("5")
	case []any:
		return "P0300"
	}
	return nil
}

// Every documented field rejects a value of another type, under its own
// path, and every group rejects a field it does not document.
func TestEveryFieldChecksItsType(t *testing.T) {
	for _, dt := range event.DataTypes {
		data := obj(t, samples[dt])
		for g, fields := range data {
			for k, v := range fields.(map[string]any) {
				t.Run(dt+"."+g+"."+k, func(t *testing.T) {
					f := newFixture(t, telemetry.Config{})
					m := obj(t, message("veh-1", dt, samples[dt]))
					m["data"].(map[string]any)[g].(map[string]any)[k] = wrong(v)
					_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{m})
					ve := validation(t, err)
					path := "messages[0].data." + g + "." + k
					if len(ve.Fields) != 1 || ve.Fields[path] == "" || ve.Code != "validation_failed" {
						t.Fatalf("want one error at %s, got %v", path, ve.Fields)
					}
					if len(f.bus.take()) != 0 {
						t.Fatal("an invalid message was published")
					}
				})
			}
			t.Run(dt+"."+g+".unknown", func(t *testing.T) {
				f := newFixture(t, telemetry.Config{})
				m := obj(t, message("veh-1", dt, samples[dt]))
				m["data"].(map[string]any)[g].(map[string]any)["bogus"] = json.Number("1")
				_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{m})
				if _, ok := dataTypeStructured[dt]; !ok {
					if err != nil {
						t.Fatalf("free-form group rejected a numeric field: %v", err)
					}
					return
				}
				ve := validation(t, err)
				if msg := ve.Fields["messages[0].data."+g+".bogus"]; !strings.Contains(msg, "unknown field") {
					t.Fatalf("unknown field: %v", ve.Fields)
				}
			})
		}
	}
}

var dataTypeStructured = map[string]bool{"engine_diagnostics": true, "fuel_system": true, "vehicle_dynamics": true, "electrical_system": true}

func TestUnknownGroups(t *testing.T) {
	for dt := range dataTypeStructured {
		f := newFixture(t, telemetry.Config{})
		m := obj(t, message("veh-1", dt, `{"weather": {"rain": 1}}`))
		_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{m})
		ve := validation(t, err)
		if msg := ve.Fields["messages[0].data.weather"]; !strings.Contains(msg, "unknown group") {
			t.Errorf("%s: %v", dt, ve.Fields)
		}
	}
	// a group of another structured data type is unknown too
	f := newFixture(t, telemetry.Config{})
	_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{obj(t, message("v", "fuel_system", samples["engine_diagnostics"]))})
	if ve := validation(t, err); len(ve.Fields) != 4 {
		t.Errorf("engine groups in fuel_system: %v", ve.Fields)
	}
}

// telemetryCases are single messages, valid or not; TestTelemetryValidation
// checks their errors and TestReaderMatchesGeneralPath that the JSON
// reader agrees with the general path on each.
var telemetryCases = func() []struct {
	name string
	msg  string
	want map[string]string // path → part of the message; nil means valid
} {
	long := strings.Repeat("v", 201)
	return []struct {
		name string
		msg  string
		want map[string]string
	}{
		{"minimal", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":50}}}`, nil},
		{"offset timestamp", `{"timestamp":"2026-11-23T11:00:00.123+02:00","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":50}}}`, nil},
		{"4 minutes ahead", fmt.Sprintf(`{"timestamp":%q,"vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`, ts(4*time.Minute)), nil},
		{"empty group", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{}}}`, nil},
		{"200-character vehicle", fmt.Sprintf(`{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":%q,"data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`, long[:200]), nil},
		{"integral float count", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"dtc_count":3.0}}}`, nil},

		{"empty object", `{}`, map[string]string{"messages[0].vehicle_id": "is required", "messages[0].timestamp": "is required",
			"messages[0].data_type": "is required", "messages[0].data": "is required"}},
		{"6 minutes ahead", fmt.Sprintf(`{"timestamp":%q,"vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`, ts(6*time.Minute)),
			map[string]string{"messages[0].timestamp": "future"}},
		{"not ISO 8601", `{"timestamp":"23/11/2026 10:00","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].timestamp": "ISO 8601"}},
		{"no offset", `{"timestamp":"2026-11-23T10:00:00","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].timestamp": "ISO 8601"}},
		{"numeric timestamp", `{"timestamp":1700000000,"vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].timestamp": "string"}},
		{"long vehicle", fmt.Sprintf(`{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":%q,"data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`, long),
			map[string]string{"messages[0].vehicle_id": "200"}},
		{"empty vehicle", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"","data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].vehicle_id": "empty"}},
		{"numeric vehicle", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":12,"data_type":"fuel_system","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].vehicle_id": "string"}},
		{"unknown data type", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"weather","data":{"x":{"y":1}}}`,
			map[string]string{"messages[0].data_type": "one of"}},
		{"negative sequence", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","sequence":-1,"data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].sequence": "negative"}},
		{"fractional sequence", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","sequence":1.5,"data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].sequence": "integer"}},
		{"string sequence", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","sequence":"3","data":{"fuel_level":{"liters":5}}}`,
			map[string]string{"messages[0].sequence": "integer"}},
		{"data array", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":[1]}`,
			map[string]string{"messages[0].data": "object"}},
		{"data empty", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{}}`,
			map[string]string{"messages[0].data": "at least one group"}},
		{"group not object", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":5}}`,
			map[string]string{"messages[0].data.fuel_level": "object"}},
		{"null field", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":null}}}`,
			map[string]string{"messages[0].data.fuel_level.liters": "number"}},
		{"unknown top-level field", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}},"speed":3}`,
			map[string]string{"messages[0].speed": "unknown field"}},
		{"percent over 100", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":101}}}`,
			map[string]string{"messages[0].data.fuel_level.percentage": "0 to 100"}},
		{"negative percent", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"engine":{"load_percentage":-1}}}`,
			map[string]string{"messages[0].data.engine.load_percentage": "0 to 100"}},
		{"negative count", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"dtc_count":-2}}}`,
			map[string]string{"messages[0].data.status_codes.dtc_count": "integer"}},
		{"fractional count", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"electrical_system","data":{"battery":{"cycles":2.5}}}`,
			map[string]string{"messages[0].data.battery.cycles": "integer"}},
		{"code not string", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"pending_codes":["P0300",7]}}}`,
			map[string]string{"messages[0].data.status_codes.pending_codes": "element 1"}},
		{"empty code", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"pending_codes":[""]}}}`,
			map[string]string{"messages[0].data.status_codes.pending_codes": "element 0"}},
		{"long status", fmt.Sprintf(`{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"readiness_status":%q}}}`, long),
			map[string]string{"messages[0].data.status_codes.readiness_status": "100"}},
		{"huge number", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":1e400}}}`,
			map[string]string{"messages[0].data.fuel_level.liters": "number"}},
		{"free-form string", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"environmental","data":{"cabin":{"state":"ok"}}}`,
			map[string]string{"messages[0].data.cabin.state": "number"}},
		{"free-form bool", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"driver_behavior","data":{"flags":{"phone":true}}}`,
			map[string]string{"messages[0].data.flags.phone": "number"}},
		{"free-form nested", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"gps_enhanced","data":{"position":{"fix":{"lat":1}}}}`,
			map[string]string{"messages[0].data.position.fix": "number"}},
		{"free-form not group", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"maintenance_indicators","data":{"oil_life":35}}`,
			map[string]string{"messages[0].data.oil_life": "object"}},
		{"free-form bad group name", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"environmental","data":{"cabin.air":{"t":1}}}`,
			map[string]string{"messages[0].data.cabin.air": "group names"}},
		{"free-form bad field name", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"environmental","data":{"cabin":{"1t":1}}}`,
			map[string]string{"messages[0].data.cabin.1t": "field names"}},
		{"quality over 100", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}},"quality_indicators":{"signal_strength":101,"data_completeness":-1}}`,
			map[string]string{"messages[0].quality_indicators.signal_strength": "0 to 100", "messages[0].quality_indicators.data_completeness": "0 to 100"}},
		{"quality unknown", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}},"quality_indicators":{"gps":1}}`,
			map[string]string{"messages[0].quality_indicators.gps": "unknown field"}},
		{"quality not object", `{"timestamp":"2026-11-23T09:00:00Z","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"liters":5}},"quality_indicators":"good"}`,
			map[string]string{"messages[0].quality_indicators": "object"}},
	}
}()

func TestTelemetryValidation(t *testing.T) {
	for _, c := range telemetryCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, telemetry.Config{})
			_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{obj(t, c.msg)})
			published := len(f.bus.take())
			if c.want == nil {
				if err != nil || published != 1 {
					t.Fatalf("valid message: err %v, %d publish calls", err, published)
				}
				return
			}
			if published != 0 {
				t.Fatal("an invalid message was published")
			}
			ve := validation(t, err)
			if ve.Code != "validation_failed" {
				t.Errorf("code %s", ve.Code)
			}
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

func TestTelemetryBatchRules(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t, telemetry.Config{})
	good := message("v", "fuel_system", samples["fuel_system"])
	check := func(name string, msgs []map[string]any, code, path, part string) {
		t.Helper()
		_, err := f.svc.IngestTelemetry(ctx, "o", "test", msgs)
		ve := validation(t, err)
		if ve.Code != code || !strings.Contains(ve.Fields[path], part) {
			t.Errorf("%s: %s %v", name, ve.Code, ve.Fields)
		}
		if len(f.bus.take()) != 0 {
			t.Errorf("%s: published", name)
		}
	}
	check("nil", nil, "validation_failed", "messages", "required")
	check("empty", []map[string]any{}, "validation_failed", "messages", "at least one")
	big := make([]map[string]any, 1001)
	for i := range big {
		big[i] = obj(t, good)
	}
	check("1001", big, "batch_too_large", "messages", "at most 1000")
	// one bad message among good ones: nothing is published, only it is named
	mixed := []map[string]any{obj(t, good), nil, obj(t, good)}
	check("null element", mixed, "validation_failed", "messages[1]", "object")
	if _, err := f.svc.IngestTelemetry(ctx, "o", "test", big[:1000]); err != nil {
		t.Fatalf("1000 messages: %v", err)
	}
	calls := f.bus.take()
	if len(calls) != 1 || len(calls[0]) != 1000 {
		t.Fatalf("1000 messages went out in %d calls", len(calls))
	}
}

func TestErrorsAreCapped(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	msgs := make([]map[string]any, 1000)
	for i := range msgs {
		msgs[i] = map[string]any{}
	}
	_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", msgs)
	ve := validation(t, err)
	if len(ve.Fields) != telemetry.MaxErrors || ve.More != 4000-telemetry.MaxErrors {
		t.Fatalf("%d fields, %d more", len(ve.Fields), ve.More)
	}
}

func TestHostileKeysAreShortened(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	k := strings.Repeat("é", 5000)
	m := obj(t, message("v", "environmental", `{"cabin":{"t":1}}`))
	m[k] = 1
	_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{m})
	for p := range validation(t, err).Fields {
		if len(p) > 100 {
			t.Errorf("path of %d bytes", len(p))
		}
	}
}

// Go callers may pass Go numbers and string slices.
func TestGoValues(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	m := map[string]any{"timestamp": ts(0), "vehicle_id": "v", "data_type": "engine_diagnostics", "sequence": int64(4),
		"data": map[string]any{"engine": map[string]any{"rpm": 900}, "status_codes": map[string]any{"dtc_count": 1, "pending_codes": []string{"P0300"}}}}
	if _, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{m}); err != nil {
		t.Fatal(err)
	}
	tm := all(t, f.bus.take())[0].env.Telemetry
	if tm.Sequence != 4 || tm.Data["engine"].(map[string]any)["rpm"] != 900.0 {
		t.Fatalf("%+v", tm)
	}
}
