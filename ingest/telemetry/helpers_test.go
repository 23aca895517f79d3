package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

// t0 is the fake clock's start.
var t0 = time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)

// clock is a settable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// bus records Publish calls; fail makes the next calls fail.
type bus struct {
	mu    sync.Mutex
	calls [][]hub.Message
	fail  error
}

var errDown = errors.New("bus down")

func (b *bus) Publish(ctx context.Context, msgs ...hub.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail != nil {
		return b.fail
	}
	b.calls = append(b.calls, append([]hub.Message(nil), msgs...))
	return nil
}

func (b *bus) setFail(err error) {
	b.mu.Lock()
	b.fail = err
	b.mu.Unlock()
}

// take returns and forgets the recorded calls.
func (b *bus) take() [][]hub.Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	c := b.calls
	b.calls = nil
	return c
}

// decoded is one published message.
type decoded struct {
	hub.Message
	env *event.Envelope
}

// all flattens calls and decodes every envelope.
func all(t *testing.T, calls [][]hub.Message) []decoded {
	t.Helper()
	var out []decoded
	for _, c := range calls {
		for _, m := range c {
			env, err := event.Unmarshal(m.Value)
			if err != nil {
				t.Fatalf("published message does not decode: %v", err)
			}
			out = append(out, decoded{m, env})
		}
	}
	return out
}

// events returns the published events of type typ.
func events(ms []decoded, typ string) []*event.Event {
	var out []*event.Event
	for _, m := range ms {
		if m.env.Event != nil && (typ == "" || m.env.Event.EventType == typ) {
			out = append(out, m.env.Event)
		}
	}
	return out
}

type fixture struct {
	svc *telemetry.Service
	bus *bus
	clk *clock
}

func newFixture(t testing.TB, cfg telemetry.Config) *fixture {
	t.Helper()
	f := &fixture{bus: &bus{}, clk: &clock{now: t0}}
	cfg.Now = f.clk.Now
	svc, err := telemetry.New(cfg, f.bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.svc = svc
	return f
}

// obj decodes JSON as the API does (numbers as json.Number).
func obj(t testing.TB, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

// objs decodes a JSON array of objects.
func objs(t testing.TB, s string) []map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var m []map[string]any
	if err := dec.Decode(&m); err != nil {
		t.Fatalf("bad test JSON %s: %v", s, err)
	}
	return m
}

func ts(d time.Duration) string { return t0.Add(d).Format(time.RFC3339Nano) }

// diag is an engine_diagnostics message.
func diag(vehicle string, at time.Duration, dtc int, mil bool, coolant float64, codes ...string) string {
	c, _ := json.Marshal(codes)
	if codes == nil {
		c = []byte("[]")
	}
	return fmt.Sprintf(`{"timestamp":%q,"vehicle_id":%q,"data_type":"engine_diagnostics","sequence":%d,
		"data":{"engine":{"rpm":1800,"coolant_temp":%v},"status_codes":{"dtc_count":%d,"mil_status":%v,"pending_codes":%s}}}`,
		ts(at), vehicle, 1000+int(at/time.Second), coolant, dtc, mil, c)
}

func validation(t *testing.T, err error) *telemetry.ValidationError {
	t.Helper()
	var ve *telemetry.ValidationError
	if !errors.As(err, &ve) {
		t.Fatalf("want a *ValidationError, got %v", err)
	}
	return ve
}
