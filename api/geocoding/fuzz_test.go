package geocoding_test

import (
	"net/url"
	"testing"
)

// FuzzQuery sends any q and limit to the three routes: a 200 or a 400,
// never a 500. Seeds are in testdata/fuzz/FuzzQuery.
func FuzzQuery(f *testing.F) {
	s := start(f, fixture(f))
	f.Fuzz(func(t *testing.T, q, limit string) {
		for _, route := range []string{"/v1/search", "/v1/autocomplete", "/v1/validate"} {
			status, body := s.get(t, route+"?q="+url.QueryEscape(q)+"&limit="+url.QueryEscape(limit))
			if status != 200 && status != 400 {
				t.Fatalf("%s q=%q limit=%q: %d %v", route, q, limit, status, body)
			}
			if status == 400 && body["success"] != false {
				t.Fatalf("%s q=%q: 400 without the plain error form: %v", route, q, body)
			}
		}
	})
}
