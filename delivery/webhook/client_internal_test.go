package webhook

import (
	"bufio"
	"context"
	"crypto/x509"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"
)

func testRequest(url string) request {
	return request{url: url, id: "msg_1", timestamp: 1767225600, signature: "v1,x", body: []byte(`{"a":1}`), userAgent: "t"}
}

// A receiver over TLS gets the signed POST (the client's own dial, then
// the handshake).
func TestSendOverTLS(t *testing.T) {
	var got atomic.Value
	s := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got.Store(r.Header.Get("webhook-id") + " " + r.Header.Get("Content-Type"))
		w.WriteHeader(http.StatusNoContent)
	}))
	defer s.Close()
	c := newClient(2, 5*time.Second, true, &connSet{})
	pool := x509.NewCertPool()
	pool.AddCert(s.Certificate())
	c.TLSConfig = s.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
	c.TLSConfig.RootCAs = pool
	o := send(context.Background(), c, testRequest(s.URL), 5*time.Second, time.Now)
	if o.kind != delivered || o.code != http.StatusNoContent || got.Load() != "msg_1 application/json" {
		t.Fatalf("outcome %+v, receiver saw %v", o, got.Load())
	}
}

// A receiver that closes each connection after its answer, without
// saying so, leaves a dead connection in the pool: the next POST meets
// it before any byte of an answer and is sent again on a new connection,
// not counted as a failure.
func TestSendAgainOnAConnectionClosedBeforeTheAnswer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var requests atomic.Int64
	closed := make(chan struct{}, 10)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				req, err := http.ReadRequest(bufio.NewReader(conn))
				if err == nil {
					_ = req.Body.Close()
					requests.Add(1)
					_, _ = conn.Write([]byte("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n"))
				}
				conn.Close()
				closed <- struct{}{}
			}()
		}
	}()
	c := newClient(1, 5*time.Second, true, &connSet{})
	for i := range 5 {
		o := send(context.Background(), c, testRequest("http://"+ln.Addr().String()+"/hook"), 5*time.Second, time.Now)
		if o.kind != delivered {
			t.Fatalf("request %d: %+v", i, o)
		}
		<-closed // the connection in the pool is closed before the next POST
	}
	if n := requests.Load(); n != 5 {
		t.Errorf("receiver answered %d requests, want 5", n)
	}
}
