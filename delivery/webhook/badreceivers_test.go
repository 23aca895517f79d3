package webhook_test

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// eachBackend runs fn on SQLite and, with FLEETHUB_TEST_DATABASE_URL, on
// PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, st backend)) {
	t.Run("SQLite", func(t *testing.T) { fn(t, openSQLite(t, t.TempDir())) })
	t.Run("PostgreSQL", func(t *testing.T) { fn(t, openPostgres(t, freshSchema(t))) })
}

// offsetsOf returns how many times each offset reached a receiver, and
// the first signature that did not verify.
func offsetsOf(rc *receiver) (map[int64]int, error) {
	seen := map[int64]int{}
	var bad error
	for _, h := range rc.all() {
		if h.err != nil && bad == nil {
			bad = h.err
		}
		var w wrapped
		if err := json.Unmarshal(h.body, &w); err == nil {
			seen[w.Offset]++
		}
	}
	return seen, bad
}

// Four healthy receivers beside a dead one (connections refused), a
// never-answering one, a slow one and one that answers 410 Gone, every
// stream getting the same messages in one AcceptMany as the pipeline
// hands them: every healthy receiver gets every message once, signed;
// the slow one gets every message too; nothing of the dead and silent
// ones is lost (all waiting), and while their circuits are open their
// deliveries are parked: the attempts recorded for them stay within one
// per probe, what they add to the delivery log within two; nothing of
// the 410 one is lost either: its deliveries all wait for a retry, none
// dead-lettered or disabled.
func TestHealthyReceiversBesideBadOnes(t *testing.T) {
	eachBackend(t, func(t *testing.T, st backend) {
		cs := newCountingStore(st)
		f := newFixture(t, cs)
		var healthy []hub.StreamInfo
		var rcs []*receiver
		for range 4 {
			rc := newReceiver(t, nil)
			info := f.stream(rc.URL)
			rc.secret = func() string { return f.secrt[info.ID] }
			healthy, rcs = append(healthy, info), append(rcs, rc)
		}
		dead := f.stream(refusingURL(t)) // down: connections refused
		silent := f.stream(hungReceiver(t).URL)
		slowRc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
			select {
			case <-time.After(20 * time.Millisecond): // real time: a slow receiver
			case <-r.Context().Done():
			}
			w.WriteHeader(http.StatusNoContent)
		})
		slow := f.stream(slowRc.URL)
		goneRc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusGone) })
		gone := f.stream(goneRc.URL)

		cfg := testConfig()
		cfg.BreakerCooldown = 200 * time.Millisecond
		// a healthy receiver must never time out, nor a claimed delivery's
		// lease run out before its outcome is recorded: on a loaded
		// machine either may take longer than the tests' usual 300 ms and
		// 3 s, and what timed out or lapsed is sent again
		// (at-least-once), which this test would count as a duplicate
		cfg.Timeout, cfg.Lease = 2*time.Second, 20*time.Second
		d := f.start(cfg)
		// the dead and silent receivers' circuits open first
		if err := d.AcceptMany(context.Background(), []hub.StreamInfo{dead, silent}, [][]hub.Entry{entries(0, 1), entries(0, 1)}); err != nil {
			t.Fatal(err)
		}
		for _, s := range []hub.StreamInfo{dead, silent} {
			waitFor(t, s.ID+"'s circuit to open", func() bool {
				c := d.EndpointState(s.ID)
				return c == webhook.CircuitOpen
			})
		}
		before := map[string]writes{dead.ID: cs.get(dead.ID), silent.ID: cs.get(silent.ID)}
		began := time.Now()

		all := append(append([]hub.StreamInfo(nil), healthy...), dead, silent, slow, gone)
		const batches, per = 20, 25
		const total = batches * per
		for i := range batches {
			es := entries(int64(1+i*per), per)
			parts := make([][]hub.Entry, len(all))
			for k := range parts {
				parts[k] = es
			}
			if err := d.AcceptMany(context.Background(), all, parts); err != nil {
				t.Fatalf("AcceptMany: %v", err)
			}
		}
		for _, s := range healthy {
			waitFor(t, "every healthy delivery", func() bool { return countOf(t, cs, s, store.DeliveryDelivered) == total })
		}
		// the bound and the counts are read now, while the dead circuits
		// are still open
		probes := int(time.Since(began)/cfg.BreakerCooldown) + 1
		after := map[string]writes{dead.ID: cs.get(dead.ID), silent.ID: cs.get(silent.ID)}
		for i, rc := range rcs {
			seen, bad := offsetsOf(rc)
			if bad != nil {
				t.Errorf("healthy receiver %d: %v", i, bad)
			}
			for off := int64(1); off <= total; off++ {
				if seen[off] != 1 {
					t.Errorf("healthy receiver %d got offset %d %d times, want once", i, off, seen[off])
					break
				}
			}
			if w := cs.get(healthy[i].ID); w.queued != total || w.attempts != total {
				t.Errorf("healthy stream %d: %d rows queued and %d attempts recorded, want %d each", i, w.queued, w.attempts, total)
			}
		}
		for _, s := range []hub.StreamInfo{dead, silent} {
			c, err := cs.CountDeliveries(context.Background(), store.Scope{Org: s.Org, Env: s.Env}, s.ID)
			if err != nil {
				t.Fatal(err)
			}
			if n := c[store.DeliveryPending] + c[store.DeliveryFailed]; n != total+1 {
				t.Errorf("%s: %d deliveries waiting, want all %d", s.ID, n, total+1)
			}
			w, b := after[s.ID], before[s.ID]
			if w.parked-b.parked < total-probes {
				t.Errorf("%s: %d of %d deliveries parked while its circuit was open, want all but the probes' (%d)", s.ID, w.parked-b.parked, total, probes)
			}
			// a half-open circuit takes one delivery: unparked for its
			// probe, or one accepted meanwhile (at most one of each)
			if q := w.queued - b.queued; q > 2*probes {
				t.Errorf("%s: %d rows written to the delivery log while its circuit was open, want at most two per probe (%d probes)", s.ID, q, probes)
			}
			if a := w.attempts - b.attempts; a > probes {
				t.Errorf("%s: %d attempts recorded while its circuit was open, want at most one per probe (%d)", s.ID, a, probes)
			}
		}
		waitFor(t, "every slow delivery", func() bool { return countOf(t, cs, slow, store.DeliveryDelivered) == total })
		if seen, _ := offsetsOf(slowRc); len(seen) != total {
			t.Errorf("the slow receiver got %d distinct messages, want %d", len(seen), total)
		}
		if len(goneRc.all()) == 0 {
			t.Error("the 410 receiver got no request")
		}
		c, err := cs.CountDeliveries(context.Background(), store.Scope{Org: gone.Org, Env: gone.Env}, gone.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := c[store.DeliveryPending] + c[store.DeliveryFailed]; n != total || c[store.DeliveryDisabled] != 0 || c[store.DeliveryDeadLettered] != 0 {
			t.Errorf("the 410 receiver's deliveries %v, want all %d waiting for a retry", c, total)
		}
	})
}

// A dead receiver's endpoint, its circuit open, writes at its probe
// rate: over cooldowns of a second each (moved by the test's clock), the
// deliveries it adds to the delivery log and the attempts recorded for
// it are at most one per cooldown, however many messages arrive, and
// everything accepted is waiting, none lost.
func TestADeadEndpointWritesAtItsProbeRate(t *testing.T) {
	eachBackend(t, func(t *testing.T, st backend) {
		cs := newCountingStore(st)
		f := newFixture(t, cs)
		dead := f.stream(refusingURL(t)) // down: connections refused
		var clk clock
		cfg := testConfig()
		cfg.BreakerCooldown, cfg.Now = time.Second, clk.now
		d := f.start(cfg)
		accept(t, d, dead, entries(0, 1))
		open := func() bool {
			c := d.EndpointState(dead.ID)
			return c == webhook.CircuitOpen
		}
		waitFor(t, "the circuit to open", open)
		before := cs.get(dead.ID)
		const cooldowns, per = 10, 100
		for i := range cooldowns {
			accept(t, d, dead, entries(int64(1+i*per), per))
			clk.advance(cfg.BreakerCooldown)
			waitFor(t, "the probe to fail", open)
		}
		w := cs.get(dead.ID)
		// one more half-open if a wait took a real second
		probes := cooldowns + 1
		if a := w.attempts - before.attempts; a > probes {
			t.Errorf("%d attempts recorded over %d cooldowns, want at most %d", a, cooldowns, probes)
		}
		if q := w.queued - before.queued; q > probes {
			t.Errorf("%d rows added to the delivery log over %d cooldowns, want at most %d", q, cooldowns, probes)
		}
		if p := w.parked - before.parked; p != cooldowns*per {
			t.Errorf("%d deliveries parked, want all %d", p, cooldowns*per)
		}
		c, err := cs.CountDeliveries(context.Background(), store.Scope{Org: dead.Org, Env: dead.Env}, dead.ID)
		if err != nil {
			t.Fatal(err)
		}
		if n := c[store.DeliveryPending] + c[store.DeliveryFailed]; n != 1+cooldowns*per {
			t.Errorf("%d deliveries waiting, want all %d", n, 1+cooldowns*per)
		}
	})
}

// A receiver that is down (answering 503) while messages keep coming has
// them parked once its circuit opens; when it is back at the same
// address, the next probe closes the circuit and every message arrives,
// each under one webhook-id, none lost.
func TestParkedDeliveriesArriveWhenTheReceiverIsBack(t *testing.T) {
	eachBackend(t, func(t *testing.T, st backend) {
		cs := newCountingStore(st)
		f := newFixture(t, cs)
		var down atomic.Bool
		down.Store(true)
		rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
			if down.Load() {
				w.WriteHeader(http.StatusServiceUnavailable)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		})
		info := f.stream(rc.URL)
		rc.secret = func() string { return f.secrt[info.ID] }
		d := f.start(testConfig())
		accept(t, d, info, entries(0, 1))
		waitFor(t, "the circuit to open", func() bool {
			c := d.EndpointState(info.ID)
			return c == webhook.CircuitOpen
		})
		for i := range 10 {
			accept(t, d, info, entries(int64(1+20*i), 20))
		}
		if w := cs.get(info.ID); w.parked == 0 {
			t.Errorf("nothing parked while the circuit was open: %+v", w)
		}
		down.Store(false)
		waitFor(t, "every delivery once the receiver is back", func() bool { return countOf(t, cs, info, store.DeliveryDelivered) == 201 })
		seen, bad := offsetsOf(rc)
		if bad != nil {
			t.Error(bad)
		}
		for off := int64(0); off <= 200; off++ {
			if seen[off] == 0 {
				t.Fatalf("offset %d never arrived", off)
			}
		}
		ids := map[string]bool{}
		for _, x := range list(t, cs, info, "") {
			ids[x.ID] = true
		}
		if len(ids) != 201 {
			t.Errorf("the delivery log holds %d distinct deliveries, want 201", len(ids))
		}
		if parked, err := cs.ParkedStreams(context.Background()); err != nil || len(parked) != 0 {
			t.Errorf("parked streams %v (%v) after the backlog was delivered, want none", parked, err)
		}
	})
}
