package telemetry_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/telemetry"
)

// Requests, checks and failures run concurrently without losing or
// duplicating a message (run under -race).
func TestConcurrentIngest(t *testing.T) {
	f := newFixture(t, telemetry.Config{Vehicles: 16})
	ctx := context.Background()
	stop := make(chan struct{})
	checked := make(chan struct{}) // closed when the checker returns
	go func() {
		defer close(checked)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			f.clk.set(t0.Add(time.Duration(i) * time.Minute))
			_ = f.svc.Check(ctx)
		}
	}()
	const workers, requests = 4, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range requests {
				list := make([]map[string]any, 0, 5)
				for m := range 5 {
					list = append(list, obj(t, diag(fmt.Sprintf("v%d", (w+r+m)%24), -10*time.Minute+time.Duration(r)*time.Second, r%4, r%3 == 0, 100+float64(r%20))))
				}
				if _, err := f.svc.IngestTelemetry(ctx, "o", "test", list); err != nil {
					t.Errorf("ingest: %v", err)
					return
				}
			}
		}()
	}
	// the checker runs for as long as the workers do
	wg.Wait()
	close(stop)
	<-checked
	tel := 0
	for _, m := range all(t, f.bus.take()) {
		if m.env.Telemetry != nil {
			tel++
		}
	}
	if tel != workers*requests*5 {
		t.Fatalf("%d telemetry messages published, want %d", tel, workers*requests*5)
	}
}
