// Package geocoding serves /v1/search, /v1/autocomplete and /v1/validate:
// it decodes the query, asks the address index of internal/geocode and
// encodes the answer. Without an index (no --addresses) every route
// answers 501.
package geocoding

import (
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/geocode"
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
	Confidence float64 `json:"confidence"`
}

// SearchResponse answers /v1/search.
type SearchResponse struct {
	Success bool     `json:"success"`
	Count   int      `json:"count"`
	Results []Result `json:"results"`
}

// ValidateResponse answers /v1/validate.
type ValidateResponse struct {
	Success bool   `json:"success"`
	Exists  bool   `json:"exists"`
	ID      string `json:"id,omitempty"`
	Address string `json:"address,omitempty"`
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
	q := api.Param{Name: "q", In: "query", Type: "string", Required: true}
	return []*api.Route{
		{Method: "GET", Path: "/v1/autocomplete", Tag: "geocoding", Summary: "US address autocomplete", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params: []api.Param{q, {Name: "limit", In: "query", Type: "integer", Description: "1-20, default 5"},
				{Name: "lat", In: "query", Type: "number", Description: "accepted, no effect"}, {Name: "lon", In: "query", Type: "number", Description: "accepted, no effect"}},
			Response: AutocompleteResponse{}, Errors: []int{501}, Handler: h.autocomplete},
		{Method: "GET", Path: "/v1/search", Tag: "geocoding", Summary: "US address full-text search (fuzzy)", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params:   []api.Param{q, {Name: "limit", In: "query", Type: "integer", Description: "1-100, default 10"}, {Name: "country", In: "query", Type: "string", Description: "only US is indexed"}},
			Response: SearchResponse{}, Errors: []int{501}, Handler: h.search,
			EndpointLimit: searchLimit},
		{Method: "GET", Path: "/v1/validate", Tag: "geocoding", Summary: "Does an address exist (best match confidence above 0.7)", Permission: "geocoding:read", Auth: api.AuthKeyPlain,
			Params: []api.Param{q}, Response: ValidateResponse{}, Errors: []int{501}, Handler: h.validate},
	}
}

func (h *Handlers) query(c *api.Ctx, def, max int) (string, int, error) {
	if h.ix == nil {
		return "", 0, &api.Error{Status: 501, Code: "not_implemented", Message: "no address data loaded (start with --addresses)"}
	}
	q := strings.TrimSpace(string(c.QueryArgs().Peek("q")))
	if q == "" {
		return "", 0, plain(400, "query parameter q is required")
	}
	if len(q) > 500 {
		return "", 0, plain(400, "query parameter q must be at most 500 characters")
	}
	limit := def
	if v := c.QueryArgs().Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > max {
			return "", 0, plain(400, "limit must be an integer from 1 to "+strconv.Itoa(max))
		}
		limit = n
	}
	return q, limit, nil
}

func (h *Handlers) autocomplete(c *api.Ctx) error {
	q, limit, err := h.query(c, 5, 20)
	if err != nil {
		return err
	}
	out := AutocompleteResponse{Success: true, Suggestions: []Suggestion{}}
	for _, m := range h.ix.Autocomplete(q, limit) {
		out.Suggestions = append(out.Suggestions, Suggestion{Text: m.Address.Text, Latitude: m.Address.Latitude, Longitude: m.Address.Longitude, ID: m.Address.ID})
	}
	return c.JSON(200, out)
}

func (h *Handlers) search(c *api.Ctx) error {
	q, limit, err := h.query(c, 10, 100)
	if err != nil {
		return err
	}
	out := SearchResponse{Success: true, Results: []Result{}}
	if country := strings.ToUpper(string(c.QueryArgs().Peek("country"))); country == "" || country == "US" || country == "USA" {
		for _, m := range h.ix.Search(q, limit) {
			out.Results = append(out.Results, Result{ID: m.Address.ID, Address: m.Address.Text, Latitude: m.Address.Latitude, Longitude: m.Address.Longitude, Confidence: m.Confidence})
		}
	}
	out.Count = len(out.Results)
	return c.JSON(200, out)
}

func (h *Handlers) validate(c *api.Ctx) error {
	q, _, err := h.query(c, 1, 1)
	if err != nil {
		return err
	}
	out := ValidateResponse{Success: true}
	if m, ok := h.ix.Validate(q); ok {
		out.Exists, out.ID, out.Address = true, m.Address.ID, m.Address.Text
	}
	return c.JSON(200, out)
}

var searchLimit = &ratelimit.Limit{Rate: 1000, Burst: 1000, Window: time.Minute}
