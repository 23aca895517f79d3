package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

// testServer is a fleethub server this test started: HTTPS at tls, plain
// HTTP at plain, both one process.
type testServer struct {
	tls, plain, key string
	pid             int
}

// startServer builds cmd/fleethub, creates a key and serves HTTPS with a
// self-signed certificate beside plain HTTP (--plain-addr), with the
// road network of osm, killed at the test's end.
func startServer(t *testing.T, osm string) *testServer {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fleethub")
	if out, err := exec.Command("go", "build", "-o", bin, "../fleethub").CombinedOutput(); err != nil {
		t.Fatalf("build fleethub: %v\n%s", err, out)
	}
	data := filepath.Join(dir, "data")
	out, err := exec.Command(bin, "keys", "create", "--data", data, "--org", "bench", "--env", "test", "--name", "bench",
		"--permissions", "all", "--rpm", "60000000").Output()
	if err != nil {
		t.Fatalf("keys create: %v", err)
	}
	cert, key := selfSigned(t, dir)
	s := &testServer{key: strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])}
	tlsAddr, plainAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "serve", "--data", data, "--addr", tlsAddr, "--plain-addr", plainAddr, "--tls-cert", cert, "--tls-key", key,
		"--allow-private-webhooks", "--solver-work-rate", "30000000", // the webhook mode's receivers listen on loopback; a fixed solver rate spares the start its measuring run
		"--osm", osm)
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", log.String())
		}
	})
	s.tls, s.plain, s.pid = "https://"+tlsAddr, "http://"+plainAddr, cmd.Process.Pid
	waitHealthy(t, s.plain+"/readyz")
	return s
}

func waitHealthy(t *testing.T, url string) {
	t.Helper()
	waitfor.Until(t, time.Minute, url+" answering 200", func() bool {
		res, err := http.Get(url)
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == 200
	})
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// selfSigned writes a certificate for 127.0.0.1 and its key.
func selfSigned(t *testing.T, dir string) (certFile, keyFile string) {
	t.Helper()
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// runJSON runs the command with --json and decodes its result.
func runJSON(t *testing.T, args ...string) (map[string]any, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	if code := run(ctx, append(args, "--json"), &stdout, &stderr); code != 0 {
		t.Fatalf("%v: exit %d\n%s", args, code, stderr.String())
	}
	var got map[string]any
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v: not JSON: %v\n%s", args, err, stdout.String())
	}
	return got, stderr.String()
}

// The sse mode against a real server: every published event reaches every
// client, the server's memory per client and CPU come from /proc, and
// the progress line runs; fanout reaches the same server over wss://
// with --tls --insecure (two streams, two subscribers each: every event
// reaches the two of its stream), and is refused the self-signed
// certificate without --insecure.
func TestModesAgainstAServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and starts a server")
	}
	if raceOn {
		t.Skip("runs in make test's pass without the race detector (see the Makefile)")
	}
	const osm = "../../internal/routing/testdata/tiny.osm.pbf"
	s := startServer(t, osm)
	pid := strconv.Itoa(s.pid)
	t.Run("drive", func(t *testing.T) {
		got, _ := runJSON(t, "drive", "--url", s.plain, "--key", s.key, "--osm", osm, "--vehicles", "20", "--every", "250ms",
			"--upload-every", "500ms", "--duration", "3s", "--stop", "--pid", pid, "--quiet")
		st, _ := got["statuses"].(map[string]any)
		points, judged := got["points"].(float64), got["judged"].(float64)
		if got["errors"] != 0.0 || len(st) != 1 || st["200"] == nil || got["vehicles"] != 20.0 || points < 20*8 || got["stopped_ms"] == nil {
			t.Fatalf("drive: %v", got)
		}
		// the trips stopped, every point uploaded reached its road
		if judged != points || got["queued_end"] != 0.0 || got["overflow"] != 0.0 || got["lag_p50_ms"] == nil || got["wait_p99_ms"] == nil {
			t.Fatalf("drive: %v points uploaded, %v judged: %v", points, judged, got)
		}
		// the lag figures are of the steady part (from 1.5 s here), the
		// whole run's beside them
		if steady, _ := got["steady_judged"].(float64); steady <= 0 || steady >= judged || got["steady_from_ms"] != 1500.0 || got["whole_lag_p99_ms"] == nil {
			t.Fatalf("drive: %v judged in the steady part of %v: %v", got["steady_judged"], judged, got)
		}
	})
	t.Run("sse", func(t *testing.T) {
		got, progress := runJSON(t, "sse", "--url", s.plain, "--key", s.key, "--clients", "3", "--events-per-sec", "100", "--batch", "10",
			"--duration", "2s", "--pid", pid)
		if got["mode"] != "sse" || got["clients"] != 3.0 || got["sent"].(float64) < 10 {
			t.Fatalf("sse: %v", got)
		}
		if got["delivered"] != got["expected"] || got["lost"] != 0.0 || got["duplicates"] != 0.0 || got["out_of_order"] != 0.0 {
			t.Fatalf("sse lost events: %v", got)
		}
		if got["server_cpu_source"] != "/proc/"+pid || got["server_rss_connected_mib"].(float64) <= 0 || got["server_rss_kib_per_client"] == nil {
			t.Fatalf("sse server figures: %v", got)
		}
		if !strings.Contains(progress, "/s  p99 ") || !strings.Contains(progress, "server CPU ") {
			t.Fatalf("progress lines: %q", progress)
		}
	})
	t.Run("webhook to two receivers beside five bad ones", func(t *testing.T) {
		got, _ := runJSON(t, "webhook", "--url", s.plain, "--key", s.key, "--receivers", "2", "--bad-neighbours",
			"--conns", "2", "--rate", "200", "--batch", "10", "--duration", "1s", "--quiet")
		st, _ := got["statuses"].(map[string]any)
		accepted, _ := st["202"].(float64)
		if accepted < 5 || len(st) != 1 || got["errors"] != 0.0 || got["items"] != 2*10*accepted {
			t.Fatalf("webhook: %v, want every one of the %v accepted requests' 10 events at both receivers, signed", got, accepted)
		}
	})
	t.Run("webhook beside the bad receivers named", func(t *testing.T) {
		got, _ := runJSON(t, "webhook", "--url", s.plain, "--key", s.key, "--receivers", "1", "--bad", "down,slow",
			"--conns", "2", "--rate", "200", "--batch", "10", "--duration", "1s", "--quiet")
		st, _ := got["statuses"].(map[string]any)
		accepted, _ := st["202"].(float64)
		if accepted < 5 || got["errors"] != 0.0 || got["items"] != 10*accepted {
			t.Fatalf("webhook --bad down,slow: %v", got)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"webhook", "--url", s.plain, "--key", s.key, "--bad", "down,late", "--duration", "1s", "--quiet"},
			&stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), `"late"`) {
			t.Fatalf("--bad with an unknown kind: exit %d, %s", code, stderr.String())
		}
	})
	t.Run("health over TLS", func(t *testing.T) {
		got, _ := runJSON(t, "health", "--url", s.tls, "--insecure", "--key", s.key, "--conns", "2", "--rate", "50", "--duration", "1s",
			"--pid", pid, "--quiet")
		st, _ := got["statuses"].(map[string]any)
		if got["errors"] != 0.0 || len(st) != 1 || st["200"] == nil || got["server_cpu_source"] != "/proc/"+pid {
			t.Fatalf("health over TLS: %v", got)
		}
	})
	t.Run("fanout over TLS", func(t *testing.T) {
		got, _ := runJSON(t, "fanout", "--url", strings.Replace(s.tls, "https://", "http://", 1), "--tls", "--insecure", "--key", s.key,
			"--streams", "2", "--subscribers", "4", "--events-per-sec", "100", "--batch", "10", "--senders", "5", "--duration", "2s", "--pid", pid, "--quiet")
		if got["tls"] != true || got["streams"] != 2.0 || got["senders"] != 5.0 || got["delivered"] != got["expected"] || got["expected"] != 2*got["sent"].(float64) ||
			got["lost"] != 0.0 || got["duplicates"] != 0.0 || got["out_of_order"] != 0.0 || got["sent"].(float64) < 10 {
			t.Fatalf("fanout over TLS: %v", got)
		}
		if got["server_cpu_us_per_publish"] == nil && got["server_cpu_s"] != 0.0 {
			t.Fatalf("fanout: no CPU per publish: %v", got)
		}
		var stdout, stderr bytes.Buffer
		if code := run(context.Background(), []string{"fanout", "--url", s.tls, "--key", s.key, "--subscribers", "1", "--duration", "1s", "--quiet"},
			&stdout, &stderr); code != 1 || !strings.Contains(stderr.String(), "certificate") {
			t.Fatalf("a self-signed certificate without --insecure: exit %d, %s", code, stderr.String())
		}
	})
}
