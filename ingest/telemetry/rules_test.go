package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

// send ingests messages for org o and returns the events published with
// them (one Publish call expected).
func (f *fixture) send(t *testing.T, msgs ...string) []*event.Event {
	t.Helper()
	list := make([]map[string]any, len(msgs))
	for i, m := range msgs {
		list[i] = obj(t, m)
	}
	if _, err := f.svc.IngestTelemetry(context.Background(), "o", "test", list); err != nil {
		t.Fatalf("ingest: %v", err)
	}
	calls := f.bus.take()
	if len(calls) != 1 {
		t.Fatalf("%d publish calls, want 1", len(calls))
	}
	return events(all(t, calls), "")
}

func types(evs []*event.Event) string {
	s := ""
	for _, e := range evs {
		if s != "" {
			s += ","
		}
		s += e.EventType
	}
	return s
}

func TestDTCRise(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	if evs := f.send(t, diag("v1", -10*time.Second, 1, false, 90, "P0301")); len(evs) != 0 {
		t.Fatalf("first message raised %s", types(evs))
	}
	evs := f.send(t, diag("v1", -5*time.Second, 3, false, 90, "P0301", "P0420", "P0171"))
	if len(evs) != 1 {
		t.Fatalf("dtc rise raised %q", types(evs))
	}
	e := evs[0]
	if e.EventType != "diagnostic_alert" || e.Category != "maintenance_events" || e.Severity != "high" || e.Priority != "normal" ||
		e.Source.VehicleID != "v1" || e.Metadata.CorrelationID != "v1" || e.Metadata.SourceSystem != "fleethub.rules" ||
		!evtID.MatchString(e.EventID) || !e.Timestamp.Equal(t0.Add(-5*time.Second)) || e.Metadata.ProcessingTime == "" {
		t.Errorf("event %+v", e)
	}
	d := e.EventData
	if fmt.Sprint(d["previous_dtc_count"]) != "1" || fmt.Sprint(d["current_dtc_count"]) != "3" ||
		fmt.Sprint(d["pending_codes"]) != "[P0301 P0420 P0171]" || fmt.Sprint(d["new_codes"]) != "[P0420 P0171]" {
		t.Errorf("event_data %v", d)
	}
	if e.Recommendations == nil {
		t.Error("no recommendations")
	}
	for _, c := range []struct {
		dtc  int
		want string
	}{{3, ""}, {2, ""}, {2, ""}, {4, "diagnostic_alert"}, {0, ""}, {1, "diagnostic_alert"}} {
		if got := types(f.send(t, diag("v1", 0, c.dtc, false, 90))); got != c.want {
			t.Errorf("dtc %d: raised %q, want %q", c.dtc, got, c.want)
		}
	}
}

// The generated event goes out in the same Publish call as the telemetry,
// on the events topic, keyed by the vehicle.
func TestRuleEventsShareThePublish(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	list := []map[string]any{obj(t, diag("v1", -2*time.Second, 0, false, 90)), obj(t, diag("v1", -time.Second, 2, false, 90))}
	res, err := f.svc.IngestTelemetry(context.Background(), "o", "test", list)
	if err != nil {
		t.Fatal(err)
	}
	calls := f.bus.take()
	if len(calls) != 1 || len(calls[0]) != 3 {
		t.Fatalf("calls %d", len(calls))
	}
	ev := calls[0][2]
	if ev.Topic != hub.TopicEvents || string(ev.Key) != "v1" {
		t.Errorf("event message %s %s", ev.Topic, ev.Key)
	}
	if len(res.Generated) != 1 {
		t.Errorf("result lists %d generated events", len(res.Generated))
	}
}

// Within one request the rules see each vehicle's messages in timestamp
// order; a message older than the newest one seen is late and skipped.
func TestRulesOrder(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	evs := f.send(t, diag("v1", -1*time.Second, 3, false, 90), diag("v1", -3*time.Second, 1, false, 90))
	if types(evs) != "diagnostic_alert" || fmt.Sprint(evs[0].EventData["previous_dtc_count"]) != "1" {
		t.Fatalf("unsorted batch: %q", types(evs))
	}
	if evs := f.send(t, diag("v1", -2*time.Second, 9, false, 90)); len(evs) != 0 {
		t.Fatalf("late message raised %q", types(evs))
	}
	if evs := f.send(t, diag("v1", 0, 4, false, 90)); types(evs) != "diagnostic_alert" || fmt.Sprint(evs[0].EventData["previous_dtc_count"]) != "3" {
		t.Fatalf("after a late message: %q", types(evs))
	}
}

func TestCheckEngineLight(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	for i, c := range []struct {
		mil  bool
		want string
	}{{false, ""}, {true, "diagnostic_alert"}, {true, ""}, {false, ""}, {true, "diagnostic_alert"}} {
		evs := f.send(t, diag("v1", time.Duration(i-10)*time.Second, 0, c.mil, 90))
		if types(evs) != c.want {
			t.Fatalf("step %d (mil %v): %q, want %q", i, c.mil, types(evs), c.want)
		}
		if c.want != "" && (evs[0].EventData["message"] != "check engine light" || evs[0].Severity != "high") {
			t.Errorf("mil event %+v", evs[0])
		}
		// a maintenance event: recommendations and predictive_indicators
		if c.want == "" {
			continue
		}
		if e := evs[0]; e.Recommendations == nil || len(e.PredictiveIndicators) != 2 || e.PredictiveIndicators["mil_on"] != true ||
			fmt.Sprint(e.PredictiveIndicators["dtc_count"]) != "0" {
			t.Errorf("mil event recommendations %v, predictive_indicators %v, want mil_on true and dtc_count 0", e.Recommendations, e.PredictiveIndicators)
		}
	}
	// a vehicle first heard with the light on is reported
	if types(f.send(t, diag("v2", 0, 0, true, 90))) != "diagnostic_alert" {
		t.Error("first message with the light on")
	}
}

func TestOverheating(t *testing.T) {
	for _, c := range []struct {
		cfg   telemetry.Config
		temps []float64
		want  []bool
	}{
		{telemetry.Config{}, []float64{105, 110, 111, 115, 106, 112, 104, 110.5, 150}, []bool{false, false, true, false, false, false, false, true, false}},
		{telemetry.Config{CoolantLimit: 100, CoolantHysteresis: 10}, []float64{101, 95, 101, 89, 100.1}, []bool{true, false, false, false, true}},
	} {
		f := newFixture(t, c.cfg)
		for i, temp := range c.temps {
			evs := f.send(t, diag("v1", time.Duration(i-20)*time.Second, 0, false, temp))
			if got := len(evs) == 1; got != c.want[i] {
				t.Fatalf("limit %v, step %d (%v °C): raised %q", c.cfg.CoolantLimit, i, temp, types(evs))
			}
			if c.want[i] {
				e := evs[0]
				if e.EventType != "engine_overheating" || e.Severity != "critical" || e.Priority != "urgent" || e.Category != "maintenance_events" ||
					e.EventData["coolant_temp"] != temp {
					t.Errorf("event %+v", e)
				}
			}
		}
	}
}

// Rule state is per organization, environment and vehicle.
func TestRuleStateIsScoped(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	ctx := context.Background()
	for _, sc := range [][2]string{{"o", "test"}, {"o", "live"}, {"p", "test"}} {
		if _, err := f.svc.IngestTelemetry(ctx, sc[0], sc[1], []map[string]any{obj(t, diag("v1", -time.Second, 1, false, 90))}); err != nil {
			t.Fatal(err)
		}
	}
	f.bus.take()
	if _, err := f.svc.IngestTelemetry(ctx, "p", "live", []map[string]any{obj(t, diag("v1", 0, 5, false, 90))}); err != nil {
		t.Fatal(err)
	}
	if evs := events(all(t, f.bus.take()), ""); len(evs) != 0 {
		t.Fatalf("another scope's baseline was used: %q", types(evs))
	}
}

// A request the bus refused leaves no trace: its retry raises the alert.
func TestRollbackOnPublishFailure(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	f.send(t, diag("v1", -3*time.Second, 1, false, 90))
	f.bus.setFail(errDown)
	_, err := f.svc.IngestTelemetry(context.Background(), "o", "test", []map[string]any{obj(t, diag("v1", -2*time.Second, 4, true, 120))})
	if !errors.Is(err, telemetry.ErrUnavailable) || !errors.Is(err, errDown) {
		t.Fatalf("err %v", err)
	}
	f.bus.setFail(nil)
	if got := types(f.send(t, diag("v1", -2*time.Second, 4, true, 120))); got != "diagnostic_alert,diagnostic_alert,engine_overheating" {
		t.Fatalf("retry raised %q", got)
	}
}

// State is bounded: a forgotten vehicle starts a new baseline.
func TestVehicleStateIsBounded(t *testing.T) {
	f := newFixture(t, telemetry.Config{Vehicles: 2})
	f.send(t, diag("v1", -9*time.Second, 1, false, 90))
	f.send(t, diag("v2", -9*time.Second, 1, false, 90))
	f.send(t, diag("v3", -9*time.Second, 1, false, 90)) // evicts v1
	if evs := f.send(t, diag("v1", -5*time.Second, 5, false, 90)); len(evs) != 0 {
		t.Fatalf("evicted vehicle raised %q", types(evs))
	}
	if evs := f.send(t, diag("v3", -5*time.Second, 5, false, 90)); types(evs) != "diagnostic_alert" {
		t.Fatalf("kept vehicle raised %q", types(evs))
	}
}

// Other data types do not feed the diagnostics rules.
func TestRulesReadOnlyEngineDiagnostics(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	f.send(t, diag("v1", -9*time.Second, 1, false, 90))
	if evs := f.send(t, message("v1", "environmental", `{"engine":{"coolant_temp":130}}`)); len(evs) != 0 {
		t.Fatalf("environmental data raised %q", types(evs))
	}
}

// A failed request that touched many vehicles, each more than once,
// leaves every one of them as it was: the retry raises what a first try
// raises.
func TestRollbackOfManyVehicles(t *testing.T) {
	request := func() []string {
		var msgs []string
		for round, codes := range []int{3, 5} {
			for v := range 12 {
				msgs = append(msgs, diag(fmt.Sprintf("v%d", v), time.Duration(round-3)*time.Second, codes, false, 90))
			}
		}
		return msgs
	}
	baseline := func(f *fixture) {
		for v := range 12 {
			f.send(t, diag(fmt.Sprintf("v%d", v), -5*time.Second, 1, false, 90))
		}
	}
	clean := newFixture(t, telemetry.Config{})
	baseline(clean)
	want := types(clean.send(t, request()...))
	if want == "" {
		t.Fatal("the request raises nothing: the test shows nothing")
	}

	f := newFixture(t, telemetry.Config{})
	baseline(f)
	f.bus.setFail(errDown)
	list := make([]map[string]any, 0, 24)
	for _, m := range request() {
		list = append(list, obj(t, m))
	}
	if _, err := f.svc.IngestTelemetry(context.Background(), "o", "test", list); !errors.Is(err, errDown) {
		t.Fatalf("err %v", err)
	}
	f.bus.setFail(nil)
	if got := types(f.send(t, request()...)); got != want {
		t.Fatalf("retry raised %q, a first try %q", got, want)
	}
}
