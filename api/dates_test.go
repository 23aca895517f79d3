package api_test

import (
	"encoding/json"
	"log/slog"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
)

// TestDateQuery: a date query parameter takes an RFC 3339 date-time or a
// date alone (its midnight UTC), read in UTC; anything else is named with
// the one wording every listing uses, and an absent one is no date.
func TestDateQuery(t *testing.T) {
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), nil, nil)
	srv.Handle(&api.Route{Method: "GET", Path: "/dated", Tag: "test", Auth: api.AuthNone,
		Params: []api.Param{{Name: "from", In: "query", Type: "string", Format: "date-time"}},
		Handler: func(c *api.Ctx) error {
			bad := map[string]string{}
			d, ok := api.DateQuery(c, "from", bad)
			if len(bad) > 0 {
				return api.Validation("invalid_request", bad)
			}
			out := map[string]any{"ok": ok}
			if ok {
				out["from"] = d
			}
			return c.JSON(200, out)
		}})
	addr := apitest.Serve(t, srv)
	for _, c := range []struct{ query, want string }{
		{"", `{"ok":false}`},
		{"from=2026-03-04", `{"from":"2026-03-04T00:00:00Z","ok":true}`},
		{"from=" + url.QueryEscape("2026-03-04T10:00:00.25+02:00"), `{"from":"2026-03-04T08:00:00.25Z","ok":true}`},
		{"from=yesterday", `{"details":{"from":"must be an ISO 8601 date or date-time"}}`},
		{"from=2026-03-04T10:00:00", `{"details":{"from":"must be an ISO 8601 date or date-time"}}`},
		{"from=2026-3-4", `{"details":{"from":"must be an ISO 8601 date or date-time"}}`},
	} {
		res, body := rawRequest(t, addr, "GET /dated?"+c.query+" HTTP/1.1\r\nHost: x\r\n\r\n")
		var got map[string]any
		if err := json.Unmarshal([]byte(body), &got); err != nil {
			t.Fatalf("%s: %d %s", c.query, res.StatusCode, body)
		}
		if e, isErr := got["error"].(map[string]any); isErr {
			if res.StatusCode != 400 || e["code"] != "invalid_request" {
				t.Errorf("%s: %d %s, want 400 invalid_request", c.query, res.StatusCode, body)
			}
			got = map[string]any{"details": e["details"]}
		}
		b, _ := json.Marshal(got)
		if string(b) != c.want {
			t.Errorf("%s: %d %s, want %s", c.query, res.StatusCode, b, c.want)
		}
	}
	if _, err := api.ParseDate("2026-03-04T10:00:00"); err == nil {
		t.Error("a date-time without a time zone parsed")
	}
	if d, err := api.ParseDate("2026-03-04T10:00:00-05:00"); err != nil || d.Location() != time.UTC || !d.Equal(time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseDate: %v %v, want 2026-03-04T15:00:00Z in UTC", d, err)
	}
}
