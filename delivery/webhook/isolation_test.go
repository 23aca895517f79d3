package webhook_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// One bus batch matches a healthy stream and one whose circuit is open
// (on SQLite and PostgreSQL):
// the healthy stream's deliveries are sent; the other's are durable when
// AcceptMany returns, counted as waiting at once, and parked (out of the
// delivery log) while the circuit stays open. When the endpoint can send
// again (here: a new webhook_url, which the next message brings, resets
// the circuit) they join the log and are delivered.
func TestOpenCircuitParksItsDeliveries(t *testing.T) {
	eachBackend(t, openCircuitParks)
}

func openCircuitParks(t *testing.T, st backend) {
	f := newFixture(t, st)
	rc := newReceiver(t, nil)
	healthy := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[healthy.ID] }
	dead := f.stream(refusingURL(t)) // down: connections refused
	cfg := testConfig()
	cfg.BreakerCooldown = time.Hour // stays open until the URL changes
	d := f.start(cfg)

	accept(t, d, dead, entries(1, 5))
	waitFor(t, "the dead stream's circuit to open", func() bool {
		c := d.EndpointState(dead.ID)
		return c == webhook.CircuitOpen
	})

	es := entries(6, 20)
	if err := d.AcceptMany(context.Background(), []hub.StreamInfo{healthy, dead}, [][]hub.Entry{es, es}); err != nil {
		t.Fatalf("AcceptMany: %v", err)
	}
	c, err := f.st.CountDeliveries(context.Background(), store.Scope{Org: dead.Org, Env: dead.Env}, dead.ID)
	if err != nil {
		t.Fatal(err)
	}
	if n := c[store.DeliveryPending] + c[store.DeliveryFailed]; n != 25 {
		t.Errorf("dead stream counts %d deliveries waiting right after AcceptMany, want 25 (5 before, 20 in the batch)", n)
	}
	waitFor(t, "the healthy stream's deliveries", func() bool { return countOf(t, f.st, healthy, store.DeliveryDelivered) == 20 })
	if n := len(list(t, f.st, dead, "")); n != 5 {
		t.Errorf("dead stream's log holds %d deliveries while its circuit is open, want the 5 from before it opened", n)
	}

	// a batch of the dead stream alone is parked and counted too
	waiting := func() int64 {
		return countOf(t, f.st, dead, store.DeliveryPending) + countOf(t, f.st, dead, store.DeliveryFailed)
	}
	before := waiting()
	accept(t, d, dead, entries(26, 3))
	if got := waiting(); got != before+3 {
		t.Errorf("%d deliveries waiting after 3 parked ones, want %d", got, before+3)
	}

	back := newReceiver(t, nil)
	dead.WebhookURL, dead.Version = back.URL, dead.Version+1
	f.reg.put(dead)
	accept(t, d, dead, entries(29, 1)) // the next message carries the new address
	// the parked ones (6–28) and the new one arrive; the five from before
	// the circuit opened were released until its cooldown ends
	offsets := func() map[int64]bool {
		seen := map[int64]bool{}
		for _, h := range back.all() {
			var w wrapped
			if err := json.Unmarshal(h.body, &w); err == nil {
				seen[w.Offset] = true
			}
		}
		return seen
	}
	waitFor(t, "every parked delivery at the new address", func() bool {
		seen := offsets()
		for off := int64(6); off <= 29; off++ {
			if !seen[off] {
				return false
			}
		}
		return true
	})
	if n := len(list(t, f.st, dead, "")); n != 29 {
		t.Errorf("dead stream's log holds %d deliveries, want all 29", n)
	}
}

// Concurrent Accepts (one per bus partition) reserve an endpoint's room
// as they go: however they interleave, a receiver that never answers is
// handed no more than its queue holds, and the rest waits in the store.
func TestConcurrentAcceptsNeverOverfillAQueue(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := hungReceiver(t)
	hung := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Timeout, cfg.QueueLimit, cfg.Concurrency, cfg.StallAfter = time.Minute, 20, 2, time.Minute
	d := f.start(cfg)
	// the dispatcher is sending once the receiver hears from it
	accept(t, d, hung, entries(0, 1))
	waitFor(t, "the first request", func() bool { return len(rc.all()) > 0 })

	const accepters, rounds, batch = 8, 10, 10
	var wg sync.WaitGroup
	for a := range accepters {
		wg.Go(func() {
			for r := range rounds {
				from := int64(1 + (a*rounds+r)*batch)
				if err := d.Accept(context.Background(), hung, entries(from, batch)); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	total := 1 + accepters*rounds*batch
	log := list(t, f.st, hung, "")
	if len(log) != total {
		t.Errorf("the delivery log holds %d of %d deliveries, want all: the endpoint is busy, not stalled", len(log), total)
	}
	leased := 0
	for _, x := range log {
		if x.LeaseOwner != "" {
			leased++
		}
	}
	if leased != cfg.QueueLimit {
		t.Errorf("%d deliveries handed to the endpoint, want its queue's %d", leased, cfg.QueueLimit)
	}
}

// An endpoint holds at most QueueBytes of payloads in memory, whatever
// its count limit: large messages wait in the store.
func TestAnEndpointHoldsAtMostQueueBytes(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := hungReceiver(t)
	hung := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Timeout, cfg.QueueLimit, cfg.QueueBytes, cfg.Concurrency, cfg.StallAfter = time.Minute, 1000, 64<<10, 2, time.Minute
	d := f.start(cfg)
	accept(t, d, hung, entries(0, 1))
	waitFor(t, "the first request", func() bool { return len(rc.all()) > 0 })
	big := bytes.Repeat([]byte("x"), 2600)
	for r := range 20 {
		es := entries(int64(2+r*10), 10)
		for i := range es {
			es[i].Data = fmt.Appendf(nil, `{"n":%d,"pad":"%s"}`, es[i].Offset, big)
		}
		accept(t, d, hung, es)
	}
	log := list(t, f.st, hung, "")
	if len(log) != 201 {
		t.Fatalf("the delivery log holds %d of 201 deliveries", len(log))
	}
	held := 0
	for _, x := range log {
		if x.LeaseOwner != "" {
			held += len(x.Payload)
		}
	}
	// one hand-over of 10 may pass the bound
	if held > cfg.QueueBytes+10*2700 || held < cfg.QueueBytes/2 {
		t.Errorf("%d payload bytes handed to the endpoint, want about its %d", held, cfg.QueueBytes)
	}
}

// An endpoint that holds deliveries and has finished no request for
// StallAfter is stalled: it takes nothing more, and what comes next is
// parked (out of the delivery log every stream's commit shares, durable
// and counted at once).
func TestAStalledEndpointParks(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := hungReceiver(t)
	hung := f.stream(rc.URL)
	cfg := testConfig()
	var clk clock
	cfg.Timeout, cfg.QueueLimit, cfg.Concurrency, cfg.StallAfter, cfg.Now = time.Minute, 20, 2, time.Second, clk.now
	d := f.start(cfg)
	accept(t, d, hung, entries(1, 20))
	waitFor(t, "two requests in flight", func() bool { return len(rc.all()) == 2 })
	clk.advance(cfg.StallAfter) // and no request finished

	for i := range 10 {
		accept(t, d, hung, entries(int64(21+10*i), 10))
	}
	if n := len(list(t, f.st, hung, "")); n != 20 {
		t.Errorf("the delivery log holds %d deliveries, want the 20 from before the stall: the rest parked", n)
	}
	if n := countOf(t, f.st, hung, store.DeliveryPending); n != 120 {
		t.Errorf("%d deliveries pending, want all 120", n)
	}
}

// While a dead receiver's circuit half-opens for a probe, only what the
// probe carries leaves the parked deliveries: the backlog does not move
// into the delivery log at every cooldown's end.
func TestHalfOpenUnparksOnlyTheProbe(t *testing.T) {
	eachBackend(t, halfOpenUnparks)
}

func halfOpenUnparks(t *testing.T, st backend) {
	f := newFixture(t, st)
	dead := f.stream(refusingURL(t)) // down: connections refused
	var clk clock
	cfg := testConfig()
	// a cooldown ends when the test moves the clock (each move shorter
	// than Lease), not while the test waits in real time
	cfg.BreakerCooldown, cfg.Now = time.Second, clk.now
	d := f.start(cfg)

	accept(t, d, dead, entries(1, 5))
	waitFor(t, "the circuit to open", func() bool {
		c := d.EndpointState(dead.ID)
		return c == webhook.CircuitOpen
	})
	for i := range 20 {
		accept(t, d, dead, entries(int64(6+10*i), 10)) // parked
	}
	// several cooldowns pass, each ending in a failed probe of one
	// delivery, which may come from the backlog
	const cooldowns = 10
	for i := range cooldowns {
		clk.advance(cfg.BreakerCooldown)
		waitFor(t, fmt.Sprintf("probe %d to fail", i+1), func() bool {
			c := d.EndpointState(dead.ID)
			return c == webhook.CircuitOpen
		})
	}
	log := list(t, f.st, dead, "")
	halfOpens := cooldowns + 1 // one more if a wait took a real second
	if len(log) > 5+halfOpens {
		t.Fatalf("the delivery log holds %d deliveries after at most %d half-opens, want at most %d: the parked backlog moved in",
			len(log), halfOpens, 5+halfOpens)
	}
	c, _ := f.st.CountDeliveries(context.Background(), store.Scope{Org: dead.Org, Env: dead.Env}, dead.ID)
	if n := c[store.DeliveryPending] + c[store.DeliveryFailed]; n != 205 {
		t.Errorf("%d deliveries waiting, want all 205", n)
	}
}

// A receiver that answers, slowly, is busy, not dead: what its queue has
// no room for is queued in the store (not parked, which would write it
// twice) and delivered as the queue drains.
func TestABusyReceiverIsQueuedNotParked(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	// it answers once the test has handed everything over, well within
	// StallAfter
	answer := make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-answer:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	busy := f.stream(rc.URL)
	cfg := testConfig()
	cfg.QueueLimit, cfg.Concurrency, cfg.StallAfter = 10, 2, time.Minute
	d := f.start(cfg)
	accept(t, d, busy, entries(0, 1))
	waitFor(t, "the first request", func() bool { return len(rc.all()) > 0 })
	for i := range 10 {
		accept(t, d, busy, entries(int64(1+10*i), 10))
	}
	if ids, err := f.st.ParkedStreams(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("parked streams %v (%v), want none: the receiver answers", ids, err)
	}
	if n := len(list(t, f.st, busy, "")); n != 101 {
		t.Errorf("the delivery log holds %d deliveries, want all 101", n)
	}
	close(answer)
	waitFor(t, "every delivery", func() bool { return countOf(t, f.st, busy, store.DeliveryDelivered) == 101 })
}

// A receiver that answers, but far slower than its messages come, is
// slow: once a second of its answers shows that what it holds would take
// longer than SlowDrain to send, what it has no room for is parked rather
// than written to the delivery log the healthy streams' commits share,
// and it all arrives in the end.
func TestASlowReceiverParks(t *testing.T) {
	eachBackend(t, slowReceiverParks)
}

func slowReceiverParks(t *testing.T, st backend) {
	f := newFixture(t, st)
	// it answers one request per tick of its own: about 100 a second
	pace := time.NewTicker(10 * time.Millisecond)
	t.Cleanup(pace.Stop)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		select {
		case <-pace.C:
		case <-r.Context().Done():
			return
		}
		w.WriteHeader(http.StatusNoContent)
	})
	slow := f.stream(rc.URL)
	cfg := testConfig()
	cfg.QueueLimit, cfg.Concurrency, cfg.StallAfter, cfg.SlowDrain = 200, 2, time.Minute, 200*time.Millisecond
	d := f.start(cfg)
	accept(t, d, slow, entries(1, 300)) // 200 held, 100 queued in the log
	waitFor(t, "a second of answers", func() bool { return len(rc.all()) >= 120 })
	answered := len(rc.all())
	before := len(list(t, f.st, slow, ""))
	for i := range 10 {
		accept(t, d, slow, entries(int64(301+20*i), 20))
	}
	// parked deliveries move into the log only as the receiver takes
	// them: about as many as it answered while the 200 came (a few on a
	// quiet machine, more where the accepts are slow), not all of them
	took := len(rc.all()) - answered
	if n := len(list(t, f.st, slow, "")); took+60 >= 200 {
		t.Logf("the receiver took %d while the 200 came: the log's growth (%d) cannot tell parking from none", took, n-before)
	} else if n > before+took+60 {
		t.Errorf("the delivery log grew from %d to %d deliveries as 200 more came and the receiver took %d: the slow receiver's surplus went in, not parked", before, n, took)
	}
	if ids, err := f.st.ParkedStreams(context.Background()); err != nil || len(ids) != 1 {
		t.Errorf("parked streams %v (%v), want the slow one", ids, err)
	}
	waitFor(t, "every delivery", func() bool { return countOf(t, f.st, slow, store.DeliveryDelivered) == 500 })
}
