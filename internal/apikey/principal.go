package apikey

import (
	"context"
	"errors"
	"slices"
	"time"
)

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
	// Token is set when the request came with a browser token: KeyID is
	// then the key that minted it, and the token's scopes, not
	// Permissions, say what it may do.
	Token *TokenGrant
}

// TokenGrant is what a browser token allows.
type TokenGrant struct {
	ID        string
	Scopes    []string
	StreamIDs []string // with the streams:read scope; empty: every stream
	ExpiresAt time.Time
	// KeyPermissions are the minting key's permissions when the token was
	// minted (nil for tokens minted before they were recorded): a route a
	// token opens by the console:read scope needs its permission among them.
	KeyPermissions []string
	// Life, when set, ends when the token expires or is revoked, with
	// context.Cause ErrTokenExpired or ErrTokenRevoked: a connection the
	// token opened ends with it. Tokens share one Life per token id.
	Life context.Context
}

// HasScope reports whether the token holds scope.
func (g *TokenGrant) HasScope(scope string) bool { return slices.Contains(g.Scopes, scope) }

// AllowsStream reports whether the token may read the registered stream
// id: it holds streams:read, for every stream or for this one.
func (g *TokenGrant) AllowsStream(id string) bool {
	return g.HasScope("streams:read") && (len(g.StreamIDs) == 0 || slices.Contains(g.StreamIDs, id))
}

// KeyHas reports whether the minting key held perm (or "all"); true
// when the key's permissions were not recorded.
func (g *TokenGrant) KeyHas(perm string) bool {
	return g.KeyPermissions == nil || slices.Contains(g.KeyPermissions, perm) || slices.Contains(g.KeyPermissions, "all")
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

// Why a browser token's Life ended.
var (
	ErrTokenExpired = errors.New("apikey: token expired")
	ErrTokenRevoked = errors.New("apikey: token revoked")
)
