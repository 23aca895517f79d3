package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/certreload/certtest"
	"github.com/fleethub/fleethub/internal/waitfor"
	"github.com/gorilla/websocket"
)

// tlsClient trusts pool and opens a new connection (a new handshake) for
// every request.
func tlsClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool}, DisableKeepAlives: true}}
}

// servedSerial is the serial of the certificate a new connection gets.
func servedSerial(t *testing.T, c *http.Client, url string) int64 {
	t.Helper()
	res, err := c.Get(url + "/healthz")
	if err != nil {
		t.Fatalf("GET %s/healthz: %v", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != 200 || res.TLS == nil || len(res.TLS.PeerCertificates) == 0 {
		t.Fatalf("GET /healthz over TLS: status %d, tls %v", res.StatusCode, res.TLS)
	}
	return res.TLS.PeerCertificates[0].SerialNumber.Int64()
}

func TestTLSServesHTTPSAndWSSAndReloadsCertificate(t *testing.T) {
	dir := t.TempDir()
	first := certtest.Write(t, dir, 1001)
	cfg := testConfig(t)
	cfg.TLSCert, cfg.TLSKey, cfg.PlainAddr = first.CertFile, first.KeyFile, "127.0.0.1:0"
	cfg.TLSReloadCheck = 20 * time.Millisecond
	n := startNode(t, cfg)
	secure := "https://" + n.app.addr.String()
	n.url = "http://" + n.app.server.PlainAddr().String() // the helpers go over --plain-addr

	c := tlsClient(first.Pool())
	if s := servedSerial(t, c, secure); s != 1001 {
		t.Fatalf("served serial %d, want 1001", s)
	}
	// plain HTTP on --addr is not served
	if res, err := (&http.Client{Timeout: 5 * time.Second}).Get("http://" + n.app.addr.String() + "/healthz"); err == nil {
		res.Body.Close()
		if res.StatusCode == 200 {
			t.Errorf("plain HTTP answered 200 on the TLS address")
		}
	}
	if r := n.do("GET", "/healthz", "", nil); r.Status != 200 {
		t.Fatalf("plain /healthz on --plain-addr: %d", r.Status)
	}

	// a wss:// subscription delivers
	k := n.key("org-tls", "test", []string{"all"}, 100000)
	id := startEventStream(t, n, k, "veh-tls")
	d := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: first.Pool()}, HandshakeTimeout: 10 * time.Second}
	ws, res, err := d.Dial("wss://"+n.app.addr.String()+"/api/v1/streaming/ws?stream_id="+id, http.Header{"X-Api-Key": []string{k}})
	if err != nil {
		status := 0
		if res != nil {
			status = res.StatusCode
		}
		t.Fatalf("wss dial: %v (status %d)", err, status)
	}
	defer ws.Close()
	expectSubscribed(t, ws)
	n.ingestEvents(t, k, "veh-tls", 0, 3)
	if got := readEvents(t, ws, 3); got[0].StreamID != id {
		t.Fatalf("wss delivered %+v", got)
	}

	// a stream started over HTTPS names its wss:// address
	req, _ := http.NewRequest("POST", secure+"/api/v1/streaming/events/start", strings.NewReader(`{"event_filters": {"vehicle_ids": ["veh-tls2"]}}`))
	req.Header.Set("X-API-Key", k)
	req.Header.Set("Content-Type", "application/json")
	res, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var started struct {
		WebsocketURL string `json:"websocket_url"`
	}
	json.NewDecoder(res.Body).Decode(&started)
	res.Body.Close()
	if res.StatusCode != 201 || !strings.HasPrefix(started.WebsocketURL, "wss://"+n.app.addr.String()+"/") {
		t.Errorf("stream started over HTTPS: %d, websocket_url %q", res.StatusCode, started.WebsocketURL)
	}

	// swap the files: the next connections get the new certificate
	second := certtest.Write(t, dir, 2002)
	c2 := tlsClient(second.Pool())
	var last int64
	if !waitfor.Poll(10*time.Second, func() bool {
		res, err := c2.Get(secure + "/healthz")
		if err != nil {
			return false // still the first certificate, which c2 does not trust
		}
		res.Body.Close()
		last = res.TLS.PeerCertificates[0].SerialNumber.Int64()
		return last == 2002
	}) {
		t.Fatalf("the swapped certificate was not served (last serial %d)", last)
	}
	// the open wss connection goes on
	n.ingestEvents(t, k, "veh-tls", 3, 1)
	readEvents(t, ws, 1)
}

func TestTLSFlagsRefusedAlone(t *testing.T) {
	p := certtest.Write(t, t.TempDir(), 1)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--tls-cert", p.CertFile}, "--tls-cert needs --tls-key"},
		{[]string{"--tls-key", p.KeyFile}, "--tls-key needs --tls-cert"},
		{[]string{"--plain-addr", "127.0.0.1:0"}, "--plain-addr"},
		{[]string{"--tls-cert", p.KeyFile, "--tls-key", p.KeyFile}, "certreload"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, tc.args...)
		if code := cmdServe(context.Background(), args, &out, &errb); code == 0 || !strings.Contains(errb.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a failure naming %q", tc.args, code, errb.String(), tc.want)
		}
	}
}

func TestTLSFlagsFromEnvironment(t *testing.T) {
	p := certtest.Write(t, t.TempDir(), 1)
	t.Setenv("FLEETHUB_TLS_CERT", p.CertFile)
	var out, errb bytes.Buffer
	if code := cmdServe(context.Background(), []string{"--addr", "127.0.0.1:0", "--data", t.TempDir()}, &out, &errb); code == 0 || !strings.Contains(errb.String(), "--tls-cert needs --tls-key") {
		t.Errorf("FLEETHUB_TLS_CERT alone: exit %d, stderr %q", code, errb.String())
	}
	fs, cfg := serveFlags(&out)
	t.Setenv("FLEETHUB_TLS_KEY", p.KeyFile)
	t.Setenv("FLEETHUB_PLAIN_ADDR", "127.0.0.1:9")
	if err := parseFlags(fs, nil); err != nil || cfg.TLSCert != p.CertFile || cfg.TLSKey != p.KeyFile || cfg.PlainAddr != "127.0.0.1:9" {
		t.Errorf("environment: %v %+v", err, cfg)
	}
}
