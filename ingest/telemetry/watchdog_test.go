package telemetry_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

func (f *fixture) check(t *testing.T, at time.Duration) string {
	t.Helper()
	f.clk.set(t0.Add(at))
	if err := f.svc.Check(context.Background()); err != nil {
		t.Fatalf("check: %v", err)
	}
	calls := f.bus.take()
	if len(calls) > 1 {
		t.Fatalf("check published in %d calls", len(calls))
	}
	s := ""
	for _, m := range all(t, calls) {
		if m.Topic != hub.TopicEvents {
			t.Errorf("watchdog published on %s", m.Topic)
		}
		e := m.env.Event
		if s != "" {
			s += ","
		}
		s += e.EventType + ":" + e.Source.VehicleID + "@" + m.env.Org
	}
	return s
}

func TestWatchdog(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	f.clk.set(t0.Add(time.Minute))
	f.send(t, message("v2", "gps_enhanced", samples["gps_enhanced"]))
	if got := f.check(t, 4*time.Minute); got != "" {
		t.Fatalf("at 4 min: %s", got)
	}
	if got := f.check(t, 5*time.Minute); got != "device_offline:v1@o" {
		t.Fatalf("at 5 min: %q", got)
	}
	if got := f.check(t, 5*time.Minute+10*time.Second); got != "" {
		t.Fatalf("raised twice: %q", got)
	}
	if got := f.check(t, 6*time.Minute); got != "device_offline:v2@o" {
		t.Fatalf("at 6 min: %q", got)
	}
	// v1 speaks again: device_online goes out with its telemetry
	f.clk.set(t0.Add(7 * time.Minute))
	evs := f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	if types(evs) != "device_online" {
		t.Fatalf("back online: %q", types(evs))
	}
	on := evs[0]
	if on.Category != "system_events" || on.Source.VehicleID != "v1" || on.Metadata.SourceSystem != "fleethub.watchdog" ||
		on.EventData["offline_seconds"] != 420.0 || on.EventData["last_seen"] != t0.Format(time.RFC3339Nano) {
		t.Errorf("device_online %+v", on)
	}
	if got := f.check(t, 11*time.Minute); got != "" {
		t.Fatalf("at 11 min: %q", got)
	}
	if got := f.check(t, 12*time.Minute); got != "device_offline:v1@o" {
		t.Fatalf("second silence: %q", got)
	}
}

func TestWatchdogEventFields(t *testing.T) {
	f := newFixture(t, telemetry.Config{SilenceAfter: time.Minute})
	f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	f.clk.set(t0.Add(90 * time.Second))
	if err := f.svc.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms := all(t, f.bus.take())
	if len(ms) != 1 {
		t.Fatalf("%d messages", len(ms))
	}
	env := ms[0].env
	e := env.Event
	if env.Org != "o" || env.Env != "test" || string(ms[0].Key) != "v1" || e.EventType != "device_offline" || e.Category != "system_events" ||
		e.Severity != "medium" || e.Priority != "normal" || !e.Timestamp.Equal(t0.Add(90*time.Second)) || e.Metadata.CorrelationID != "v1" ||
		e.EventData["silent_seconds"] != 90.0 || e.EventData["silence_after_seconds"] != 60.0 || !evtID.MatchString(e.EventID) {
		t.Fatalf("device_offline %+v %+v", env, e)
	}
}

// Events count as speaking when they name a vehicle.
func TestWatchdogHearsEvents(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	ev := `[{"event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"v9"}},
		{"event_type":"login","category":"driver_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"driver_id":"d9"}}]`
	if _, err := f.svc.IngestEvents(context.Background(), "o", "test", objs(t, ev)); err != nil {
		t.Fatal(err)
	}
	f.bus.take()
	if got := f.check(t, 5*time.Minute); got != "device_offline:v9@o" {
		t.Fatalf("%q", got)
	}
	f.clk.set(t0.Add(6 * time.Minute))
	if _, err := f.svc.IngestEvents(context.Background(), "o", "test", objs(t, ev)); err != nil {
		t.Fatal(err)
	}
	ms := all(t, f.bus.take())
	if len(ms) != 3 || ms[0].env.Event.EventType != "device_online" {
		t.Fatalf("device_online should lead the request's events: %d messages", len(ms))
	}
}

func TestWatchdogRetriesAfterPublishFailure(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	f.bus.setFail(errDown)
	f.clk.set(t0.Add(5 * time.Minute))
	if err := f.svc.Check(context.Background()); !errors.Is(err, telemetry.ErrUnavailable) {
		t.Fatalf("check on a broken bus: %v", err)
	}
	f.bus.setFail(nil)
	if got := f.check(t, 5*time.Minute+10*time.Second); got != "device_offline:v1@o" {
		t.Fatalf("retry: %q", got)
	}
}

func TestWatchdogManyVehicles(t *testing.T) {
	f := newFixture(t, telemetry.Config{})
	var list []map[string]any
	for i := range 300 {
		list = append(list, obj(t, message(fmt.Sprintf("v%d", i), "gps_enhanced", samples["gps_enhanced"])))
	}
	if _, err := f.svc.IngestTelemetry(context.Background(), "o", "test", list); err != nil {
		t.Fatal(err)
	}
	f.bus.take()
	f.clk.set(t0.Add(10 * time.Minute))
	if err := f.svc.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	calls := f.bus.take()
	if len(calls) != 1 || len(calls[0]) != 300 {
		t.Fatalf("300 silent vehicles: %d calls", len(calls))
	}
}

// Run checks on its ticker and stops with its context.
func TestRun(t *testing.T) {
	f := newFixture(t, telemetry.Config{CheckEvery: 2 * time.Millisecond})
	f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.svc.Run(ctx) }()
	f.clk.set(t0.Add(time.Hour))
	deadline := time.After(5 * time.Second)
	var got []string
	for len(got) == 0 {
		select {
		case <-deadline:
			t.Fatal("Run raised nothing")
		case <-time.After(5 * time.Millisecond):
		}
		for _, e := range events(all(t, f.bus.take()), "device_offline") {
			got = append(got, e.Source.VehicleID)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not stop")
	}
	if len(got) != 1 || got[0] != "v1" {
		t.Fatalf("raised %v", got)
	}
}

// The watchdog's events are the hub's own statements: their timestamp
// is the time of the check (or of the message that ended the silence),
// UTC to the millisecond as every time the service states, not carrying
// the clock's nanoseconds.
func TestWatchdogEventTimesToTheMillisecond(t *testing.T) {
	f := newFixture(t, telemetry.Config{SilenceAfter: time.Minute})
	f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	f.clk.set(t0.Add(90*time.Second + 123456789*time.Nanosecond))
	if err := f.svc.Check(context.Background()); err != nil {
		t.Fatal(err)
	}
	ms := all(t, f.bus.take())
	if len(ms) != 1 {
		t.Fatalf("%d messages", len(ms))
	}
	off := ms[0].env.Event
	if want := t0.Add(90*time.Second + 123*time.Millisecond); !off.Timestamp.Equal(want) || off.Timestamp.Format(time.RFC3339Nano) != want.Format(time.RFC3339Nano) {
		t.Errorf("device_offline timestamp %s, want %s", off.Timestamp.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
	f.clk.set(t0.Add(3*time.Minute + 987654321*time.Nanosecond))
	evs := f.send(t, message("v1", "gps_enhanced", samples["gps_enhanced"]))
	if types(evs) != "device_online" {
		t.Fatalf("back online: %q", types(evs))
	}
	if want := t0.Add(3*time.Minute + 987*time.Millisecond); !evs[0].Timestamp.Equal(want) || evs[0].Timestamp.Format(time.RFC3339Nano) != want.Format(time.RFC3339Nano) {
		t.Errorf("device_online timestamp %s, want %s", evs[0].Timestamp.Format(time.RFC3339Nano), want.Format(time.RFC3339Nano))
	}
}
