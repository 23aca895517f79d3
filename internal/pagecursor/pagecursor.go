// Package pagecursor ties a listing's cursors to the filters they were made
// with: a cursor carries a hash of them, and a cursor given with other
// filters is not one of that listing (each listing refuses it as it
// refuses any cursor it did not make).
package pagecursor

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"strconv"
	"strings"
)

// Hash returns the hash of a listing's filters: parts are its name and
// its filter values in a fixed order, an absent filter as "".
func Hash(parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(strconv.Itoa(len(p)) + ":" + p))
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Seal returns the cursor of position pos in the listing whose filters
// hash to hash.
func Seal(pos, hash string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(hash + "." + pos))
}

// Open returns the position of a cursor Seal made with hash; false when s
// is not such a cursor or was made under other filters.
func Open(s, hash string) (string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return "", false
	}
	h, pos, ok := strings.Cut(string(raw), ".")
	if !ok || h != hash {
		return "", false
	}
	return pos, true
}
