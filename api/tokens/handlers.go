// Package tokens serves browser tokens (fleet/tokens) over HTTP: minting
// (POST /v1/tokens), revoking (DELETE /v1/tokens/{token_id}), and the
// authenticator the server asks when a request brings a token in place
// of a key. The service's errors map to the API's codes here.
//
// Handlers hold only the service, set by New; the service is safe for
// concurrent use, so the handlers serve any number of requests at once.
package tokens

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/store"
)

// MintBody is the body of POST /v1/tokens.
type MintBody struct {
	ExpiresInSeconds *int     `json:"expires_in_seconds,omitempty" doc:"1-86400, default 3600"`
	Scopes           []string `json:"scopes" required:"true" enum:"feed:read,streams:read,alerts:acknowledge,console:read,webhooks:replay" doc:"feed:read (the feed: pull, event stream, websocket), streams:read (registered streams: websocket, event stream), alerts:acknowledge, webhooks:replay, console:read (the console's reads, each within the minting key's permissions)"`
	StreamIDs        []string `json:"stream_ids,omitempty" doc:"with streams:read: only these registered streams of the key's organization and environment (1 to 100; an empty list, an id naming no such stream, a stopped stream, a webhook stream (its messages go to its webhook_url, which no token's client reads) or an id given twice is refused with 400 validation_failed naming stream_ids[i]); absent: every stream of the organization"`
}

// TokenView is a minted token: the token itself is shown once.
type TokenView struct {
	Token     string    `json:"token" doc:"send as Authorization: Bearer <token> or ?token=<token>"`
	TokenID   string    `json:"token_id"`
	ExpiresAt time.Time `json:"expires_at"`
	Scopes    []string  `json:"scopes"`
	StreamIDs []string  `json:"stream_ids,omitempty"`
}

// RevokedView is the answer of DELETE /v1/tokens/{token_id}.
type RevokedView struct {
	TokenID   string    `json:"token_id"`
	Status    string    `json:"status" enum:"revoked"`
	RevokedAt time.Time `json:"revoked_at"`
	ExpiresAt time.Time `json:"expires_at"`
}

// Handlers serve one token service.
type Handlers struct{ svc *domain.Service }

// New serves svc.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the token routes.
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{
		{Method: "POST", Path: "/v1/tokens", Tag: "keys", Permission: "tokens:create",
			Summary: "Mint a short-lived browser token (HS256 JWT) taken in place of a key by the routes of its scopes; an event stream or websocket it opened ends when it expires or is revoked (event: error token_expired or token_revoked; close 4401) (see docs/security.md#browser-tokens)",
			Request: MintBody{}, Response: TokenView{}, Status: 201, Handler: h.mint},
		{Method: "DELETE", Path: "/v1/tokens/{token_id}", Tag: "keys", Permission: "tokens:create",
			Summary: "Revoke a browser token before it expires", Errors: []int{404},
			Params: []api.Param{{Name: "token_id", In: "path", Type: "string", Required: true}}, Response: RevokedView{}, Handler: h.revoke},
	}
}

func (h *Handlers) mint(c *api.Ctx) error {
	var b MintBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	r := domain.MintRequest{Scopes: b.Scopes, StreamIDs: b.StreamIDs}
	if b.ExpiresInSeconds != nil {
		if n := *b.ExpiresInSeconds; n < 1 || n > int(domain.MaxTTL/time.Second) {
			return api.Validation("validation_failed", map[string]string{"expires_in_seconds": fmt.Sprintf("must be from 1 to %d", int(domain.MaxTTL/time.Second))})
		}
		r.TTL = time.Duration(*b.ExpiresInSeconds) * time.Second
	}
	m, err := h.svc.Mint(c.Context(), c.Principal, r)
	var fe *domain.FieldError
	var pe *domain.PermissionError
	switch {
	case errors.As(err, &fe):
		return api.Validation("validation_failed", map[string]string{fe.Field: fe.Msg})
	case errors.As(err, &pe):
		return api.Errf("insufficient_permissions", "%s", pe.Error()).
			WithDetails(map[string]string{"scope": pe.Scope, "required_permission": pe.Permission})
	case err != nil:
		return err
	}
	return c.JSON(201, TokenView{Token: m.Token, TokenID: m.Grant.ID, ExpiresAt: m.ExpiresAt, Scopes: m.Grant.Scopes, StreamIDs: m.Grant.StreamIDs})
}

func (h *Handlers) revoke(c *api.Ctx) error {
	org, env := c.Scope()
	id := c.PathParam("token_id")
	t, err := h.svc.Revoke(c.Context(), store.Scope{Org: org, Env: env}, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("token_not_found", "token %s not found (never minted here, or expired)", id)
	}
	if err != nil {
		return err
	}
	return c.JSON(200, RevokedView{TokenID: t.ID, Status: "revoked", RevokedAt: t.RevokedAt, ExpiresAt: t.ExpiresAt})
}

// Authenticator is the server's api.TokenAuthenticator over the service.
type Authenticator struct{ Svc *domain.Service }

var _ api.TokenAuthenticator = Authenticator{}

// AuthenticateToken verifies a token; its refusals are 401 with the codes
// invalid_token, token_expired and token_revoked.
func (a Authenticator) AuthenticateToken(ctx context.Context, token string) (*api.Principal, error) {
	p, err := a.Svc.Verify(ctx, token)
	switch {
	case errors.Is(err, domain.ErrExpired):
		return nil, api.Errf("token_expired", "this token has expired: mint a new one")
	case errors.Is(err, domain.ErrRevoked):
		return nil, api.Errf("token_revoked", "this token has been revoked")
	case errors.Is(err, domain.ErrInvalid):
		return nil, api.Errf("invalid_token", "not a valid token (malformed, or not signed by this server)")
	}
	return p, err
}
