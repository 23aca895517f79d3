package feed

import (
	"errors"
	"net/url"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	hubfeed "github.com/fleethub/fleethub/hub/feed"
)

// FuzzParams feeds arbitrary query strings to the feed's parameters in
// each way of reading it. They never panic; a refusal names each
// parameter it refuses; a query they accept reads at least one topic,
// 1 to 1,000 entries, waits at most 30 s and asks for the newest entries
// only in a pull or a websocket subscription (an event stream starts
// after a cursor).
func FuzzParams(f *testing.F) {
	f.Fuzz(func(t *testing.T, query string, mode uint8) {
		vals, err := url.ParseQuery(query)
		if err != nil {
			return
		}
		m := int(mode % 3)
		q, last, err := parseParams("org", "test", vals, m)
		if err != nil {
			var ae *api.Error
			if !errors.As(err, &ae) {
				return // the filters' own refusal (compile)
			}
			fields, ok := ae.Details.(map[string]string)
			if !ok || len(fields) == 0 {
				t.Fatalf("%q refused naming nothing: %v", query, err)
			}
			for k, v := range fields {
				if k == "" || v == "" {
					t.Fatalf("%q refused with %q: %q", query, k, v)
				}
			}
			return
		}
		if len(q.Topics) == 0 || q.Limit < 1 || q.Limit > hubfeed.MaxLimit || q.Wait < 0 || q.Wait > 30*time.Second {
			t.Fatalf("%q accepted as topics %v, limit %d, wait %v", query, q.Topics, q.Limit, q.Wait)
		}
		if last != 0 && (m == readEvents || last < 1 || last > hubfeed.MaxLimit) {
			t.Fatalf("%q accepted with last %d in mode %d", query, last, m)
		}
	})
}
