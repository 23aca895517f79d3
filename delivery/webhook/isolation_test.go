package webhook_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// One bus batch matches a healthy stream and one whose circuit is open:
// the healthy stream's deliveries are sent; the other's are durable when
// AcceptMany returns, counted as waiting at once, and parked (out of the
// delivery log) while the circuit stays open. When the endpoint can send
// again (here: a new webhook_url, which the next message brings, resets
// the circuit) they join the log and are delivered.
func TestOpenCircuitParksItsDeliveries(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	rc := newReceiver(t, nil)
	healthy := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[healthy.ID] }
	down := newReceiver(t, nil)
	dead := f.stream(down.URL)
	down.Close() // connections refused
	cfg := testConfig()
	cfg.BreakerCooldown = time.Hour // stays open until the URL changes
	d := f.start(cfg)

	accept(t, d, dead, entries(1, 5))
	waitFor(t, "the dead stream's circuit to open", func() bool {
		c, _ := d.EndpointState(dead.ID)
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
	pending := f.cnt.get(dead.ID, "pending")
	accept(t, d, dead, entries(26, 3))
	if got := f.cnt.get(dead.ID, "pending"); got != pending+3 {
		t.Errorf("pending counter %d after 3 parked deliveries, want %d", got, pending+3)
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
