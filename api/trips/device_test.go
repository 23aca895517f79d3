package trips_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apitrips "github.com/fleethub/fleethub/api/trips"
	domain "github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestDeviceInfoOfEachUpload: a batch's device_info takes the fields
// the interface gives it (device_id, device_model, os_version,
// app_version); signal_strength and satellites_count, which feed only a
// single upload's quality assessment, are refused on a batch as unknown
// fields instead of being taken without effect. A single upload's
// satellites_count is a whole number: 3.5 satellites is refused naming
// it. Nothing is stored by a refused upload.
func TestDeviceInfoOfEachUpload(t *testing.T) {
	ctx := context.Background()
	svc, call := startTrips(t)
	start := time.Now().Add(-time.Minute)
	tr, err := svc.Start(ctx, "org-a", "test", "tester", domain.StartRequest{VehicleID: "veh-dev", StartTime: &start})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, body string) (int, string, map[string]any) { return call("POST", path, body) }
	ts := time.Now().Add(-30 * time.Second).UTC().Format(time.RFC3339)
	point := fmt.Sprintf(`"latitude":40,"longitude":-83,"timestamp":%q`, ts)
	for _, c := range []struct {
		path, device, code, field string
	}{
		{"/v1/locations/batch", `{"device_id":"d1","signal_strength":-70}`, "validation_failed", "device_info.signal_strength"},
		{"/v1/locations/batch", `{"device_id":"d1","satellites_count":9}`, "validation_failed", "device_info.satellites_count"},
		{"/v1/locations/single", `{"device_id":"d1","satellites_count":3.5}`, "invalid_location", "device_info.satellites_count"},
	} {
		body := fmt.Sprintf(`{"trip_id":%q,%s,"device_info":%s}`, tr.TripID, point, c.device)
		if strings.HasSuffix(c.path, "batch") {
			body = fmt.Sprintf(`{"trip_id":%q,"locations":[{%s}],"device_info":%s}`, tr.TripID, point, c.device)
		}
		status, code, details := post(c.path, body)
		if status != 400 || code != c.code || details[c.field] == nil {
			t.Errorf("%s with device_info %s: %d %s %v, want 400 %s naming %s", c.path, c.device, status, code, details, c.code, c.field)
		}
	}
	got, err := svc.Get(ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Analytics.LocationsCount != 0 {
		t.Errorf("refused uploads stored %d points", got.Analytics.LocationsCount)
	}
	if status, code, _ := post("/v1/locations/single", fmt.Sprintf(`{"trip_id":%q,%s,"device_info":{"device_id":"d1","satellites_count":9,"signal_strength":-70}}`, tr.TripID, point)); status != 200 {
		t.Errorf("a single upload with 9 satellites: %d %s", status, code)
	}
}

// startTrips serves the trip routes over a trip service on a real SQLite
// store; call sends a request with a key holding every permission and
// answers its status, error code and error details.
func startTrips(t *testing.T) (*domain.Service, func(method, path, body string) (int, string, map[string]any)) {
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
	return svc, func(method, path, body string) (int, string, map[string]any) {
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
		var e struct {
			Error struct {
				Code    string         `json:"code"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if err := json.NewDecoder(res.Body).Decode(&e); err != nil {
			t.Fatal(err)
		}
		return res.StatusCode, e.Error.Code, e.Error.Details
	}
}
