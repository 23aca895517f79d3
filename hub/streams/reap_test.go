package streams_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// clock is a test clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

type reapFixture struct {
	svc *streams.Service
	reg *streams.Registry
	log *embedlog.Log
	clk *clock
}

func newReapFixture(t *testing.T) *reapFixture {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	reg := streams.NewRegistry(streams.RegistryConfig{}, st, slog.New(slog.DiscardHandler))
	if err := reg.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	l := embedlog.New(embedlog.Config{})
	t.Cleanup(func() { l.Close() })
	clk := &clock{t: time.Now()}
	return &reapFixture{svc: streams.NewService(reg, st, l, streams.WithClock(clk.now)), reg: reg, log: l, clk: clk}
}

func (f *reapFixture) start(t *testing.T, kind, body string) string {
	t.Helper()
	s, err := f.svc.Start(context.Background(), "org", "live", kind, []byte(body))
	if err != nil {
		t.Fatalf("start %s: %v", body, err)
	}
	if _, err := f.log.Append(context.Background(), s.Entry.Rec.ID, [][]byte{[]byte(`{"n":1}`)}); err != nil {
		t.Fatal(err)
	}
	return s.Entry.Rec.ID
}

func (f *reapFixture) reap(t *testing.T) []string {
	t.Helper()
	ended, err := f.svc.ReapIdle(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return ended
}

// TestEphemeralStreamEndsWhenIdle: an ephemeral stream with no client
// ends after its idle timeout (stopped, reason idle, its log gone); one
// with a client connected does not, and neither does a stream that is not
// ephemeral.
func TestEphemeralStreamEndsWhenIdle(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	idle := f.start(t, hub.KindEvents, `{"ephemeral":true,"idle_timeout_seconds":60}`)
	held := f.start(t, hub.KindTelemetry, `{"ephemeral":true,"data_types":["gps_enhanced"]}`)
	kept := f.start(t, hub.KindEvents, `{}`)
	f.reg.Connected(held, 1) // a websocket or SSE client of this node

	if ended := f.reap(t); len(ended) != 0 {
		t.Fatalf("ended at once: %v", ended)
	}
	f.clk.add(59 * time.Second)
	if ended := f.reap(t); len(ended) != 0 {
		t.Fatalf("ended before the idle timeout: %v", ended)
	}
	f.clk.add(2 * time.Second)
	if ended := f.reap(t); len(ended) != 1 || ended[0] != idle {
		t.Fatalf("ended %v, want [%s]", ended, idle)
	}
	st, err := f.svc.Status(ctx, "org", "live", hub.KindEvents, idle)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entry.Rec.State != hub.StateStopped || st.Entry.Cfg.StopReason != streams.StopIdle {
		t.Fatalf("idle stream: state %s, reason %q", st.Entry.Rec.State, st.Entry.Cfg.StopReason)
	}
	if ents, _ := f.log.Read(ctx, idle, 1, 10); len(ents) != 0 {
		t.Fatalf("an ended ephemeral stream's log reads %d entries", len(ents))
	}

	// the client of the other stream leaves: it ends 300 s (the default)
	// after the last round that saw the client
	f.clk.add(time.Hour)
	if ended := f.reap(t); len(ended) != 0 {
		t.Fatalf("a stream with a client ended: %v", ended)
	}
	f.reg.Connected(held, -1)
	f.clk.add(299 * time.Second)
	if ended := f.reap(t); len(ended) != 0 {
		t.Fatalf("ended before its default idle timeout: %v", ended)
	}
	f.clk.add(time.Second)
	if ended := f.reap(t); len(ended) != 1 || ended[0] != held {
		t.Fatalf("ended %v, want [%s]", ended, held)
	}

	st, err = f.svc.Status(ctx, "org", "live", hub.KindEvents, kept)
	if err != nil {
		t.Fatal(err)
	}
	if st.Entry.Rec.State != hub.StateActive {
		t.Fatalf("a stream that is not ephemeral is %s", st.Entry.Rec.State)
	}
	if ents, _ := f.log.Read(ctx, kept, 1, 10); len(ents) != 1 {
		t.Fatalf("a stream that is not ephemeral reads %d entries, want 1", len(ents))
	}
}

// TestEphemeralStoppedByClientDropsLog: stopping an ephemeral stream
// deletes its log too; its status has no stop reason.
func TestEphemeralStoppedByClientDropsLog(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	id := f.start(t, hub.KindEvents, `{"ephemeral":true}`)
	e, err := f.svc.Stop(ctx, "org", "live", hub.KindEvents, id)
	if err != nil {
		t.Fatal(err)
	}
	if e.Cfg.StopReason != "" {
		t.Fatalf("stop reason %q", e.Cfg.StopReason)
	}
	if ents, _ := f.log.Read(ctx, id, 1, 10); len(ents) != 0 {
		t.Fatalf("a stopped ephemeral stream's log reads %d entries", len(ents))
	}
}

// TestEphemeralRefusals: webhook delivery, an idle timeout out of bounds
// or without ephemeral are refused by name.
func TestEphemeralRefusals(t *testing.T) {
	f := newReapFixture(t)
	for _, c := range []struct{ kind, body, field string }{
		{hub.KindEvents, `{"ephemeral":true,"stream_config":{"delivery_method":"webhook"},"webhook_url":"https://example.com/h"}`, "ephemeral"},
		{hub.KindTelemetry, `{"ephemeral":true,"delivery_method":"webhook","webhook_url":"https://example.com/h"}`, "ephemeral"},
		{hub.KindEvents, `{"idle_timeout_seconds":60}`, "idle_timeout_seconds"},
		{hub.KindEvents, `{"ephemeral":true,"idle_timeout_seconds":5}`, "idle_timeout_seconds"},
		{hub.KindTelemetry, `{"ephemeral":true,"idle_timeout_seconds":86401}`, "idle_timeout_seconds"},
	} {
		_, err := f.svc.Start(context.Background(), "org", "live", c.kind, []byte(c.body))
		var fe *streams.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v, want a field error on %s", c.body, err, c.field)
		}
	}
}

// TestLeftBehindStreamsBecomeEphemeral: streams started with exactly a
// given body become ephemeral once (and then end when idle); others are
// untouched.
func TestLeftBehindStreamsBecomeEphemeral(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	bodies := map[string]string{
		hub.KindEvents:    `{"stream_config":{"delivery_method":"websocket"}}`,
		hub.KindTelemetry: `{"data_types":["gps_enhanced"],"delivery_method":"websocket"}`,
	}
	ev := f.start(t, hub.KindEvents, bodies[hub.KindEvents])
	tel := f.start(t, hub.KindTelemetry, bodies[hub.KindTelemetry])
	other := f.start(t, hub.KindEvents, `{"stream_config":{"delivery_method":"websocket"},"fleet_id":"north"}`)
	changed, err := f.svc.MakeEphemeral(ctx, bodies)
	if err != nil || len(changed) != 2 {
		t.Fatalf("changed %v (%v), want %s and %s", changed, err, ev, tel)
	}
	if again, err := f.svc.MakeEphemeral(ctx, bodies); err != nil || len(again) != 0 {
		t.Fatalf("a second call changed %v (%v)", again, err)
	}
	if ended := f.reap(t); len(ended) != 0 { // the reaper's first round: idle from now
		t.Fatalf("ended at once: %v", ended)
	}
	f.clk.add(streams.DefaultIdleTimeout)
	ended := f.reap(t)
	if len(ended) != 2 {
		t.Fatalf("ended %v, want %s and %s", ended, ev, tel)
	}
	st, err := f.svc.Status(ctx, "org", "live", hub.KindEvents, other)
	if err != nil || st.Entry.Rec.State != hub.StateActive {
		t.Fatalf("another stream: %v %v", st.Entry, err)
	}
}
