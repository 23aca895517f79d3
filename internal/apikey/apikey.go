// Package apikey holds the API key format: parsing, generation and hashing.
//
// A key reads fhk_<env>_<64 lowercase hex>, env being test or live. Only an
// HMAC-SHA-256 of the whole key under a server secret is ever stored.
//
// It also holds what authentication answers: the Principal a request acts
// for and the errors of a key no store knows (ErrNotFound) or a revoked
// one (ErrRevoked).
//
// Concurrency: Parse, Generate and Equal keep no state and are safe for
// concurrent use. A Hasher is safe for concurrent use: its secret is only
// read, and each Sum takes a hash state of its own from a pool. A
// Principal handed out by an authenticator may be shared by many requests
// at once: read it, never modify it.
package apikey

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"sync"
)

// Prefix is the fixed service prefix of every key.
const Prefix = "fhk"

// Length is the length of a well-formed key: "fhk_" + env(4) + "_" + 64.
const Length = 4 + 4 + 1 + 64

// Environments.
const (
	EnvTest = "test"
	EnvLive = "live"
)

// Errors returned by Parse.
var (
	ErrMissingPrefix = errors.New("apikey: missing fhk_ prefix")
	ErrMalformed     = errors.New("apikey: malformed key")
)

// Hash is the stored form of a key.
type Hash [sha256.Size]byte

// Parse checks the format of key and returns its environment. It does not
// allocate.
func Parse(key string) (env string, err error) {
	if len(key) < 4 || key[:4] != Prefix+"_" {
		return "", ErrMissingPrefix
	}
	if len(key) != Length {
		return "", ErrMalformed
	}
	switch key[4:9] {
	case "test_":
		env = EnvTest
	case "live_":
		env = EnvLive
	default:
		return "", ErrMalformed
	}
	for i := 9; i < Length; i++ {
		c := key[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return "", ErrMalformed
		}
	}
	return env, nil
}

// Generate returns a new random key for env.
func Generate(env string) (string, error) {
	if env != EnvTest && env != EnvLive {
		return "", fmt.Errorf("apikey: unknown environment %q", env)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("apikey: random: %w", err)
	}
	return Prefix + "_" + env + "_" + hex.EncodeToString(b[:]), nil
}

// Hasher computes key hashes under a server secret. It is safe for
// concurrent use and does not allocate in the steady state.
type Hasher struct {
	secret []byte
	pool   sync.Pool // of *hashState
}

type hashState struct {
	mac hash.Hash
	in  [Length]byte
	out [sha256.Size]byte
}

// NewHasher returns a Hasher for secret, which must be at least 16 bytes.
func NewHasher(secret []byte) (*Hasher, error) {
	if len(secret) < 16 {
		return nil, errors.New("apikey: secret shorter than 16 bytes")
	}
	h := &Hasher{secret: append([]byte(nil), secret...)}
	h.pool.New = func() any { return &hashState{mac: hmac.New(sha256.New, h.secret)} }
	return h, nil
}

// Sum returns the HMAC-SHA-256 of key.
func (h *Hasher) Sum(key string) Hash {
	st := h.pool.Get().(*hashState)
	st.mac.Reset()
	for len(key) > 0 {
		n := copy(st.in[:], key)
		st.mac.Write(st.in[:n])
		key = key[n:]
	}
	var out Hash
	copy(out[:], st.mac.Sum(st.out[:0]))
	h.pool.Put(st)
	return out
}

// Equal compares two hashes in constant time.
func Equal(a, b Hash) bool { return hmac.Equal(a[:], b[:]) }

// Hex returns the lowercase hex form of a hash, used as the storage key.
func (h Hash) Hex() string { return hex.EncodeToString(h[:]) }
