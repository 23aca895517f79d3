package emergency_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/postgres"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// nodeStore is one node's connection to a shared store: closed when the
// node stops (once), and able to crash: with failAlerts set, writing an
// alert fails (the node stops after sending a level, before recording it
// in the alert); with failRecords set, recording a gateway attempt fails
// (the node stops after the gateway answered, before the queue knows).
type nodeStore struct {
	store.Backend
	once        sync.Once
	failAlerts  atomic.Bool
	failRecords atomic.Bool
}

var errCrashed = errors.New("the node stopped")

func (s *nodeStore) Close() error {
	var err error
	s.once.Do(func() { err = s.Backend.Close() })
	return err
}

func (s *nodeStore) UpdateAlert(ctx context.Context, a store.Alert, prev int64) error {
	if s.failAlerts.Load() {
		return errCrashed
	}
	return s.Backend.UpdateAlert(ctx, a, prev)
}

func (s *nodeStore) RecordNotification(ctx context.Context, owner string, n store.Notification) error {
	if s.failRecords.Load() {
		return errCrashed
	}
	return s.Backend.RecordNotification(ctx, owner, n)
}

// sharedStore opens nodes' connections to one store: the SQLite file in
// a directory, or one PostgreSQL schema.
type sharedStore func(t *testing.T) *nodeStore

func eachShared(t *testing.T, fn func(t *testing.T, open sharedStore)) {
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		fn(t, func(t *testing.T) *nodeStore {
			s, err := sqlite.Open(t.Context(), sqlite.Config{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			ns := &nodeStore{Backend: s}
			t.Cleanup(func() { ns.Close() })
			return ns
		})
	})
	t.Run("postgresql", func(t *testing.T) {
		testdb.URL(t)
		url := testdb.Schema(t)
		fn(t, func(t *testing.T) *nodeStore {
			s, err := postgres.Open(t.Context(), postgres.Config{URL: url, MaxConns: 4})
			if err != nil {
				t.Fatal(err)
			}
			ns := &nodeStore{Backend: s}
			t.Cleanup(func() { ns.Close() })
			return ns
		})
	})
}

// node is a running node: its API, its scheduler's loop and its store.
type node struct {
	*fixture
	ns     *nodeStore
	cancel context.CancelFunc
	ran    chan error
}

// startNode starts a node over ns whose gateway notifications are queued.
// With loops, its scheduler and queue run (Run) as the server runs them;
// else the test drives them (Tick), so that it knows when they are done.
func startNode(t *testing.T, ns *nodeStore, gw *flakyGateway, name string, clk *clock, loops bool) *node {
	t.Helper()
	f := startWith(t, ns, gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now, Node: name}}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now, Node: name}})
	ctx, cancel := context.WithCancel(t.Context())
	n := &node{fixture: f, ns: ns, cancel: cancel, ran: make(chan error, 2)}
	if loops {
		go func() { n.ran <- f.alerts.Run(ctx) }()
		go func() { n.ran <- f.outbox.Run(ctx) }()
	} else {
		n.ran <- nil
		n.ran <- nil
	}
	t.Cleanup(n.stop)
	return n
}

// stop stops the node: its loops (waiting for them to return), its API
// and its store.
func (n *node) stop() {
	if n.cancel == nil {
		return
	}
	n.cancel()
	n.cancel = nil
	for range 2 {
		if err := <-n.ran; err != nil {
			n.t.Errorf("Run: %v", err)
		}
	}
	n.shutdown()
	if err := n.ns.Close(); err != nil {
		n.t.Errorf("close: %v", err)
	}
}

// levelSent answers "channel recipient to level" of the escalation
// requests the gateway received for an alert, sorted, one per request.
func (g *flakyGateway) levelSent(id string) []string {
	var out []string
	for _, r := range g.requests() {
		if r.n.AlertID == id && r.n.Level > 0 {
			out = append(out, fmt.Sprintf("%s %s %s %d", r.n.Channel, r.n.Recipient, r.n.To, r.n.Level))
		}
	}
	slices.Sort(out)
	return out
}

// levelRequests answers the escalation requests of an alert.
func (g *flakyGateway) levelRequests(id string) []signedRequest {
	var out []signedRequest
	for _, r := range g.requests() {
		if r.n.AlertID == id && r.n.Level > 0 {
			out = append(out, r)
		}
	}
	return out
}

// levelRecord answers an alert's record of one escalation level, as GET
// answers it.
func (f *fixture) levelRecord(id string, level int) map[string]any {
	f.t.Helper()
	code, al := f.do("GET", "/v1/emergency/alerts/"+id, nil)
	if code != 200 {
		f.t.Fatalf("alert: %d %v", code, al)
	}
	levels, _ := al["escalation_status"].(map[string]any)["levels"].([]any)
	for _, l := range levels {
		if l := l.(map[string]any); l["level"] == float64(level) {
			return l
		}
	}
	f.t.Fatalf("level %d not recorded: %v", level, al["escalation_status"])
	return nil
}

// TestEscalationAfterStop stops the node that created an alert (its
// scheduler, its API and its store) before the first level is due; a
// node started afterwards on the same store sends the level at its due
// time, once.
func TestEscalationAfterStop(t *testing.T) {
	eachShared(t, func(t *testing.T, open sharedStore) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &flakyGateway{tries: map[string]int{}}
		a := startNode(t, open(t), gw, "a", clk, true)
		sup := a.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550004001"}})
		a.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "dee@example.com"}})
		code, al := a.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)
		clk.set(t0.Add(5*time.Minute - time.Second))
		a.tick()
		a.stop()
		if got := gw.levelSent(id); len(got) != 0 {
			t.Fatalf("sent before the level was due: %v", got)
		}

		clk2 := &clock{t: t0.Add(5*time.Minute - time.Second)}
		b := startNode(t, open(t), gw, "b", clk2, false)
		b.tick()
		if got := gw.levelSent(id); len(got) != 0 {
			t.Fatalf("the new node sent before the level was due: %v", got)
		}
		clk2.set(t0.Add(5 * time.Minute))
		b.tick()
		want := []string{"sms " + sup + " +15550004001 1"}
		if got := gw.levelSent(id); !slices.Equal(got, want) {
			t.Fatalf("at the level's due time: %v, want %v", got, want)
		}
		b.tick()
		b.outbox.Tick(t.Context())
		if got := gw.levelSent(id); !slices.Equal(got, want) {
			t.Errorf("sent again: %v, want %v", got, want)
		}
		l := b.levelRecord(id, 1)
		due := t0.Add(5 * time.Minute).Format(time.RFC3339)
		if l["due_at"] != due || l["triggered_at"] != due {
			t.Errorf("level 1 due %v, triggered %v, want %s", l["due_at"], l["triggered_at"], due)
		}
		n := l["notified"].([]any)
		if len(n) != 1 || n[0].(map[string]any)["contact_id"] != sup || n[0].(map[string]any)["deliveries"].([]any)[0].(map[string]any)["status"] != "delivered" {
			t.Errorf("level 1 notified %v", n)
		}
	})
}

// TestEscalationLeaseTakeover: a node claims a due level and stops before
// sending it; another node leaves the step alone while the claim lasts
// and sends it once the claim lapsed, once.
func TestEscalationLeaseTakeover(t *testing.T) {
	eachShared(t, func(t *testing.T, open sharedStore) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &flakyGateway{tries: map[string]int{}}
		a := startNode(t, open(t), gw, "a", clk, false)
		sup := a.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550004001"}})
		a.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "dee@example.com"}})
		_, al := a.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
		id := al["alert_id"].(string)
		due := t0.Add(5 * time.Minute)
		// Node a claims the level as its scheduler does, then stops.
		steps, err := a.st.ClaimDueAlerts(t.Context(), "a", due, due.Add(time.Minute), 10)
		if err != nil || len(steps) != 1 || steps[0].AlertID != id || steps[0].Kind != store.AlertDueEscalation || steps[0].Level != 1 {
			t.Fatalf("claim %+v %v", steps, err)
		}
		a.stop()

		clk2 := &clock{t: due}
		b := startNode(t, open(t), gw, "b", clk2, false)
		b.tick()
		clk2.set(due.Add(time.Minute - time.Millisecond))
		b.tick()
		if got := gw.levelSent(id); len(got) != 0 {
			t.Fatalf("sent while node a's claim lasts: %v", got)
		}
		clk2.set(due.Add(time.Minute))
		b.tick()
		want := []string{"sms " + sup + " +15550004001 1"}
		if got := gw.levelSent(id); !slices.Equal(got, want) {
			t.Fatalf("after the claim lapsed: %v, want %v", got, want)
		}
		b.tick()
		if got := gw.levelSent(id); !slices.Equal(got, want) {
			t.Errorf("sent again: %v, want %v", got, want)
		}
		// Node a's claim is no longer its own.
		if err := b.st.FinishAlertDue(t.Context(), "a", steps[0], due.Add(time.Minute)); !errors.Is(err, store.ErrConflict) {
			t.Errorf("the lapsed claim finished the step: %v", err)
		}
		if l := b.levelRecord(id, 1); l["triggered_at"] != due.Add(time.Minute).Format(time.RFC3339) {
			t.Errorf("level 1 %v", l)
		}
	})
}

// TestEscalationResendAfterCrash: a node sends a level and stops before
// the alert records it. Another node takes the step over once the claim
// lapsed: a notification the queue recorded as delivered is not sent
// again; one whose attempt the queue did not record is sent again with
// the same webhook-id and body, signed anew.
func TestEscalationResendAfterCrash(t *testing.T) {
	for _, c := range []struct {
		name     string
		recorded bool // the queue recorded the first attempt
		requests int
	}{
		{"delivery recorded", true, 1},
		{"delivery not recorded", false, 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			eachShared(t, func(t *testing.T, open sharedStore) {
				t0 := time.Now().UTC().Truncate(time.Second)
				clk := &clock{t: t0}
				gw := &flakyGateway{tries: map[string]int{}}
				a := startNode(t, open(t), gw, "a", clk, false)
				sup := a.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550004001"}})
				a.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "dee@example.com"}})
				_, al := a.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
				id := al["alert_id"].(string)
				_, gwv := a.do("GET", "/v1/emergency/gateway", nil)
				secret := gwv["signing_secret"].(string)

				due := t0.Add(5 * time.Minute)
				clk.set(due)
				a.ns.failAlerts.Store(true)
				a.ns.failRecords.Store(!c.recorded)
				if _, err := a.alerts.Tick(t.Context()); !errors.Is(err, errCrashed) {
					t.Fatalf("the crashing tick: %v", err)
				}
				a.stop()
				first := gw.levelRequests(id)
				if len(first) != 1 {
					t.Fatalf("node a sent %d requests", len(first))
				}

				clk2 := &clock{t: due.Add(time.Minute)}
				b := startNode(t, open(t), gw, "b", clk2, false)
				b.tick()
				if _, err := b.outbox.Tick(t.Context()); err != nil {
					t.Fatal(err)
				}
				b.tick()
				b.outbox.Tick(t.Context())
				reqs := gw.levelRequests(id)
				if len(reqs) != c.requests {
					t.Fatalf("the gateway got %d requests, want %d", len(reqs), c.requests)
				}
				for _, r := range reqs {
					if r.id != first[0].id || string(r.body) != string(first[0].body) || r.n.Recipient != sup || r.n.Level != 1 {
						t.Errorf("request %s %s, want the first's id %s and body %s", r.id, r.body, first[0].id, first[0].body)
					}
					if err := verifyWebhook(secret, r.id, r.ts, r.sig, r.body); err != nil {
						t.Errorf("request %s: %v", r.id, err)
					}
				}
				l := b.levelRecord(id, 1)
				n := l["notified"].([]any)
				if len(n) != 1 || n[0].(map[string]any)["deliveries"].([]any)[0].(map[string]any)["status"] != "delivered" {
					t.Errorf("level 1 notified %v", n)
				}
			})
		})
	}
}
