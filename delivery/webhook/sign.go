package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"hash"
	"strconv"
	"strings"
	"sync"
)

// Standard Webhooks signing: the signed content is
// "<webhook-id>.<webhook-timestamp>.<body>", the signature the base64 of
// its HMAC-SHA256 under the secret's key (the base64 after "whsec_"), sent
// as "v1,<signature>"; several signatures are separated by spaces.

// SecretPrefix starts every signing secret.
const SecretPrefix = "whsec_"

// ErrBadSecret is a signing secret that is not "whsec_" + base64.
var ErrBadSecret = errors.New("webhook: malformed signing secret")

// secretKey returns the HMAC key of a "whsec_…" secret.
func secretKey(secret string) ([]byte, error) {
	s, ok := strings.CutPrefix(secret, SecretPrefix)
	if !ok || s == "" {
		return nil, ErrBadSecret
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadSecret
	}
	return k, nil
}

// appendSignature appends "v1,<base64 HMAC-SHA256(key, id.ts.body)>".
func appendSignature(dst, key []byte, id string, ts int64, body []byte) []byte {
	return appendMAC(dst, hmac.New(sha256.New, key), id, ts, body)
}

// appendMAC appends "v1,<base64 MAC of id.ts.body>" computed with m, a
// keyed HMAC in its initial state.
func appendMAC(dst []byte, m hash.Hash, id string, ts int64, body []byte) []byte {
	// id, the dots and the timestamp in one write, on the stack
	var head [128]byte
	h := append(head[:0], id...)
	h = append(h, '.')
	h = strconv.AppendInt(h, ts, 10)
	h = append(h, '.')
	m.Write(h)
	m.Write(body)
	var sum [sha256.Size]byte
	dst = append(dst, "v1,"...)
	return base64.StdEncoding.AppendEncode(dst, m.Sum(sum[:0]))
}

// Sign returns the webhook-signature header value of a message signed by
// every key (space separated, in order).
func Sign(keys [][]byte, id string, ts int64, body []byte) string {
	var buf []byte
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ' ')
		}
		buf = appendSignature(buf, k, id, ts, body)
	}
	return string(buf)
}

// macPool keeps HMAC-SHA256 states keyed by one secret. A state's Reset
// returns it to its keyed start without hashing the key again, so a
// delivery is signed with no key setup and no allocation of the HMAC.
type macPool struct{ p sync.Pool }

func newMACPool(key []byte) *macPool {
	mp := &macPool{}
	mp.p.New = func() any { return hmac.New(sha256.New, key) }
	return mp
}

// appendSignature appends the signature of id.ts.body under the pool's
// key, as appendSignature does.
func (mp *macPool) appendSignature(dst []byte, id string, ts int64, body []byte) []byte {
	m := mp.p.Get().(hash.Hash)
	dst = appendMAC(dst, m, id, ts, body)
	m.Reset()
	mp.p.Put(m)
	return dst
}
