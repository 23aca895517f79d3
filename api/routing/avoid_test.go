package routing_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	apirouting "github.com/fleethub/fleethub/api/routing"
	"github.com/fleethub/fleethub/internal/routing"
)

func postMatrix(t *testing.T, url string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url+"/v1/routing/sources_to_targets", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", testKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// TestMatrixAvoid: on the avoid network (internal/routing/testdata) the
// car takes the motorway from A to B, the toll road without highways and
// the residential detour without either; an unknown kind is a 400 naming
// the entry.
func TestMatrixAvoid(t *testing.T) {
	g, err := routing.Load("../../internal/routing/testdata/avoid.osm.pbf", routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := startServer(t, apirouting.New(g, nil))
	a, b := map[string]float64{"lat": 40, "lon": -83.0005}, map[string]float64{"lat": 40, "lon": -82.9895}
	km := func(avoid []string) float64 {
		t.Helper()
		body := map[string]any{"sources": []any{a}, "targets": []any{b}, "costing": "auto"}
		if avoid != nil {
			body["avoid"] = avoid
		}
		code, out := postMatrix(t, url, body)
		var res apirouting.MatrixResponse
		if err := json.Unmarshal(out, &res); code != 200 || err != nil || res.Data.SourcesToTargets[0][0].Distance == nil {
			t.Fatalf("avoid %v: %d %s", avoid, code, out)
		}
		return *res.Data.SourcesToTargets[0][0].Distance
	}
	plain, tollsOnly, noHighways, neither := km(nil), km([]string{"tolls"}), km([]string{"highways"}), km([]string{"highways", "tolls"})
	if !(plain == tollsOnly && plain < noHighways && noHighways < neither) {
		t.Errorf("km: plain %.3f, avoiding tolls %.3f, highways %.3f, both %.3f", plain, tollsOnly, noHighways, neither)
	}
	code, out := postMatrix(t, url, map[string]any{"sources": []any{a}, "targets": []any{b}, "costing": "auto", "avoid": []string{"tolls", "boats"}})
	var e struct {
		Error struct {
			Code    string            `json:"code"`
			Details map[string]string `json:"details"`
		} `json:"error"`
	}
	if err := json.Unmarshal(out, &e); code != 400 || err != nil || e.Error.Code != "invalid_request" || e.Error.Details["avoid[1]"] != "must be one of tolls, highways, ferries" || len(e.Error.Details) != 1 {
		t.Errorf("unknown avoid kind: %d %s", code, out)
	}
	code, out = postMatrix(t, url, map[string]any{"sources": []any{a}, "targets": []any{b}, "costing": "auto", "avoid": "tolls"})
	if code != 400 {
		t.Errorf("avoid as a string: %d %s", code, out)
	}
}

// TestMatrixLocationErrors: a location's latitude or longitude missing
// is 400 validation_failed "is required" on its path, out of range
// "must be between"; a value of the wrong type (a string) is 400
// invalid_request naming the same path (docs/api.md); every bad field
// of a location is named, not only the first.
func TestMatrixLocationErrors(t *testing.T) {
	g, err := routing.Load("../../internal/routing/testdata/avoid.osm.pbf", routing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	url := startServer(t, apirouting.New(g, nil))
	ok := map[string]any{"lat": 40, "lon": -83}
	for _, tc := range []struct {
		name   string
		source map[string]any
		code   string
		want   map[string]string
	}{
		{"no lon", map[string]any{"lat": 40}, "validation_failed", map[string]string{"sources[0].lon": "is required"}},
		{"no lat", map[string]any{"lon": -83}, "validation_failed", map[string]string{"sources[0].lat": "is required"}},
		{"neither", map[string]any{}, "validation_failed", map[string]string{"sources[0].lat": "is required", "sources[0].lon": "is required"}},
		{"both out of range", map[string]any{"lat": 91, "lon": 181}, "validation_failed",
			map[string]string{"sources[0].lat": "must be between -90 and 90", "sources[0].lon": "must be between -180 and 180"}},
		{"null lat", map[string]any{"lat": nil, "lon": -83}, "validation_failed", map[string]string{"sources[0].lat": "is required"}},
		{"string lat", map[string]any{"lat": "40", "lon": -83}, "invalid_request", map[string]string{"sources[0].lat": "must be a number"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := postMatrix(t, url, map[string]any{"sources": []any{tc.source}, "targets": []any{ok}, "costing": "auto"})
			var res struct {
				Error struct {
					Code    string            `json:"code"`
					Details map[string]string `json:"details"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &res); err != nil || code != 400 || res.Error.Code != tc.code {
				t.Fatalf("%d %s, want 400 %s", code, out, tc.code)
			}
			for f, why := range tc.want {
				if res.Error.Details[f] != why {
					t.Errorf("%s: %q, want %q (%s)", f, res.Error.Details[f], why, out)
				}
			}
		})
	}
}
