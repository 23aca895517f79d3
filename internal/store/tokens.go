package store

import (
	"context"
	"time"
)

// BrowserToken is the record of a minted browser token: not the token
// (the server signs it and keeps no copy), only what revoking it needs.
type BrowserToken struct {
	ID        string
	Org       string
	Env       string
	KeyID     string // the key that minted it
	Scopes    []string
	CreatedAt time.Time
	ExpiresAt time.Time
	RevokedAt time.Time // zero while not revoked
}

// Tokens keeps the browser tokens minted and their revocations.
type Tokens interface {
	CreateToken(ctx context.Context, t BrowserToken) error
	// RevokeToken marks a token of scope s revoked at at (revoking twice
	// keeps the first time); ErrNotFound when the scope has no such token
	// (never minted, another organization's, or pruned after expiry).
	RevokeToken(ctx context.Context, s Scope, id string, at time.Time) (BrowserToken, error)
	// RevokedTokens lists the ids of the tokens revoked that expire after
	// now: the revocation list.
	RevokedTokens(ctx context.Context, now time.Time) ([]string, error)
	// PruneTokens deletes the records of tokens that expired before
	// before, returning how many.
	PruneTokens(ctx context.Context, before time.Time) (int64, error)
}
