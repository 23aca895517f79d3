package main

import (
	"crypto/tls"
	"errors"
	"log/slog"

	"github.com/fleethub/fleethub/internal/certreload"
)

// serverTLS is the server's TLS configuration from --tls-cert and
// --tls-key (nil when neither is given: plain HTTP).
func serverTLS(cfg *config, log *slog.Logger) (*tls.Config, error) {
	switch {
	case cfg.TLSCert == "" && cfg.TLSKey == "":
		if cfg.PlainAddr != "" {
			return nil, errors.New("--plain-addr serves plain HTTP beside an HTTPS --addr: it needs --tls-cert and --tls-key")
		}
		return nil, nil
	case cfg.TLSCert == "":
		return nil, errors.New("--tls-key needs --tls-cert (the PEM certificate of the key)")
	case cfg.TLSKey == "":
		return nil, errors.New("--tls-cert needs --tls-key (the PEM private key of the certificate)")
	}
	r, err := certreload.New(certreload.Config{CertFile: cfg.TLSCert, KeyFile: cfg.TLSKey, Interval: cfg.TLSReloadCheck}, log)
	if err != nil {
		return nil, err
	}
	return r.TLSConfig(), nil
}
