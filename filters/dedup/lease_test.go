package dedup

import (
	"testing"
	"time"
)

// TestLocalLease: a claim its holder never finished lapses after the
// lease, and lapsed claims are dropped before the table grows past size.
func TestLocalLease(t *testing.T) {
	now := time.Unix(1_700_000_000, 0)
	l := NewLocal(2, time.Minute)
	l.now = func() time.Time { return now }
	ctx := t.Context()
	for _, id := range []string{"a", "b"} {
		if st, err := l.Claim(ctx, id); err != nil || st != Unseen {
			t.Fatalf("Claim(%s) = %v, %v", id, st, err)
		}
	}
	now = now.Add(DefaultLease - time.Millisecond)
	if st, _ := l.Claim(ctx, "a"); st != InFlight {
		t.Fatalf("Claim(a) within its lease = %v, want InFlight", st)
	}
	now = now.Add(time.Millisecond)
	if st, _ := l.Claim(ctx, "a"); st != Unseen {
		t.Fatalf("Claim(a) after its lease = %v, want Unseen", st)
	}
	l.mu.Lock()
	n := len(l.claims)
	_, hasB := l.claims["b"]
	l.mu.Unlock()
	if n != 1 || hasB {
		t.Errorf("claims after a sweep: %d, b kept: %v; want only a", n, hasB)
	}
}
