package certreload_test

import (
	"bytes"
	"crypto/tls"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/certreload"
	"github.com/fleethub/fleethub/internal/certreload/certtest"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func serial(t *testing.T, r *certreload.Reloader) int64 {
	t.Helper()
	c, err := r.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil {
		t.Fatal(err)
	}
	if c.Leaf == nil {
		t.Fatal("certificate without its leaf")
	}
	return c.Leaf.SerialNumber.Int64()
}

func TestReloadsChangedPairKeepsOldOnBadPair(t *testing.T) {
	dir := t.TempDir()
	p := certtest.Write(t, dir, 1)
	clk := &clock{now: time.Unix(1_700_000_000, 0)}
	var logs bytes.Buffer
	r, err := certreload.New(certreload.Config{CertFile: p.CertFile, KeyFile: p.KeyFile, Interval: time.Second, Now: clk.Now},
		slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if s := serial(t, r); s != 1 {
		t.Fatalf("serial %d", s)
	}
	certtest.Write(t, dir, 2)
	if s := serial(t, r); s != 1 {
		t.Fatalf("before the interval passed: serial %d, want the old 1", s)
	}
	clk.add(time.Second)
	if s := serial(t, r); s != 2 {
		t.Fatalf("after the interval: serial %d, want 2", s)
	}
	// a broken new certificate: the old one stays and the failure is logged
	if err := os.WriteFile(p.CertFile, []byte("-----BEGIN CERTIFICATE-----\nbroken\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	clk.add(time.Second)
	if s := serial(t, r); s != 2 {
		t.Fatalf("bad pair: serial %d, want the previous 2", s)
	}
	if !strings.Contains(logs.String(), "does not load") {
		t.Errorf("bad pair not logged: %s", logs.String())
	}
	// fixed again: picked up at the next check
	certtest.Write(t, dir, 3)
	clk.add(time.Second)
	if s := serial(t, r); s != 3 {
		t.Fatalf("fixed pair: serial %d, want 3", s)
	}
}

func TestNewRefusesMissingOrBadPair(t *testing.T) {
	dir := t.TempDir()
	p := certtest.Write(t, dir, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if _, err := certreload.New(certreload.Config{CertFile: p.CertFile}, log); err == nil {
		t.Error("no key file accepted")
	}
	if _, err := certreload.New(certreload.Config{CertFile: p.CertFile, KeyFile: dir + "/none.pem"}, log); err == nil {
		t.Error("missing key file accepted")
	}
	other := certtest.Write(t, t.TempDir(), 2)
	if _, err := certreload.New(certreload.Config{CertFile: p.CertFile, KeyFile: other.KeyFile}, log); err == nil {
		t.Error("mismatched pair accepted")
	}
}

func TestTLSConfigFloorsVersion(t *testing.T) {
	p := certtest.Write(t, t.TempDir(), 1)
	r, err := certreload.New(certreload.Config{CertFile: p.CertFile, KeyFile: p.KeyFile}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	c := r.TLSConfig()
	if c.MinVersion != tls.VersionTLS12 {
		t.Errorf("min version %x", c.MinVersion)
	}
	for _, s := range c.CipherSuites {
		if name := tls.CipherSuiteName(s); !strings.Contains(name, "ECDHE") || !(strings.Contains(name, "GCM") || strings.Contains(name, "CHACHA20")) {
			t.Errorf("suite %s", name)
		}
	}
}
