package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

const waitLimit = 10 * time.Second

// fixture is a stream registry on SQLite, an in-memory stream log and a
// sink that can be made to fail.
type fixture struct {
	t      testing.TB
	st     *sqlite.Store
	svc    *streams.Service
	reg    *streams.Registry
	log    *embedlog.Log
	sink   *flakySink
	logger *slog.Logger
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	logger := slog.New(slog.DiscardHandler)
	reg := streams.NewRegistry(streams.RegistryConfig{}, st, logger)
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := embedlog.New(embedlog.Config{})
	return &fixture{t: t, st: st, svc: streams.NewService(reg, st, l), reg: reg, log: l, sink: &flakySink{got: map[string][]hub.Entry{}}, logger: logger}
}

// start starts a stream of a tenant from a JSON start body; it returns
// the stream id.
func (f *fixture) start(org, env, kind, body string) string {
	f.t.Helper()
	s, err := f.svc.Start(context.Background(), org, env, kind, []byte(body))
	if err != nil {
		f.t.Fatalf("start %s stream %s: %v", kind, body, err)
	}
	return s.Entry.Rec.ID
}

// eachWindow runs a test with each kind of dedup window a pipeline
// meets, a new one of the kind from each call of window: a Local, which
// stands for a window shared by nodes (claims, recorded after the
// hand-off), and a Compact, a window of this process alone
// (dedup.Private: recorded as they are claimed).
func eachWindow(t *testing.T, test func(t *testing.T, window func() dedup.Window)) {
	t.Run("window=shared", func(t *testing.T) {
		test(t, func() dedup.Window { return dedup.NewLocal(1000, time.Hour) })
	})
	t.Run("window=private", func(t *testing.T) {
		test(t, func() dedup.Window { return dedup.NewCompact(1000, time.Hour) })
	})
}

// pipeline makes a pipeline over the fixture with its own window.
func (f *fixture) pipeline(bus hub.Bus, w dedup.Window) *Pipeline {
	if w == nil {
		w = dedup.NewLocal(1000, time.Hour)
	}
	return New(Config{}, bus, f.reg, f.log, w, nil, f.sink, f.logger)
}

// logged returns the messages of a stream's log, decoded.
func (f *fixture) logged(id string) []map[string]any {
	f.t.Helper()
	ents, err := f.log.Read(context.Background(), id, 1, 100_000)
	if err != nil {
		f.t.Fatal(err)
	}
	return decode(f.t, ents)
}

func decode(t testing.TB, ents []hub.Entry) []map[string]any {
	t.Helper()
	out := make([]map[string]any, len(ents))
	for i, e := range ents {
		if err := json.Unmarshal(e.Data, &out[i]); err != nil {
			t.Fatalf("entry %d: %v", e.Offset, err)
		}
	}
	return out
}

// flakySink is a webhook queue that refuses the next failures Accepts.
type flakySink struct {
	mu       sync.Mutex
	failures int
	failed   int
	got      map[string][]hub.Entry // per stream, in order
	changed  chan struct{}          // closed and replaced when got grows
	// gate, when set, makes Accept announce itself on entered and wait
	// for gate to close.
	gate, entered chan struct{}
}

var errQueueDown = errors.New("delivery queue unavailable")

func (s *flakySink) failNext(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = n
}

func (s *flakySink) Accept(_ context.Context, info hub.StreamInfo, ents []hub.Entry) error {
	s.mu.Lock()
	gate, entered := s.gate, s.entered
	s.gate, s.entered = nil, nil
	s.mu.Unlock()
	if gate != nil {
		close(entered)
		<-gate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failures > 0 {
		s.failures--
		s.failed++
		return errQueueDown
	}
	s.got[info.ID] = append(s.got[info.ID], ents...)
	if s.changed != nil {
		close(s.changed)
		s.changed = nil
	}
	return nil
}

// accepted returns what the sink took for a stream, decoded.
func (s *flakySink) accepted(t testing.TB, id string) []map[string]any {
	s.mu.Lock()
	ents := append([]hub.Entry(nil), s.got[id]...)
	s.mu.Unlock()
	return decode(t, ents)
}

// await waits until ok holds for what the sink took.
func (s *flakySink) await(t testing.TB, what string, ok func() bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		if ok() {
			s.mu.Unlock()
			return
		}
		if s.changed == nil {
			s.changed = make(chan struct{})
		}
		ch := s.changed
		s.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// msg encodes an envelope as a bus message of partition 0.
func msg(t testing.TB, topic string, offset int64, env *event.Envelope) hub.Message {
	t.Helper()
	b, err := event.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	return hub.Message{Topic: topic, Partition: 0, Offset: offset, Value: b}
}

var t0 = time.Date(2025, 3, 3, 10, 0, 0, 0, time.UTC)

// anEvent is a safety event of a tenant.
func anEvent(org, env, id, vehicle string, seq int64) *event.Envelope {
	return &event.Envelope{Org: org, Env: env, Kind: event.KindEvent, IngestedAt: t0, Event: &event.Event{
		EventID: id, EventType: "harsh_braking", Category: event.CategorySafety, Timestamp: t0.Add(time.Duration(seq) * time.Second),
		Severity: "high", Priority: "normal", Source: event.Source{VehicleID: vehicle},
		Metadata: event.Metadata{SequenceNumber: seq}}}
}

// aTelemetry is an engine reading of a tenant.
func aTelemetry(org, env, vehicle string, seq int64) *event.Envelope {
	return &event.Envelope{Org: org, Env: env, Kind: event.KindTelemetry, IngestedAt: t0, Telemetry: &event.Telemetry{
		Timestamp: t0.Add(time.Duration(seq) * time.Second), VehicleID: vehicle, DataType: "engine_diagnostics", Sequence: seq,
		Data: map[string]any{"rpm": 1500 + seq}}}
}

// eventIDs lists the event_id of decoded messages.
func eventIDs(ms []map[string]any) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i], _ = m["event_id"].(string)
	}
	return out
}

// sequences lists the metadata.sequence_number of decoded events.
func sequences(ms []map[string]any) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		md, _ := m["metadata"].(map[string]any)
		n, _ := md["sequence_number"].(float64)
		out[i] = int64(n)
	}
	return out
}

// counts maps each value to how often it occurs.
func counts[T comparable](vs []T) map[T]int {
	out := map[T]int{}
	for _, v := range vs {
		out[v]++
	}
	return out
}

func webhookEvents(rules string) string {
	return fmt.Sprintf(`{"stream_config": {"delivery_method": "webhook"}, "webhook_url": "https://hooks.example.com/in", "processing_rules": %s}`, rules)
}
