package optimization_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/api/optimization"
	domain "github.com/fleethub/fleethub/fleet/optimization"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/publish"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestApplyWhenTheBusRefuses: an apply whose route_assigned events the
// bus refuses answers an error and leaves the optimization completed, so
// that the same apply succeeds once the bus takes events again, and its
// events go out then.
func TestApplyWhenTheBusRefuses(t *testing.T) {
	st, err := sqlite.Open(t.Context(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	down := embedbus.New(embedbus.Config{})
	if err := down.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	bus := embedbus.New(embedbus.Config{})
	t.Cleanup(func() { bus.Close(context.Background()) })
	pub := &switchable{}
	pub.cur.Store(publish.New(down))
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), auth{}, nil)
	srv.Handle(optimization.New(domain.New(domain.Config{}, st, pub, nil)).Routes()...)
	url := "http://" + apitest.Serve(t, srv)

	code, res := post(t, url, grid(2, 1, 10))
	if code != 200 {
		t.Fatalf("%d %v", code, res)
	}
	id := res["data"].(map[string]any)["optimization_id"].(string)
	apply := func() int {
		req, _ := http.NewRequest("PUT", url+"/api/v1/fleet/optimization/"+id+"/apply", nil)
		req.Header.Set("X-API-Key", key)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		return r.StatusCode
	}
	status := func() string {
		req, _ := http.NewRequest("GET", url+"/api/v1/fleet/optimization/"+id, nil)
		req.Header.Set("X-API-Key", key)
		r, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		if d, ok := m["data"].(map[string]any); ok {
			m = d
		}
		s, _ := m["status"].(string)
		return s
	}
	if c := apply(); c < 500 {
		t.Fatalf("apply with the bus refusing: %d, want a 5xx", c)
	}
	if s := status(); s != "completed" {
		t.Fatalf("after a refused apply the optimization is %q, want completed", s)
	}
	pub.cur.Store(publish.New(bus))
	if c := apply(); c != 200 {
		t.Fatalf("apply again: %d", c)
	}
	if s := status(); s != "applied" {
		t.Fatalf("after the apply the optimization is %q", s)
	}
	parts, err := bus.Partitions(t.Context(), hub.TopicEvents)
	if err != nil {
		t.Fatal(err)
	}
	n := int64(0)
	for p := range parts {
		first, end, err := bus.Bounds(t.Context(), hub.TopicEvents, p)
		if err != nil {
			t.Fatal(err)
		}
		n += end - first
	}
	if n == 0 {
		t.Fatal("no route_assigned event reached the bus")
	}
}

// switchable publishes on the bus it is given: a closed one refuses
// every event, as a bus that is down does.
type switchable struct {
	cur atomic.Pointer[publish.Publisher]
}

func (s *switchable) Publish(ctx context.Context, org, env string, evs ...*event.Event) error {
	return s.cur.Load().Publish(ctx, org, env, evs...)
}
