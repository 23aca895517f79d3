package webhook_test

import (
	"math"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/internal/store"
)

// An endpoint sends at most Burst requests at once and then one per
// 1/Rate seconds, however many workers it has.
func TestRatePacesAnEndpoint(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	var mu sync.Mutex
	var at []time.Time
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		at = append(at, time.Now())
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	})
	info := f.stream(rc.URL)
	cfg := testConfig()
	cfg.Rate, cfg.Burst = 20, 2 // one per 50ms after two
	d := f.start(cfg)
	const n = 6
	start := time.Now()
	accept(t, d, info, entries(1, n))
	waitFor(t, "all delivered", func() bool { return countOf(t, f.st, info, store.DeliveryDelivered) == n })
	mu.Lock()
	defer mu.Unlock()
	if len(at) != n {
		t.Fatalf("receiver got %d requests, want %d", len(at), n)
	}
	// The burst goes at once; the other n-2 wait 50ms each after it, so
	// the last cannot arrive sooner than (n-2)*50ms after the first
	// token was taken, which is after start.
	last := slices.MaxFunc(at, time.Time.Compare)
	if took, want := last.Sub(start), time.Duration(n-2)*50*time.Millisecond; took < want {
		t.Fatalf("%d requests took %v, want at least %v at 20/s with burst 2", n, took, want)
	}
}

func TestRateOutOfRange(t *testing.T) {
	f := newFixture(t, openSQLite(t, t.TempDir()))
	for _, rate := range []float64{1e-30, math.NaN()} {
		cfg := testConfig()
		cfg.Rate = rate
		if _, err := webhook.New(cfg, f.st, f.reg, f.st, f.cnt, testLogger()); err == nil {
			t.Errorf("New with Rate %v: no error", rate)
		}
	}
	for _, rate := range []float64{-1, math.Inf(1), 1e12} { // unlimited
		cfg := testConfig()
		cfg.Rate = rate
		if _, err := webhook.New(cfg, f.st, f.reg, f.st, f.cnt, testLogger()); err != nil {
			t.Errorf("New with Rate %v: %v", rate, err)
		}
	}
}
