package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"

	apitokens "github.com/fleethub/fleethub/api/tokens"
	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/fleet/tokens"
	"github.com/fleethub/fleethub/internal/store"
)

// secretStore keeps the server secrets and the browser tokens' records.
type secretStore interface {
	store.Secrets
	tokens.Store
}

// signers are the share links' signer and the browser tokens' service,
// each under a secret generated once and kept in the store, so every
// node on one PostgreSQL shares them; delivery tells the tokens' service
// how a stream delivers.
func signers(ctx context.Context, st secretStore, delivery func(ctx context.Context, sc store.Scope, id string) (string, error), log *slog.Logger) (*emergency.Links, *tokens.Service, error) {
	links, err := shareLinks(ctx, st)
	if err != nil {
		return nil, nil, err
	}
	secret, err := st.Secret(ctx, "browser_token_hmac", func() ([]byte, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("browser token secret: %w", err)
	}
	svc, err := tokens.New(tokens.Config{StreamDelivery: delivery}, secret, st, log)
	if err != nil {
		return nil, nil, err
	}
	return links, svc, nil
}

// tokenRoutes serves minting and revoking, and lets the routes that name
// a token scope take tokens.
func (a *app) tokenRoutes() {
	a.server.SetTokens(apitokens.Authenticator{Svc: a.tokens})
	a.server.Handle(apitokens.New(a.tokens).Routes()...)
}
