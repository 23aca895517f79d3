package dedup_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fleethub/fleethub/filters/dedup"
)

// downWindow is a shared window that cannot be reached.
type downWindow struct{}

var errUnreachable = errors.New("dial tcp: connection refused")

func (downWindow) Seen(context.Context, string) (bool, error) { return false, errUnreachable }
func (downWindow) Claim(context.Context, string) (dedup.State, error) {
	return dedup.Unseen, errUnreachable
}
func (downWindow) Done(context.Context, ...string) error { return errUnreachable }
func (downWindow) Forget(context.Context, string) error  { return errUnreachable }

// testFailoverTo: while the primary is down, a Failover answers from
// local (run for each in-memory window by TestInMemory).
func testFailoverTo(t *testing.T, local dedup.Window) {
	ctx := context.Background()
	f := dedup.NewFailover(downWindow{}, local)
	if dup, err := f.Seen(ctx, "a"); err != nil || dup {
		t.Fatalf("first Seen: %v %v", dup, err)
	}
	if dup, err := f.Seen(ctx, "a"); err != nil || !dup {
		t.Fatalf("second Seen: %v %v", dup, err)
	}
	if st, err := f.Claim(ctx, "b"); err != nil || st != dedup.Unseen {
		t.Fatalf("Claim: %v %v", st, err)
	}
	if st, _ := f.Claim(ctx, "b"); st != dedup.InFlight {
		t.Fatalf("second Claim: %v", st)
	}
	if err := f.Done(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Claim(ctx, "b"); st != dedup.Duplicate {
		t.Fatalf("Claim after Done: %v", st)
	}
	if err := f.Forget(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	if st, _ := f.Claim(ctx, "b"); st != dedup.Unseen {
		t.Fatalf("Claim after Forget: %v", st)
	}
	if _, err := f.Seen(ctx, ""); !errors.Is(err, dedup.ErrEmptyID) {
		t.Fatalf("empty id: %v", err)
	}
}
