package sqlstore

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Browser tokens (store.Tokens): the record of each minted token, for its
// revocation.

const tokenCols = `id, org, env, key_id, scopes, created_at, expires_at, revoked_at`

func scanToken(row Row) (store.BrowserToken, error) {
	var t store.BrowserToken
	var scopes string
	var created, expires, revoked int64
	if err := row.Scan(&t.ID, &t.Org, &t.Env, &t.KeyID, &scopes, &created, &expires, &revoked); err != nil {
		return store.BrowserToken{}, err
	}
	if err := json.Unmarshal([]byte(scopes), &t.Scopes); err != nil {
		return store.BrowserToken{}, fmt.Errorf("scopes of token %s: %w", t.ID, err)
	}
	t.CreatedAt, t.ExpiresAt, t.RevokedAt = FromMS(created), FromMS(expires), FromMS(revoked)
	return t, nil
}

// CreateToken inserts t; ErrConflict when its id exists.
func (s *Store) CreateToken(ctx context.Context, t store.BrowserToken) error {
	scopes, err := json.Marshal(t.Scopes)
	if err != nil {
		return fmt.Errorf("%s: token scopes: %w", s.d.Name, err)
	}
	_, err = s.w.Exec(ctx, `INSERT INTO browser_tokens(`+tokenCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, t.Org, t.Env, t.KeyID, string(scopes), MS(t.CreatedAt), MS(t.ExpiresAt), MS(t.RevokedAt))
	return s.wrap("create token", err)
}

// RevokeToken marks a token of scope sc revoked, in one statement.
func (s *Store) RevokeToken(ctx context.Context, sc store.Scope, id string, at time.Time) (store.BrowserToken, error) {
	t, err := scanToken(s.w.QueryRow(ctx, `UPDATE browser_tokens SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END
		WHERE id = ? AND org = ? AND env = ? RETURNING `+tokenCols, MS(at), id, sc.Org, sc.Env))
	if err != nil {
		return store.BrowserToken{}, s.wrap("revoke token", err)
	}
	return t, nil
}

// RevokedTokens lists the revoked tokens not yet expired at now.
func (s *Store) RevokedTokens(ctx context.Context, now time.Time) ([]string, error) {
	rows, err := s.r.Query(ctx, `SELECT id FROM browser_tokens WHERE revoked_at > 0 AND expires_at > ?`, MS(now))
	out, err := collect([]string{}, rows, err, func(r Row) (string, error) {
		var id string
		return id, r.Scan(&id)
	})
	return out, s.wrap("revoked tokens", err)
}

// PruneTokens deletes the records of tokens expired before before.
func (s *Store) PruneTokens(ctx context.Context, before time.Time) (int64, error) {
	n, err := s.w.Exec(ctx, `DELETE FROM browser_tokens WHERE expires_at < ?`, MS(before))
	return n, s.wrap("prune tokens", err)
}
