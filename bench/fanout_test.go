package bench

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The fanout senders keep their connections between requests: a server
// measured per publish must not be counted opening and closing one for
// most of them (the default client keeps two idle connections a host).
func TestFanoutSendersKeepTheirConnections(t *testing.T) {
	const senders = 8
	var conns, requests atomic.Int64
	// every sender's request waits until each sender has one in flight,
	// so that the senders' connections are all busy at once, round after
	// round, as against a server that takes its time
	var mu sync.Mutex
	waiting, round := 0, make(chan struct{})
	done := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		mu.Lock()
		ch := round
		if waiting++; waiting == senders {
			close(round)
			waiting, round = 0, make(chan struct{})
		}
		mu.Unlock()
		select {
		case <-ch:
		case <-done:
		case <-r.Context().Done():
		}
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
	deadline := time.Now().Add(time.Second)
	stop := time.AfterFunc(time.Until(deadline), func() { close(done) })
	defer stop.Stop()
	cfg := FanoutConfig{URL: srv.URL, Key: "k", Rate: 2000, Batch: 1}
	vs := runVehiclesFor("veh", 1, senders)
	sent, errs := sendFanout(context.Background(), cfg, vs, streamNames(vs), deadline)
	if errs != 0 {
		t.Fatalf("%d ingest requests failed", errs)
	}
	if sent[0] < 10*senders {
		t.Fatalf("%d events sent in a second, want at least ten rounds of %d", sent[0], senders)
	}
	// a sender may dial once more when its request starts before its
	// previous connection is back in the pool
	if n := conns.Load(); n > 2*senders {
		t.Fatalf("%d senders opened %d connections for %d requests, want about one each", senders, n, requests.Load())
	}
}
