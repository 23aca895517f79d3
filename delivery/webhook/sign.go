package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
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
	m := hmac.New(sha256.New, key)
	var tmp [20]byte
	m.Write([]byte(id))
	m.Write([]byte{'.'})
	m.Write(strconv.AppendInt(tmp[:0], ts, 10))
	m.Write([]byte{'.'})
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
