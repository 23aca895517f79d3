package api

// UnknownQuery refuses the query parameters c's route does not take: its
// query Params, api_key when it takes the key from the query (QueryKey),
// token when it takes a browser token (TokenScope). The answer is 400
// invalid_request with details naming each ("unknown parameter"): a
// misspelt filter (severty=high) is refused, never read as no filter.
// The server runs it before every handler but those of OwnQuery routes.
func UnknownQuery(c *Ctx) error {
	r := c.Route
	var bad map[string]string
	for k := range c.QueryArgs().All() {
		name := string(k)
		if takesQuery(r, name) {
			continue
		}
		if bad == nil {
			bad = map[string]string{}
		}
		bad[name] = "unknown parameter"
	}
	if bad == nil {
		return nil
	}
	return Validation("invalid_request", bad)
}

func takesQuery(r *Route, name string) bool {
	switch {
	case name == "api_key" && r.QueryKey, name == "token" && r.TokenScope != "":
		return true
	}
	for _, p := range r.Params {
		if p.In == "query" && p.Name == name {
			return true
		}
	}
	return false
}
