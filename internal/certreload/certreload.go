// Package certreload serves a TLS certificate from a PEM pair on disk and
// picks up a new pair when its files change, with no restart.
//
// GetCertificate looks at the files' modification time and size at most
// once per check interval; when either changed it reads the pair again.
// A new pair that does not load (half written, mismatched, unreadable)
// is logged and the previous certificate stays in service, so a rotation
// that goes wrong never takes the listener down.
//
// Concurrency: a Reloader is safe for concurrent use; every handshake of
// every connection calls GetCertificate. The current certificate and the
// time of the last check are guarded by a mutex; the files are read under
// it, at most once per interval.
package certreload

import (
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// DefaultInterval is how often the files are looked at, at most.
const DefaultInterval = 3 * time.Second

// Config of a Reloader.
type Config struct {
	CertFile, KeyFile string
	// Interval between two looks at the files (0: DefaultInterval).
	Interval time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
}

type stamp struct {
	mod  time.Time
	size int64
}

// Reloader holds the certificate in service.
type Reloader struct {
	cfg Config
	log *slog.Logger

	mu      sync.Mutex
	cert    *tls.Certificate
	stamps  [2]stamp
	checked time.Time
}

// New loads the pair; an error here is a startup error.
func New(cfg Config, log *slog.Logger) (*Reloader, error) {
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("certreload: both a certificate and a key file are needed")
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	r := &Reloader{cfg: cfg, log: log}
	st, err := r.stat()
	if err != nil {
		return nil, err
	}
	cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("certreload: load %s and %s: %w", cfg.CertFile, cfg.KeyFile, err)
	}
	r.cert, r.stamps, r.checked = &cert, st, cfg.Now()
	return r, nil
}

func (r *Reloader) stat() ([2]stamp, error) {
	var st [2]stamp
	for i, name := range []string{r.cfg.CertFile, r.cfg.KeyFile} {
		fi, err := os.Stat(name)
		if err != nil {
			return st, fmt.Errorf("certreload: %w", err)
		}
		st[i] = stamp{mod: fi.ModTime(), size: fi.Size()}
	}
	return st, nil
}

// GetCertificate is tls.Config.GetCertificate: the pair in service, read
// again first when the check interval passed and the files changed.
func (r *Reloader) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.cfg.Now()
	if now.Sub(r.checked) < r.cfg.Interval {
		return r.cert, nil
	}
	r.checked = now
	st, err := r.stat()
	if err != nil {
		r.log.Warn("TLS certificate files unreadable; the previous certificate stays", "error", err)
		return r.cert, nil
	}
	if st == r.stamps {
		return r.cert, nil
	}
	cert, err := tls.LoadX509KeyPair(r.cfg.CertFile, r.cfg.KeyFile)
	if err != nil {
		// a pair caught mid-rotation is tried again at the next check
		r.log.Warn("new TLS certificate does not load; the previous certificate stays", "cert", r.cfg.CertFile, "error", err)
		return r.cert, nil
	}
	r.cert, r.stamps = &cert, st
	r.log.Info("TLS certificate reloaded", "cert", r.cfg.CertFile)
	return r.cert, nil
}

// TLSConfig is the server configuration around the reloader: TLS 1.2 at
// least, and on TLS 1.2 only ECDHE suites with AES-GCM or ChaCha20-Poly1305
// (TLS 1.3's suites are all of that kind and not configurable).
func (r *Reloader) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:     tls.VersionTLS12,
		GetCertificate: r.GetCertificate,
		CipherSuites: []uint16{
			tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
			tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
			tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
			tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
		},
		// fasthttp speaks HTTP/1.1 only
		NextProtos: []string{"http/1.1"},
	}
}
