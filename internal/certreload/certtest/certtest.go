// Package certtest makes self-signed ECDSA certificates for tests.
package certtest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Pair is a certificate written to disk.
type Pair struct {
	CertFile, KeyFile string
	Cert              *x509.Certificate
}

// Pool trusts the pair's certificate (it is its own issuer).
func (p Pair) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.Cert)
	return pool
}

// Write makes a certificate for localhost and 127.0.0.1 with the given
// serial number and writes it and its key as PEM files named cert.pem and
// key.pem in dir (replacing what is there).
func Write(t testing.TB, dir string, serial int64) Pair {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatalf("certtest: key: %v", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial),
		Subject:               pkix.Name{CommonName: "localhost"},
		DNSNames:              []string{"localhost"},
		IPAddresses:           []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatalf("certtest: certificate: %v", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatalf("certtest: parse: %v", err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatalf("certtest: key: %v", err)
	}
	p := Pair{CertFile: filepath.Join(dir, "cert.pem"), KeyFile: filepath.Join(dir, "key.pem"), Cert: cert}
	// the key first: a reader between the two writes sees a mismatched
	// pair, which the reloader refuses, not a half-written file
	if err := os.WriteFile(p.KeyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600); err != nil {
		t.Fatalf("certtest: %v", err)
	}
	if err := os.WriteFile(p.CertFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatalf("certtest: %v", err)
	}
	return p
}
