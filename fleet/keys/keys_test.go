package keys_test

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

func newService(tb testing.TB) (*keys.Service, *ratelimit.Memory) {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: tb.TempDir()})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	h, err := apikey.NewHasher([]byte("bench-secret-0123456789"))
	if err != nil {
		tb.Fatal(err)
	}
	lim := ratelimit.NewMemory(nil)
	return keys.New(keys.Config{}, st, h, lim, slog.New(slog.NewTextHandler(io.Discard, nil))), lim
}

// authAndLimit is what the middleware does per request.
func authAndLimit(ctx context.Context, svc *keys.Service, lim *ratelimit.Memory, key string) error {
	p, err := svc.Authenticate(ctx, key)
	if err != nil {
		return err
	}
	_, err = lim.Allow(ctx, p.KeyID, ratelimit.Limit{Rate: p.Rate, Burst: p.Burst, Window: time.Minute})
	return err
}

func TestAuthAndLimitDoNotAllocate(t *testing.T) {
	svc, lim := newService(t)
	ctx := context.Background()
	c, err := svc.Create(ctx, keys.CreateRequest{Org: "o", Env: "test", Name: "n", Permissions: []string{"all"}, RPM: keys.MaxRPM})
	if err != nil {
		t.Fatal(err)
	}
	if err := authAndLimit(ctx, svc, lim, c.Key); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(200, func() { _ = authAndLimit(ctx, svc, lim, c.Key) }); n != 0 && !raceEnabled {
		t.Fatalf("auth and rate limit allocate %v times per request", n)
	}
}

func TestRevokedAndUnknown(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	c, _ := svc.Create(ctx, keys.CreateRequest{Org: "o", Env: "live", Name: "n", Permissions: []string{"trips:read"}})
	p, err := svc.Authenticate(ctx, c.Key)
	if err != nil || p.Org != "o" || p.Env != "live" || p.Rate != 100 || p.Burst != 200 {
		t.Fatalf("principal %+v %v", p, err)
	}
	if _, err := svc.Authenticate(ctx, "fhk_live_"+"00000000000000000000000000000000000000000000000000000000000000ff"); err == nil {
		t.Fatal("unknown key accepted")
	}
	if _, err := svc.Revoke(ctx, c.Record.Scope(), c.Record.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, c.Key); err == nil {
		t.Fatal("revoked key accepted")
	}
}

func BenchmarkAuthAndLimit(b *testing.B) {
	svc, lim := newService(b)
	ctx := context.Background()
	c, _ := svc.Create(ctx, keys.CreateRequest{Org: "o", Env: "test", Name: "n", Permissions: []string{"all"}, RPM: keys.MaxRPM})
	_ = authAndLimit(ctx, svc, lim, c.Key)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if err := authAndLimit(ctx, svc, lim, c.Key); err != nil {
				b.Fatal(err)
			}
		}
	})
}
