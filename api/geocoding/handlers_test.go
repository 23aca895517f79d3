package geocoding_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/api/geocoding"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/prometheus/client_golang/prometheus"
)

// auth accepts one key with geocoding:read.
type auth struct{ key string }

func (a auth) Authenticate(ctx context.Context, key string) (*api.Principal, error) {
	if key != a.key {
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	return &api.Principal{KeyID: "k1", Org: "org-a", Env: "test", Permissions: []string{"geocoding:read"}, Rate: 100000, Burst: 100000}, nil
}

type server struct{ url, key string }

// start serves the geocoding routes over ix (nil: no addresses loaded).
func start(t testing.TB, ix *geocode.Index) *server {
	t.Helper()
	key, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, prometheus.NewRegistry(), auth{key}, nil)
	srv.Handle(geocoding.New(ix).Routes()...)
	addr := apitest.Serve(t, srv)
	return &server{url: "http://" + addr, key: key}
}

// get sends a raw query string (not re-encoded) and decodes the answer.
func (s *server) get(t testing.TB, pathAndQuery string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest("GET", s.url+pathAndQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		t.Fatalf("%s: %d %s", pathAndQuery, res.StatusCode, raw)
	}
	return res.StatusCode, body
}

func fixture(t testing.TB) *geocode.Index {
	t.Helper()
	ix, err := geocode.Load("../../internal/geocode/testdata/addresses.csv")
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

func q(s string) string { return url.QueryEscape(s) }

func TestAnswers(t *testing.T) {
	s := start(t, fixture(t))
	_, body := s.get(t, "/v1/search?q="+q("24016 Bradock Ave Queens NY"))
	res := body["results"].([]any)
	if body["count"].(float64) < 1 || res[0].(map[string]any)["id"] != "fx-02" {
		t.Errorf("search: %v", body)
	}
	_, body = s.get(t, "/v1/autocomplete?q="+q("90-05 21")+"&limit=2")
	if sug := body["suggestions"].([]any); len(sug) != 2 || sug[0].(map[string]any)["text"] != "90-05 212th Street, Glen Oaks, NY 11004" {
		t.Errorf("autocomplete: %v", body)
	}
	_, body = s.get(t, "/v1/validate?q="+q("240-16 Bradock Avenue, Glen Oaks, NY 11004"))
	if body["exists"] != true || body["id"] != "fx-02" {
		t.Fatalf("validate: %v", body)
	}
	c := body["corrections"].([]any)[0].(map[string]any)
	if c["field"] != "street" || c["from"] != "bradock" || c["to"] != "braddock" {
		t.Errorf("corrections: %v", body)
	}
	_, body = s.get(t, "/v1/validate?q="+q("240-99 Braddock Avenue, Glen Oaks, NY 11004"))
	sg, _ := body["suggestion"].(map[string]any)
	if body["exists"] != false || body["id"] != nil || sg == nil || sg["address"] != "241-02 Braddock Avenue, Glen Oaks, NY 11004" {
		t.Errorf("validate, a number the street lacks: %v", body)
	}
	_, body = s.get(t, "/v1/validate?q="+q("240-16 Lakeview Terrace, Glen Oaks, NY 11004"))
	if body["exists"] != false {
		t.Errorf("validate, a street that is not there: %v", body)
	}
}

// A focus point breaks a tie: the same number on two streets named alike.
func TestFocusPoint(t *testing.T) {
	s := start(t, fixture(t))
	for _, c := range []struct {
		lat, lon string
		want     string
	}{{"40.12610", "-82.92950", "fx-16"}, {"40.12580", "-82.93120", "fx-21"}} {
		_, body := s.get(t, "/v1/search?q="+q("Westerville")+"&focus.point.lat="+c.lat+"&focus.point.lon="+c.lon)
		if res := body["results"].([]any); res[0].(map[string]any)["id"] != c.want {
			t.Errorf("focus %s,%s: %v, want %s first", c.lat, c.lon, res[0], c.want)
		}
	}
}

// Bad input answers 400 in the plain error form, or nothing found; never
// a 500.
func TestBadInput(t *testing.T) {
	s := start(t, fixture(t))
	for _, c := range []struct {
		path   string
		status int
	}{
		{"/v1/search", 400},
		{"/v1/search?q=", 400},
		{"/v1/search?q=%20%20", 400},
		{"/v1/search?q=" + strings.Repeat("a", 501), 400},
		{"/v1/search?q=" + strings.Repeat("%C3%A9", 500), 200}, // 500 characters, 1,000 bytes
		{"/v1/search?q=%00", 400},
		{"/v1/search?q=main%00street", 400},
		{"/v1/search?q=%FF%FE", 400},
		{"/v1/autocomplete?q=%C3%28", 400},
		{"/v1/search?q=main&limit=0", 400},
		{"/v1/search?q=main&limit=101", 400},
		{"/v1/search?q=main&limit=x", 400},
		{"/v1/autocomplete?q=main&limit=21", 400},
		{"/v1/search?q=main&focus.point.lat=91&focus.point.lon=0", 400},
		{"/v1/search?q=main&focus.point.lat=40", 400},
		{"/v1/autocomplete?q=main&lat=NaN&lon=1", 400},
		{"/v1/search?q=" + q(",;.-/#"), 200},
		{"/v1/validate?q=" + q("!!!"), 200},
		{"/v1/autocomplete?q=" + q(strings.Repeat("9", 500)), 200},
		{"/v1/search?q=" + q(strings.Repeat("a ", 250)), 200},
	} {
		status, body := s.get(t, c.path)
		if status != c.status || body["success"] != (status == 200) {
			t.Errorf("%.60s: %d %v, want %d", c.path, status, body, c.status)
		}
		if status == 400 {
			if msg, _ := body["error"].(string); msg == "" {
				t.Errorf("%.60s: no error message: %v", c.path, body)
			}
		}
	}
}

func TestWithoutAddresses(t *testing.T) {
	s := start(t, nil)
	for _, p := range []string{"/v1/search?q=main", "/v1/autocomplete?q=main", "/v1/validate?q=main"} {
		if status, _ := s.get(t, p); status != 501 {
			t.Errorf("%s: %d", p, status)
		}
	}
}

// The suggestion's confidence is its score: the one search gives the same
// address for the same query.
func TestSuggestionConfidence(t *testing.T) {
	s := start(t, fixture(t))
	for _, addr := range []string{"240-99 Braddock Avenue, Glen Oaks, NY 11004", "240-99 Braddock Avenue"} {
		_, body := s.get(t, "/v1/validate?q="+q(addr))
		sg, _ := body["suggestion"].(map[string]any)
		_, found := s.get(t, "/v1/search?q="+q(addr)+"&limit=1")
		top := found["results"].([]any)[0].(map[string]any)
		if sg == nil || sg["id"] != top["id"] || sg["confidence"] != top["confidence"] {
			t.Errorf("%s: suggestion %v, want search's first result %v", addr, sg, top)
		}
		if conf, _ := sg["confidence"].(float64); conf <= 0 || conf > 0.7 {
			t.Errorf("%s: suggestion confidence %v, want in (0, 0.7]", addr, sg["confidence"])
		}
	}
}

// A state or ZIP that is not the address's: the address does not exist as
// written; the answer says what differs and suggests the address.
func TestValidateForeignStateOrZIP(t *testing.T) {
	s := start(t, fixture(t))
	for _, c := range []struct{ q, field, from, to string }{
		{"240-16 Braddock Avenue, Glen Oaks, TX 11004", "state", "tx", "NY"},
		{"240-16 Braddock Avenue, Glen Oaks, California 11004", "state", "california", "NY"},
		{"240-16 Braddock Avenue, Glen Oaks, NY 90210", "postcode", "90210", "11004"},
	} {
		_, body := s.get(t, "/v1/validate?q="+q(c.q))
		sg, _ := body["suggestion"].(map[string]any)
		cs, _ := body["corrections"].([]any)
		if body["exists"] != false || body["id"] != nil || sg == nil || sg["id"] != "fx-02" || len(cs) != 1 {
			t.Fatalf("validate %q: %v, want no such address and fx-02 suggested", c.q, body)
		}
		if conf, _ := sg["confidence"].(float64); conf <= 0 || conf > 0.7 {
			t.Errorf("validate %q: suggestion confidence %v, want in (0, 0.7]", c.q, sg["confidence"])
		}
		if cr := cs[0].(map[string]any); cr["field"] != c.field || cr["from"] != c.from || cr["to"] != c.to {
			t.Errorf("validate %q: corrections %v, want %s %s → %s", c.q, cs, c.field, c.from, c.to)
		}
		_, body = s.get(t, "/v1/search?q="+q(c.q))
		if res := body["results"].([]any); res[0].(map[string]any)["id"] != "fx-02" || res[0].(map[string]any)["confidence"].(float64) > 0.7 {
			t.Errorf("search %q: %v, want fx-02 at 0.7 or less", c.q, res[0])
		}
	}
}

// Validate takes q only: a limit or a focus point, which it does not take,
// is refused naming it, as every route refuses a parameter it does not
// take (a misspelt one is never read as absent).
func TestValidateRefusesWhatItDoesNotTake(t *testing.T) {
	s := start(t, fixture(t))
	const addr = "240-16 Braddock Avenue, Glen Oaks, NY 11004"
	for extra, name := range map[string]string{"&limit=2": "limit", "&limit=x": "limit", "&focus.point.lat=40": "focus.point.lat", "&lat=1": "lat", "&color=red": "color"} {
		status, body := s.get(t, "/v1/validate?q="+q(addr)+extra)
		if msg, _ := body["error"].(string); status != 400 || body["success"] != false || !strings.Contains(msg, name+": unknown parameter") {
			t.Errorf("validate with %s: %d %v, want 400 naming %s", extra, status, body, name)
		}
	}
	if status, body := s.get(t, "/v1/search?q=main&color=red"); status != 400 || !strings.Contains(fmt.Sprint(body["error"]), "color") {
		t.Errorf("search with a parameter it does not take: %d %v", status, body)
	}
	if status, _ := s.get(t, "/v1/validate?q="+q(addr)); status != 200 {
		t.Errorf("validate with q alone: %d", status)
	}
}

// The street the query names comes before streets that only share its
// house number, and validate suggests its nearest number.
func TestNamedStreetFirst(t *testing.T) {
	s := start(t, fixture(t))
	const addr = "241-05 Braddock Avenue" // 241-05 is on Hillside Ave, not on Braddock Avenue
	_, body := s.get(t, "/v1/search?q="+q(addr))
	if res := body["results"].([]any); res[0].(map[string]any)["id"] != "fx-05" {
		t.Errorf("search: %v, want 241-02 Braddock Avenue first", res[0])
	}
	_, body = s.get(t, "/v1/validate?q="+q(addr))
	if sg, _ := body["suggestion"].(map[string]any); body["exists"] != false || sg == nil || sg["id"] != "fx-05" {
		t.Errorf("validate: %v, want 241-02 Braddock Avenue suggested", body)
	}
}

// The autocomplete takes lat and lon, as the interface has them, and they
// change nothing: the same q answers the same suggestions, in the same
// order, with or without them, wherever they point (beside either of two
// streets that tie, at the other end of the country, at the poles), and
// each may come alone.
func TestAutocompleteLatLonHaveNoEffect(t *testing.T) {
	s := start(t, fixture(t))
	places := []string{
		"&lat=40.12610&lon=-82.92950", "&lat=40.12580&lon=-82.93120", // beside N State St, beside W Main St
		"&lat=40.74020&lon=-73.71620", "&lat=-90&lon=180", "&lat=0&lon=0",
		"&lat=40.12580", "&lon=-82.93120", "&lat=40.1&lon=-82.9&limit=20",
	}
	for _, text := range []string{"Westerville", "Westervi", "90-05 21", "Braddock", "Glen Oaks", "24 N State"} {
		for _, place := range places {
			limit := ""
			if strings.Contains(place, "limit") {
				limit = "&limit=20"
			}
			status, without := s.get(t, "/v1/autocomplete?q="+q(text)+limit)
			if sug, _ := without["suggestions"].([]any); status != 200 || len(sug) < 2 {
				t.Fatalf("%q: %d %v, want at least two suggestions", text, status, without)
			}
			status, with := s.get(t, "/v1/autocomplete?q="+q(text)+place)
			if status != 200 || fmt.Sprint(with["suggestions"]) != fmt.Sprint(without["suggestions"]) {
				t.Errorf("%q with %s: %d %v\nwithout: %v", text, place, status, with["suggestions"], without["suggestions"])
			}
		}
	}
	// still read: a value that is not a coordinate is refused, naming it
	for _, c := range []struct{ query, name string }{
		{"&lat=NaN&lon=1", "lat"}, {"&lat=91&lon=0", "lat"}, {"&lat=-90.5", "lat"}, {"&lat=north", "lat"},
		{"&lat=1&lon=181", "lon"}, {"&lon=-180.01", "lon"}, {"&lon=Inf", "lon"}, {"&lon=1,2", "lon"},
	} {
		status, body := s.get(t, "/v1/autocomplete?q=main"+c.query)
		if msg, _ := body["error"].(string); status != 400 || body["success"] != false || !strings.HasPrefix(msg, c.name+" ") {
			t.Errorf("autocomplete with %s: %d %v, want 400 naming %s", c.query, status, body, c.name)
		}
	}
}

// TestSearchCountry: country filters the results to one country, US
// (or USA) holding every address and any other country none; a value
// that is no ISO 3166-1 country code is refused by name, never read as
// a country without addresses.
func TestSearchCountry(t *testing.T) {
	s := start(t, fixture(t))
	for _, c := range []struct {
		country string
		status  int
		found   bool
	}{
		{"US", 200, true}, {"us", 200, true}, {"USA", 200, true}, {"usa", 200, true},
		{"FR", 200, false}, {"CAN", 200, false},
		{"banana", 400, false}, {"United States", 400, false}, {"U", 400, false}, {"U.S.", 400, false}, {"1", 400, false}, {"", 400, false},
	} {
		status, body := s.get(t, "/v1/search?q="+q("24016 Braddock Ave")+"&country="+q(c.country))
		if status != c.status {
			t.Errorf("country %q: %d %v, want %d", c.country, status, body, c.status)
			continue
		}
		if status == 400 {
			if msg, _ := body["error"].(string); !strings.HasPrefix(msg, "country") {
				t.Errorf("country %q: %v, want an error naming country", c.country, body)
			}
			continue
		}
		if n := body["count"].(float64); (n > 0) != c.found {
			t.Errorf("country %q: %v results, want found %v", c.country, n, c.found)
		}
	}
}

// TestQueryNumbersArePlainDecimal: limit is plain decimal digits, without
// a sign or a leading zero, and a coordinate (focus.point.lat and
// focus.point.lon, the autocomplete's lat and lon) a plain decimal
// number, an optional minus, digits and an optional fraction: never a
// hexadecimal float, an exponent or a lone point, whatever strconv would
// read. q refuses a control character wherever it sits, at its start or
// end too, rather than trimming it as white space.
func TestQueryNumbersArePlainDecimal(t *testing.T) {
	s := start(t, fixture(t))
	for _, c := range []struct {
		query  string
		status int
		name   string // the parameter a 400 names first
	}{
		{"/v1/search?q=main&limit=5", 200, ""},
		{"/v1/search?q=main&limit=100", 200, ""},
		{"/v1/search?q=main&limit=%2B5", 400, "limit"},
		{"/v1/search?q=main&limit=05", 400, "limit"},
		{"/v1/search?q=main&limit=00", 400, "limit"},
		{"/v1/autocomplete?q=main&limit=-0", 400, "limit"},
		{"/v1/autocomplete?q=main&limit=0x5", 400, "limit"},
		{"/v1/autocomplete?q=main&limit=5.0", 400, "limit"},
		{"/v1/autocomplete?q=main&limit=%C2%B35", 400, "limit"}, // superscript
		{"/v1/search?q=main&limit=99999999999999999999999", 400, "limit"},
		{"/v1/search?q=main&focus.point.lat=40.1&focus.point.lon=-82.9", 200, ""},
		{"/v1/search?q=main&focus.point.lat=-0&focus.point.lon=0.000", 200, ""},
		{"/v1/search?q=main&focus.point.lat=0x1p4&focus.point.lon=0", 400, "focus.point.lat"},
		{"/v1/search?q=main&focus.point.lat=0&focus.point.lon=0x1p4", 400, "focus.point.lat"},
		{"/v1/search?q=main&focus.point.lat=1e1&focus.point.lon=0", 400, "focus.point.lat"},
		{"/v1/search?q=main&focus.point.lat=%2B40&focus.point.lon=0", 400, "focus.point.lat"},
		{"/v1/search?q=main&focus.point.lat=40.&focus.point.lon=0", 400, "focus.point.lat"},
		{"/v1/search?q=main&focus.point.lat=.5&focus.point.lon=0", 400, "focus.point.lat"},
		{"/v1/autocomplete?q=main&lat=40.5&lon=-82", 200, ""},
		{"/v1/autocomplete?q=main&lat=0x1p4", 400, "lat"},
		{"/v1/autocomplete?q=main&lon=0x1.8p1", 400, "lon"},
		{"/v1/autocomplete?q=main&lat=1E1", 400, "lat"},
		{"/v1/autocomplete?q=main&lon=%2B1", 400, "lon"},
		{"/v1/autocomplete?q=main&lon=1_0", 400, "lon"},
		{"/v1/autocomplete?q=main&lat=--1", 400, "lat"},
		{"/v1/search?q=%20main%20", 200, ""},
		{"/v1/search?q=%0Amain", 400, "query parameter q"},
		{"/v1/search?q=main%0A", 400, "query parameter q"},
		{"/v1/autocomplete?q=main%0D%0A", 400, "query parameter q"},
		{"/v1/validate?q=%09main", 400, "query parameter q"},
		{"/v1/validate?q=main%C2%85", 400, "query parameter q"}, // NEL, a C1 control
		{"/v1/search?q=%0A", 400, "query parameter q"},
	} {
		status, body := s.get(t, c.query)
		msg, _ := body["error"].(string)
		if status != c.status || body["success"] != (status == 200) || status == 400 && !strings.HasPrefix(msg, c.name+" ") {
			t.Errorf("%s: %d %v, want %d naming %q", c.query, status, body, c.status, c.name)
		}
		if strings.Contains(c.query, "q=main%") || strings.Contains(c.query, "q=%0A") || strings.Contains(c.query, "q=%09") {
			if !strings.Contains(msg, "control characters") {
				t.Errorf("%s: %q, want the control-character refusal", c.query, msg)
			}
		}
	}
}
