package apikey

import "errors"

// Principal is who a request acts for: the key it presented and what
// that key may do.
type Principal struct {
	KeyID       string
	Name        string
	Org         string
	Env         string
	Plan        string
	Permissions []string
	Rate        int // requests per minute
	Burst       int
}

// Has reports whether p holds perm (or "all").
func (p *Principal) Has(perm string) bool {
	for _, q := range p.Permissions {
		if q == perm || q == "all" {
			return true
		}
	}
	return false
}

// Errors of authentication: a well-formed key no store knows, and a key
// that was revoked.
var (
	ErrNotFound = errors.New("apikey: API key not found")
	ErrRevoked  = errors.New("apikey: this API key has been revoked")
)
