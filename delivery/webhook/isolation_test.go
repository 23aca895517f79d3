package webhook_test

import (
	"context"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// gatedStore holds back every enqueue that carries a delivery of one
// stream until the gate opens: a store write that takes long.
type gatedStore struct {
	backend
	stream string
	gate   chan struct{}
	once   sync.Once
}

func (g *gatedStore) EnqueueDeliveries(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	for _, x := range ds {
		if x.StreamID == g.stream {
			<-g.gate
			break
		}
	}
	return g.backend.EnqueueDeliveries(ctx, ds)
}

func (g *gatedStore) open() { g.once.Do(func() { close(g.gate) }) }

// One bus batch matches a healthy stream and one whose circuit is open:
// the healthy stream's deliveries are written and sent without waiting
// for the other stream's write, and AcceptMany returns only when both
// are durable.
func TestOpenCircuitDoesNotHoldBackItsNeighbour(t *testing.T) {
	g := &gatedStore{backend: openSQLite(t, t.TempDir()), gate: make(chan struct{})}
	f := newFixture(t, g)
	rc := newReceiver(t, nil)
	healthy := f.stream(rc.URL)
	rc.secret = func() string { return f.secrt[healthy.ID] }
	down := newReceiver(t, nil)
	dead := f.stream(down.URL)
	down.Close() // connections refused
	d := f.start(testConfig())
	t.Cleanup(g.open) // before the dispatcher's close, which waits for AcceptMany

	accept(t, d, dead, entries(1, 5))
	waitFor(t, "the dead stream's circuit to open", func() bool {
		c, _ := d.EndpointState(dead.ID)
		return c == webhook.CircuitOpen
	})

	g.stream = dead.ID // from now on the dead stream's writes hang
	es := entries(6, 20)
	returned := make(chan error, 1)
	go func() {
		returned <- d.AcceptMany(context.Background(), []hub.StreamInfo{healthy, dead}, [][]hub.Entry{es, es})
	}()
	waitFor(t, "the healthy stream's deliveries while its neighbour's write hangs", func() bool {
		return countOf(t, g, healthy, store.DeliveryDelivered) == 20
	})
	select {
	case err := <-returned:
		t.Fatalf("AcceptMany returned (%v) before the dead stream's deliveries were written", err)
	default:
	}
	g.open()
	if err := <-returned; err != nil {
		t.Fatalf("AcceptMany: %v", err)
	}
	if n := len(list(t, g, dead, "")); n != 25 {
		t.Errorf("dead stream holds %d deliveries, want 25 (5 before, 20 in the batch)", n)
	}
}
