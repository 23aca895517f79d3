package api

import (
	"context"
	"slices"
	"strings"
)

// TokenAuthenticator resolves a browser token to its principal (with
// Principal.Token set). It returns *Error values (token_expired,
// token_revoked, invalid_token).
type TokenAuthenticator interface {
	AuthenticateToken(ctx context.Context, token string) (*Principal, error)
}

// LooksLikeToken tells a browser token (a JWT: three base64url parts)
// from an API key.
func LooksLikeToken(s string) bool {
	return strings.Count(s, ".") == 2 && strings.HasPrefix(s, "eyJ")
}

// ConsoleReadScope is the token scope of the read routes a dispatch
// console shows; a token opens such a route only when the key that
// minted it holds the route's permission.
const ConsoleReadScope = "console:read"

// SetTokens lets the routes with a TokenScope take browser tokens; call
// it before Serve.
func (s *Server) SetTokens(t TokenAuthenticator) { s.tokens = t }

// tokenOpens checks that a verified browser token opens r: the route
// takes tokens and the token holds the route's scope.
func tokenOpens(r *Route, p *Principal) error {
	if r.TokenScope == "" {
		return Errf("insufficient_permissions", "a browser token does not open this endpoint: send an API key").
			WithDetails(map[string]string{"required_permission": r.Permission})
	}
	scopes := strings.Fields(r.TokenScope) // alternatives: any one opens the route
	held := slices.IndexFunc(scopes, p.Token.HasScope)
	if held < 0 {
		return Errf("insufficient_permissions", "this token lacks the %s scope", strings.Join(scopes, " or ")).
			WithDetails(map[string]string{"required_scope": strings.Join(scopes, " or ")})
	}
	// console:read opens a read only where the minting key may make it
	if scopes[held] == ConsoleReadScope && r.Permission != "" && (p.Token.KeyPermissions == nil || !p.Token.KeyHas(r.Permission)) {
		return Errf("insufficient_permissions", "the key that minted this token lacks the %s permission", r.Permission).
			WithDetails(map[string]string{"required_permission": r.Permission})
	}
	return nil
}

// CheckStream refuses a browser token that does not open the registered
// stream id (403 insufficient_permissions); a key passes.
func CheckStream(p *Principal, id string) error {
	if p == nil || p.Token == nil || p.Token.AllowsStream(id) {
		return nil
	}
	return Errf("insufficient_permissions", "this token does not open stream %s", id).
		WithDetails(map[string]string{"stream_id": id, "required_scope": "streams:read"})
}
