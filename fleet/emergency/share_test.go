package emergency

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

func TestShareLinks(t *testing.T) {
	l, err := NewLinks([]byte("0123456789abcdef"), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewLinks([]byte("fedcba9876543210"), time.Hour)
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	sc := store.Scope{Org: "org-a", Env: "live"}
	tok := l.token(sc, "inc_1", now.Add(time.Hour))
	gotSc, id, exp, err := l.check(tok, now)
	if err != nil || gotSc != sc || id != "inc_1" || !exp.Equal(now.Add(time.Hour)) {
		t.Fatalf("check: %v %q %v %v", gotSc, id, exp, err)
	}
	if _, _, _, err := l.check(tok, now.Add(time.Hour)); !errors.Is(err, ErrShareExpired) {
		t.Errorf("at expiry: %v, want ErrShareExpired", err)
	}
	enc, sig, _ := strings.Cut(tok, ".")
	forged := b64.EncodeToString([]byte("inc_1\norg-b\nlive\n9999999999")) + "." + sig
	for name, bad := range map[string]string{
		"other secret": other.token(sc, "inc_1", now.Add(time.Hour)),
		"other org":    forged,
		"no signature": enc,
		"cut":          tok[:len(tok)-3],
		"not base64":   "%%%." + sig,
		"empty":        "",
	} {
		if _, _, _, err := l.check(bad, now); !errors.Is(err, ErrShareNotFound) {
			t.Errorf("%s: %v, want ErrShareNotFound", name, err)
		}
	}
	if _, err := NewLinks([]byte("short"), 0); err == nil {
		t.Error("a 5-byte secret was taken")
	}
}
