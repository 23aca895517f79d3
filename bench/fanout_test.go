package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

// The fanout senders keep their connections between requests: a server
// measured per publish must not be counted opening and closing one for
// most of them (the default client keeps two idle connections a host).
func TestFanoutSendersKeepTheirConnections(t *testing.T) {
	var conns, requests atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		time.Sleep(2 * time.Millisecond) // the senders' requests overlap
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"accepted": 1}`))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	const senders = 8
	cfg := FanoutConfig{URL: srv.URL, Key: "k", Rate: 2000, Batch: 1}
	vehicles := runVehiclesFor("veh", 1, senders)
	sent, errs := sendFanout(context.Background(), cfg, vehicles, time.Now().Add(time.Second))
	if errs != 0 {
		t.Fatalf("%d ingest requests failed", errs)
	}
	if sent[0] < 200 {
		t.Fatalf("%d events sent in a second, want hundreds", sent[0])
	}
	// a sender may dial once more when its request starts before its
	// previous connection is back in the pool
	if n := conns.Load(); n > 2*senders {
		t.Fatalf("%d senders opened %d connections for %d requests, want about one each", senders, n, requests.Load())
	}
}
