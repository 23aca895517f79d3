package dedup_test

import (
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/internal/redisresend"
	"github.com/fleethub/fleethub/internal/testredis"
	"github.com/redis/go-redis/v9"
)

// A claim whose reply comes after the client's read timeout was made by
// Redis all the same; go-redis sends it again on a new connection. The
// second run finds the call's own claim and answers Unseen, not
// InFlight (which would hold the event until the lease ran out), and an
// id twice in one ClaimAll is still claimed once. A Seen sent again
// likewise finds its own record and answers false, not a duplicate.
func TestClaimSentAgainIsStillTheCallers(t *testing.T) {
	direct := testredis.Client(t)
	prefix := testredis.Prefix(t, direct, "dedup")
	// the script in Redis's cache, so that the first command through the
	// proxy is the claim itself
	if _, err := dedup.NewRedis(direct, prefix+"warm:", time.Minute).Claim(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	if _, err := dedup.NewRedis(direct, prefix+"warm:", time.Minute).Seen(t.Context(), "w"); err != nil {
		t.Fatal(err)
	}
	slowClient := func(t *testing.T) *redis.Client {
		c := redisresend.New(t, direct.Options())
		c.Hold(t)
		return c.Client
	}
	w := dedup.NewRedis(slowClient(t), prefix, time.Minute)
	if dup, err := w.Seen(t.Context(), "s"); err != nil || dup {
		t.Fatalf("Seen sent again: %v, %v; want false (the id is new)", dup, err)
	}
	if dup, err := dedup.NewRedis(direct, prefix, time.Minute).Seen(t.Context(), "s"); err != nil || !dup {
		t.Fatalf("Seen of the recorded id: %v, %v; want true", dup, err)
	}
	if st, err := dedup.NewRedis(direct, prefix, time.Minute).Claim(t.Context(), "s"); err != nil || st != dedup.Duplicate {
		t.Fatalf("Claim of the recorded id: %v, %v; want Duplicate", st, err)
	}
	w = dedup.NewRedis(slowClient(t), prefix, time.Minute)
	if st, err := w.Claim(t.Context(), "x"); err != nil || st != dedup.Unseen {
		t.Fatalf("Claim sent again: %v, %v; want Unseen", st, err)
	}
	w = dedup.NewRedis(slowClient(t), prefix, time.Minute)
	states := make([]dedup.State, 3)
	if err := w.ClaimAll(t.Context(), []string{"y", "y", "x"}, states); err != nil {
		t.Fatal(err)
	}
	if want := []dedup.State{dedup.Unseen, dedup.InFlight, dedup.InFlight}; !slices.Equal(states, want) {
		t.Fatalf("ClaimAll sent again = %v, want %v (x is the first call's)", states, want)
	}
}
