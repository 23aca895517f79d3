package trips_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apitrips "github.com/fleethub/fleethub/api/trips"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// serveJSON starts the trip routes over a fresh store and returns a
// call answering the status and the decoded body of a request.
func serveJSON(t *testing.T) func(method, path, body string) (int, map[string]any) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	svc, err := domain.New(domain.Config{}, st, nil, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	key := apitest.NewKey("all")
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	srv.Handle(apitrips.New(svc, ratelimit.NewMemory(nil)).Routes()...)
	base := "http://" + apitest.Serve(t, srv)
	return func(method, path, body string) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-API-Key", key.Key)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var m map[string]any
		if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, m
	}
}

// TestPlaceWithoutAddressSaysNull: a trip's start_location and
// end_location, a pause's pause_location and a resume's
// resume_location carry the address the interface names in every
// answer: null when the request gave none (the end taken from the last
// point has none either), the request's otherwise.
func TestPlaceWithoutAddressSaysNull(t *testing.T) {
	call := serveJSON(t)
	place := func(where string, m map[string]any, field string, want any) {
		t.Helper()
		loc, ok := m[field].(map[string]any)
		if !ok {
			t.Fatalf("%s: %s is %v, want an object", where, field, m[field])
		}
		if got, ok := loc["address"]; !ok || got != want {
			t.Errorf("%s: %s.address is %v (present %v), want %v", where, field, got, ok, want)
		}
	}
	status, tr := call("POST", "/v1/trips", `{"vehicle_id":"veh-1","start_time":"2026-01-01T10:00:00Z","start_location":{"latitude":40,"longitude":-83}}`)
	if status != 201 {
		t.Fatalf("start: %d %v", status, tr)
	}
	place("start", tr, "start_location", nil)
	id := tr["trip_id"].(string)
	if status, m := call("POST", "/v1/locations/single", `{"trip_id":"`+id+`","latitude":40.01,"longitude":-83,"timestamp":"2026-01-01T10:05:00Z"}`); status != 200 {
		t.Fatalf("upload: %d %v", status, m)
	}
	status, m := call("POST", "/v1/trips/"+id+"/pause", `{"location":{"latitude":40.01,"longitude":-83}}`)
	if status != 200 {
		t.Fatalf("pause: %d %v", status, m)
	}
	place("pause", m, "pause_location", nil)
	status, m = call("POST", "/v1/trips/"+id+"/resume", `{"location":{"latitude":40.01,"longitude":-83,"address":"Depot"}}`)
	if status != 200 {
		t.Fatalf("resume: %d %v", status, m)
	}
	place("resume", m, "resume_location", "Depot")
	status, m = call("POST", "/v1/trips/"+id+"/stop", `{}`)
	if status != 200 {
		t.Fatalf("stop: %d %v", status, m)
	}
	place("stop", m, "start_location", nil)
	place("stop", m, "end_location", nil)
	status, m = call("GET", "/v1/trips?include_analytics=false", "")
	if status != 200 {
		t.Fatalf("list: %d %v", status, m)
	}
	items, _ := m["trips"].([]any)
	if len(items) != 1 {
		t.Fatalf("list: %v, want the trip", m["trips"])
	}
	place("list", items[0].(map[string]any), "end_location", nil)
}
