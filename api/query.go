package api

import (
	"strconv"
	"strings"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

// UnknownQuery refuses the query parameters c's route does not take: its
// query Params, api_key when it takes the key from the query (QueryKey),
// token when it takes a browser token (TokenScope). The answer is 400
// invalid_request with details naming each ("unknown parameter"): a
// misspelt filter (severty=high) is refused, never read as no filter.
// A parameter given more than once that the route takes once (every one
// but its Repeatable Params) is refused the same way ("must be given
// once"): status=active&status=cancelled is never read as one of them.
// A parameter given empty or only white space is refused too ("must not
// be empty or only white space") when it is an identifier (named id or
// ending in _id or _ids, as in a body: vehicle_id=, driver_id=%20) or
// takes a value of a fixed kind (a number, a boolean, one of a fixed set,
// a date: limit=, status=, include_analytics=, start_date=): it is never
// read as absent, nor as a filter on a blank id. An identifier that is not
// UTF-8 text or holds a control character (vehicle_id=%FF, driver_id=a%0Ab)
// is refused as the same value in a path is: no id is made of such bytes,
// and a filter on one would be answered as an empty match of something
// other than what was sent. A required one is left to
// its handler, which refuses it as missing. Other parameters keep their
// own reading of an empty value (cursor= is the first page).
// The server runs it before every handler; an OwnQuery route, which
// checks its own set of parameters, gets only the blank-value check of
// the Params it declares.
func UnknownQuery(c *Ctx) error {
	r := c.Route
	var bad map[string]string
	seen := map[string]bool{}
	for k, v := range c.QueryArgs().All() {
		name := string(k)
		takes, repeatable, blankOK := takesQuery(r, name)
		msg := ""
		switch {
		case !takes:
			if !r.OwnQuery {
				msg = "unknown parameter"
			}
		case seen[name] && !repeatable && !r.OwnQuery:
			msg = "must be given once"
		case !blankOK && jsonpath.IsBlank(v):
			msg = jsonpath.BlankRefusal
		case jsonpath.IDName(name) && !jsonpath.IsBlank(v) && !text(string(v)):
			// a blank one (" \t") is left to the rule of blank values
			msg = "must be UTF-8 text without control characters"
		}
		seen[name] = true
		if msg == "" {
			continue
		}
		if bad == nil {
			bad = map[string]string{}
		}
		bad[jsonpath.Param(name)] = msg
	}
	if bad == nil {
		return nil
	}
	return Validation("invalid_request", bad)
}

// takesQuery reports whether r takes the query parameter name, whether
// more than once, and whether a blank value is left to the handler.
func takesQuery(r *Route, name string) (takes, repeatable, blankOK bool) {
	switch {
	case name == "api_key" && r.QueryKey, name == "token" && r.TokenScope != "":
		return true, false, true
	}
	for _, p := range r.Params {
		if p.In == "query" && p.Name == name {
			return true, p.Repeatable, p.Required || !(jsonpath.IDName(name) || p.valued())
		}
	}
	return false, false, false
}

// valued reports whether p takes a value of a fixed kind, one an empty
// value cannot be: a number, a boolean, one of a fixed set, a date.
func (p Param) valued() bool {
	switch p.Type {
	case "integer", "number", "boolean":
		return true
	}
	return len(p.Enum) > 0 || p.Format != ""
}

// DecimalInt reads a query value as a plain decimal integer: digits only,
// no sign, no leading zero but for 0 itself, no white space. strconv.Atoi
// would take +5 and 05, which no client means to send: every integer
// query parameter of the API is read with it, and refused when it is not
// (limit=%2B5, limit=05, limit=1e1, limit=0x5, limit=5.0).
func DecimalInt[T ~string | ~[]byte](v T) (int, bool) {
	if len(v) == 0 || len(v) > 1 && v[0] == '0' || !allDigits(v) {
		return 0, false
	}
	n, err := strconv.Atoi(string(v))
	return n, err == nil
}

// Decimal reads a query value as a plain decimal number: an optional
// minus, digits, and an optional point followed by digits; no plus sign,
// exponent, hexadecimal float, underscore, white space, Inf or NaN, all
// of which strconv.ParseFloat would take. No query parameter of the API
// takes an exponent.
func Decimal[T ~string | ~[]byte](v T) (float64, bool) {
	s := string(v)
	digits := strings.TrimPrefix(s, "-")
	whole, frac, point := strings.Cut(digits, ".")
	if whole == "" || !allDigits(whole) || point && (frac == "" || !allDigits(frac)) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	return f, err == nil
}

func allDigits[T ~string | ~[]byte](v T) bool {
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
