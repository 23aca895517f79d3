package trips_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apitrips "github.com/fleethub/fleethub/api/trips"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestSingleLimiterErrorRefused: when the per-trip limit of single
// uploads cannot be checked (a limiter that fails: Redis without the
// memory fallback, refusing connections), POST /v1/locations/single
// answers 500 internal_error as the per-key limit does, the failure is
// logged, and the point is not stored: the limit is never skipped
// silently.
func TestSingleLimiterErrorRefused(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	svc, err := domain.New(domain.Config{}, st, nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Add(-time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", domain.StartRequest{VehicleID: "veh-1", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}

	before, err := svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}

	// a port nothing listens on
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	rc := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1, DialTimeout: time.Second})
	t.Cleanup(func() { rc.Close() })
	broken := ratelimit.NewRedis(rc, "")

	key := apitest.NewKey("all")
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	srv.Handle(apitrips.New(svc, broken).Routes()...)
	base := "http://" + apitest.Serve(t, srv)

	body := fmt.Sprintf(`{"trip_id":%q,"latitude":40,"longitude":-83,"timestamp":%q}`, tr.TripID, time.Now().Add(-30*time.Second).UTC().Format(time.RFC3339))
	req, err := http.NewRequest("POST", base+"/v1/locations/single", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", key.Key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	if err := json.NewDecoder(res.Body).Decode(&e); err != nil || res.StatusCode != 500 || e.Error.Code != "internal_error" {
		t.Errorf("single upload with the limiter failing: %d %+v %v, want 500 internal_error", res.StatusCode, e, err)
	}
	if !strings.Contains(logs.String(), "request failed") || !strings.Contains(logs.String(), "single upload") {
		t.Errorf("the limiter's failure is not logged: %s", logs.String())
	}
	after, err := svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if !after.UpdatedAt.Equal(before.UpdatedAt) || after.EndLocation != nil {
		t.Errorf("the point was stored past the failed limit: updated %v, was %v; last location %v", after.UpdatedAt, before.UpdatedAt, after.EndLocation)
	}
}
