package tokens_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// FuzzVerify: whatever a client sends as a browser token, Verify never
// panics, and only a token signed with the server's secret opens (an
// HS256 JSON Web Token: the header says HS256, and the signature is the
// HMAC-SHA256 of header and payload, base64url without padding); a
// minted token opens for its organization and grant, and any edit of one
// byte of it is refused.
func FuzzVerify(f *testing.F) {
	clk := &clock{now: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	st := testdb.SQLiteIn(f, f.TempDir())
	addStream(f, st, "org-a", "test", "str_a")
	s, err := tokens.New(tokens.Config{Now: clk.Now, AfterFunc: clk.AfterFunc}, secret, st, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	m, err := s.Mint(context.Background(), key, tokens.MintRequest{Scopes: []string{"streams:read"}, StreamIDs: []string{"str_a"}, TTL: time.Minute})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(m.Token, uint16(0), byte('x'))
	f.Add(m.Token[:len(m.Token)-1], uint16(len(m.Token)-1), byte('A'))
	f.Add("eyJhbGciOiJub25lIn0.eyJpc3MiOiJmbGVldGh1YiJ9.", uint16(40), byte('.'))
	f.Fuzz(func(t *testing.T, sent string, at uint16, b byte) {
		if p, err := s.Verify(context.Background(), sent); err == nil {
			i := strings.LastIndexByte(sent, '.')
			h, _, _ := strings.Cut(sent, ".")
			hd, _ := base64.RawURLEncoding.DecodeString(h)
			mac := hmac.New(sha256.New, secret)
			mac.Write([]byte(sent[:i]))
			if sent[i+1:] != base64.RawURLEncoding.EncodeToString(mac.Sum(nil)) || !strings.Contains(string(hd), `"HS256"`) {
				t.Fatalf("%q opened for %+v without its signature", sent, p)
			}
		}
		p, err := s.Verify(context.Background(), m.Token)
		if err != nil || p.Org != "org-a" || p.Env != "test" || p.Token == nil || len(p.Token.StreamIDs) != 1 || p.Token.StreamIDs[0] != "str_a" {
			t.Fatalf("the minted token opens as %+v, %v", p, err)
		}
		edited := []byte(m.Token)
		edited[int(at)%len(edited)] = b
		if string(edited) != m.Token {
			if p, err := s.Verify(context.Background(), string(edited)); err == nil {
				t.Fatalf("an edit of the minted token, %q, opened for %+v", edited, p)
			}
		}
	})
}
