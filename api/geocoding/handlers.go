// Package geocoding serves /v1/search, /v1/autocomplete and /v1/validate:
// it decodes the query, asks the address index of internal/geocode and
// encodes the answer. Without an index (no --addresses) every route
// answers 501 to a request it would otherwise serve. A query that cannot be read (over 500 characters, invalid
// UTF-8, control characters such as NUL, a limit, focus point, lat or
// lon out of range, a country that is no country code) answers 400 in
// the plain error form, with or without an index; a query of punctuation only finds nothing.
// Numbers are plain decimal: limit digits without a sign or leading zero,
// a coordinate an optional minus, digits and an optional fraction. The autocomplete's lat and lon are
// the interface's: read and checked, each alone or both, and without
// effect on the suggestions (a focus point is focus.point.lat and
// focus.point.lon).
//
// Handlers hold nothing but the address index, set by New and only read
// afterwards; a loaded Index is read-only and safe for concurrent
// queries, so the handlers serve any number of requests at once.
package geocoding

import (
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/geo"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/geocode"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

// Suggestion is an autocomplete result.
type Suggestion struct {
	Text      string  `json:"text"`
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	ID        string  `json:"id"`
}

// AutocompleteResponse answers /v1/autocomplete.
type AutocompleteResponse struct {
	Success     bool         `json:"success"`
	Suggestions []Suggestion `json:"suggestions"`
}

// Result is a search result.
type Result struct {
	ID         string  `json:"id"`
	Address    string  `json:"address"`
	Latitude   float64 `json:"latitude"`
	Longitude  float64 `json:"longitude"`
	Confidence float64 `json:"confidence" source:"computed"`
}

// SearchResponse answers /v1/search.
type SearchResponse struct {
	Success bool     `json:"success"`
	Count   int      `json:"count"`
	Results []Result `json:"results"`
}

// ValidateResponse answers /v1/validate.
type ValidateResponse struct {
	Success     bool         `json:"success"`
	Exists      bool         `json:"exists"`
	ID          string       `json:"id,omitempty"`
	Address     string       `json:"address,omitempty"`
	Corrections []Correction `json:"corrections,omitempty" doc:"what the address (when it exists) or the suggestion reads differently from the query: street or city typos, a number written another way; for a suggestion also its number in place of the query's, and the query's state or ZIP that is not its own"`
	Suggestion  *Result      `json:"suggestion,omitempty" doc:"when the address does not exist as written but its street does: the street's nearest number when the house number is not on it, or the address itself when the query names another state or ZIP; its confidence the score search gives it"`
}

// Correction is what validation changed in the query to match the
// address or the suggestion: a typo in the street or city, a house number
// written another way or the suggestion's number, a state or ZIP that is
// not the suggestion's.
type Correction struct {
	Field string `json:"field"`
	From  string `json:"from"`
	To    string `json:"to"`
}

// Handlers serves geocoding; ix nil answers 501.
type Handlers struct{ ix *geocode.Index }

// New makes the handlers.
func New(ix *geocode.Index) *Handlers { return &Handlers{ix: ix} }

func plain(status int, msg string) *api.Error {
	return &api.Error{Status: status, Code: "invalid_request", Message: msg}
}

// Routes returns the geocoding routes (plain error form).
func (h *Handlers) Routes() []*api.Route {
	q := api.Param{Name: "q", In: "query", Type: "string", Required: true, Description: "at most 500 characters, no control characters anywhere (a leading or trailing newline or tab is refused, not trimmed)"}
	focus := []api.Param{
		{Name: "focus.point.lat", In: "query", Type: "number", Description: "with focus.point.lon: ties go to the nearer address; a plain decimal number (-40.5), no plus sign, exponent or hexadecimal"},
		{Name: "focus.point.lon", In: "query", Type: "number", Description: "with focus.point.lat; a plain decimal number"},
	}
	return []*api.Route{
		{Method: "GET", Path: "/v1/autocomplete", Tag: "geocoding", Summary: "US address autocomplete", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params: append([]api.Param{q, {Name: "limit", In: "query", Type: "integer", Description: "1-20, default 5; decimal digits only, no sign or leading zero"},
				{Name: "lat", In: "query", Type: "number", Description: "-90 to 90, a plain decimal number; accepted, has no effect on the suggestions (a focus point is focus.point.lat and focus.point.lon)"},
				{Name: "lon", In: "query", Type: "number", Description: "-180 to 180, a plain decimal number; accepted, has no effect on the suggestions"}}, focus...),
			Response: AutocompleteResponse{}, Errors: []int{501}, Handler: h.autocomplete},
		{Method: "GET", Path: "/v1/search", Tag: "geocoding", Summary: "US address full-text search (fuzzy)", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params: append([]api.Param{q, {Name: "limit", In: "query", Type: "integer", Description: "1-100, default 10; decimal digits only, no sign or leading zero"},
				{Name: "country", In: "query", Type: "string", Description: "an ISO 3166-1 alpha-2 or alpha-3 code (US, USA); only US is indexed, so any other country finds nothing; anything but two or three letters is refused"}}, focus...),
			Response: SearchResponse{}, Errors: []int{501}, Handler: h.search,
			EndpointLimit: searchLimit},
		{Method: "GET", Path: "/v1/validate", Tag: "geocoding", Summary: "Does an address exist (its street, within one typo, holds its house number)", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params: []api.Param{q}, Response: ValidateResponse{}, Errors: []int{501}, Handler: h.validate},
	}
}

// maxQuery is the longest q accepted, in characters.
const maxQuery = 500

// text reads q, the one parameter every route takes; a parameter a route
// does not take never reaches it (api.UnknownQuery refuses it by name).
func (h *Handlers) text(c *api.Ctx) (string, error) {
	raw := c.QueryArgs().Peek("q")
	if !utf8.Valid(raw) {
		return "", plain(400, "query parameter q must be valid UTF-8")
	}
	// control characters are refused wherever they sit, before the trim,
	// which would otherwise drop a newline or tab at either end unseen
	if strings.IndexFunc(string(raw), unicode.IsControl) >= 0 {
		return "", plain(400, "query parameter q must not contain control characters")
	}
	q := strings.TrimSpace(string(raw))
	if q == "" {
		return "", plain(400, "query parameter q is required")
	}
	if utf8.RuneCountInString(q) > maxQuery {
		return "", plain(400, "query parameter q must be at most 500 characters")
	}
	return q, nil
}

// loaded answers 501 when no address index is loaded: called once the
// request has been read and checked, so that a request that cannot be
// read answers 400 whether or not the server holds addresses.
func (h *Handlers) loaded() error {
	if h.ix == nil {
		return &api.Error{Status: 501, Code: "not_implemented", Message: "no address data loaded (start with --addresses)"}
	}
	return nil
}

// query reads q, limit (from 1 to max, def when absent) and the focus
// point of search and autocomplete.
func (h *Handlers) query(c *api.Ctx, def, max int) (geocode.Query, error) {
	q, err := h.text(c)
	if err != nil {
		return geocode.Query{}, err
	}
	out := geocode.Query{Text: q, Limit: def}
	if v := c.QueryArgs().Peek("limit"); len(v) > 0 {
		n, ok := api.DecimalInt(v)
		if !ok || n < 1 || n > max {
			return geocode.Query{}, plain(400, "limit must be an integer from 1 to "+strconv.Itoa(max))
		}
		out.Limit = n
	}
	la, lo := c.QueryArgs().Peek("focus.point.lat"), c.QueryArgs().Peek("focus.point.lon")
	if len(la) == 0 && len(lo) == 0 {
		return out, nil
	}
	lat, ok1 := api.Decimal(la)
	lon, ok2 := api.Decimal(lo)
	if !ok1 || !ok2 || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		return geocode.Query{}, plain(400, "focus.point.lat and focus.point.lon must be a latitude from -90 to 90 and a longitude from -180 to 180")
	}
	out.Focus = &geo.Point{Lat: lat, Lon: lon}
	return out, nil
}

// coordinate checks query parameter name, when sent, as a number from
// -bound to bound: the autocomplete's lat and lon, which it reads only
// to refuse what is not a coordinate.
func coordinate(c *api.Ctx, name string, bound float64) error {
	v := c.QueryArgs().Peek(name)
	if len(v) == 0 {
		return nil
	}
	if f, ok := api.Decimal(v); !ok || f < -bound || f > bound {
		return plain(400, name+" must be a number from "+strconv.FormatFloat(-bound, 'f', -1, 64)+" to "+strconv.FormatFloat(bound, 'f', -1, 64))
	}
	return nil
}

func (h *Handlers) autocomplete(c *api.Ctx) error {
	q, err := h.query(c, 5, 20)
	if err != nil {
		return err
	}
	if err := coordinate(c, "lat", 90); err != nil {
		return err
	}
	if err := coordinate(c, "lon", 180); err != nil {
		return err
	}
	if err := h.loaded(); err != nil {
		return err
	}
	q.Prefix = true
	out := AutocompleteResponse{Success: true, Suggestions: []Suggestion{}}
	for _, m := range h.ix.Find(q) {
		out.Suggestions = append(out.Suggestions, Suggestion{Text: m.Address.Text, Latitude: m.Address.Latitude, Longitude: m.Address.Longitude, ID: m.Address.ID})
	}
	return c.JSON(200, out)
}

func (h *Handlers) search(c *api.Ctx) error {
	q, err := h.query(c, 10, 100)
	if err != nil {
		return err
	}
	country, err := countryCode(c)
	if err != nil {
		return err
	}
	if err := h.loaded(); err != nil {
		return err
	}
	out := SearchResponse{Success: true, Results: []Result{}}
	if country == "" || country == "US" || country == "USA" {
		for _, m := range h.ix.Find(q) {
			out.Results = append(out.Results, result(m.Address, m.Confidence))
		}
	}
	out.Count = len(out.Results)
	return c.JSON(200, out)
}

// countryCode reads the search's country, upper case: "" when absent,
// else an ISO 3166-1 alpha-2 or alpha-3 code (two or three letters).
// An empty value is refused as every value of a fixed kind is
// (api.UnknownQuery), anything else by name rather than read as a
// country without addresses.
func countryCode(c *api.Ctx) (string, error) {
	if !c.QueryArgs().Has("country") {
		return "", nil
	}
	raw := c.QueryArgs().Peek("country")
	if jsonpath.IsBlank(raw) {
		return "", plain(400, "country: "+jsonpath.BlankRefusal)
	}
	v := strings.ToUpper(string(raw))
	if len(v) < 2 || len(v) > 3 || strings.IndexFunc(v, func(r rune) bool { return r < 'A' || r > 'Z' }) >= 0 {
		return "", plain(400, "country must be an ISO 3166-1 country code such as US or USA (only US is indexed)")
	}
	return v, nil
}

func result(a geocode.Address, conf float64) Result {
	return Result{ID: a.ID, Address: a.Text, Latitude: a.Latitude, Longitude: a.Longitude, Confidence: conf}
}

func (h *Handlers) validate(c *api.Ctx) error {
	q, err := h.text(c)
	if err != nil {
		return err
	}
	if err := h.loaded(); err != nil {
		return err
	}
	out := ValidateResponse{Success: true}
	v := h.ix.Validate(q)
	if v.Exists {
		out.Exists, out.ID, out.Address = true, v.Match.Address.ID, v.Match.Address.Text
		for _, c := range v.Corrections {
			out.Corrections = append(out.Corrections, Correction(c))
		}
	}
	if v.Suggestion != nil {
		r := result(v.Suggestion.Address, v.Suggestion.Confidence)
		out.Suggestion = &r
		for _, c := range v.Corrections {
			out.Corrections = append(out.Corrections, Correction(c))
		}
	}
	return c.JSON(200, out)
}

var searchLimit = &ratelimit.Limit{Rate: 1000, Burst: 1000, Window: time.Minute}
