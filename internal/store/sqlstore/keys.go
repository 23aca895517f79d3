package sqlstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// API keys (store.Keys) and server secrets (store.Secrets).

const keyCols = `id, org, env, name, hash, hint, permissions, plan, rpm, created_at, last_used_at, revoked_at`

// touchKey moves a key's last use time forward to the time bound twice.
const touchKey = `UPDATE api_keys SET last_used_at = CASE WHEN last_used_at > ? THEN last_used_at ELSE ? END WHERE id = ?`

func scanKey(row Row) (store.APIKey, error) {
	var k store.APIKey
	var perms string
	var created, used, revoked int64
	if err := row.Scan(&k.ID, &k.Org, &k.Env, &k.Name, &k.Hash, &k.Hint, &perms, &k.Plan, &k.RPM, &created, &used, &revoked); err != nil {
		return store.APIKey{}, err
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return store.APIKey{}, fmt.Errorf("permissions of key %s: %w", k.ID, err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = FromMS(created), FromMS(used), FromMS(revoked)
	return k, nil
}

// CreateKey inserts k; ErrConflict when its id or hash exists.
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	perms, err := json.Marshal(k.Permissions)
	if err != nil {
		return fmt.Errorf("%s: key permissions: %w", s.d.Name, err)
	}
	_, err = s.w.Exec(ctx, `INSERT INTO api_keys(`+keyCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Org, k.Env, k.Name, k.Hash, k.Hint, string(perms), k.Plan, k.RPM, MS(k.CreatedAt), MS(k.LastUsedAt), MS(k.RevokedAt))
	return s.wrap("create key", err)
}

// KeyByHash finds a key, revoked or not, by hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := scanKey(s.r.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = ?`, hash))
	if err != nil {
		return store.APIKey{}, s.wrap("key by hash", err)
	}
	return k, nil
}

// ListKeys lists the keys of a scope, oldest first; never nil.
func (s *Store) ListKeys(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	rows, err := s.r.Query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE org = ? AND env = ? ORDER BY created_at, id`, sc.Org, sc.Env)
	out, err := collect([]store.APIKey{}, rows, err, scanKey)
	return out, s.wrap("list keys", err)
}

// RevokeKey marks a key of scope sc revoked at at, in one statement;
// revoking twice keeps the first time. ErrNotFound when the scope has no
// such key.
func (s *Store) RevokeKey(ctx context.Context, sc store.Scope, id string, at time.Time) (store.APIKey, error) {
	k, err := scanKey(s.w.QueryRow(ctx, `UPDATE api_keys SET revoked_at = CASE WHEN revoked_at = 0 THEN ? ELSE revoked_at END
		WHERE id = ? AND org = ? AND env = ? RETURNING `+keyCols, MS(at), id, sc.Org, sc.Env))
	if err != nil {
		return store.APIKey{}, s.wrap("revoke key", err)
	}
	return k, nil
}

// TouchKeys records last use times in one transaction; a time never
// moves back, and unknown ids are ignored.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	return s.inTx(ctx, "touch keys", func(tx Querier) error {
		for id, at := range used {
			if _, err := tx.Exec(ctx, touchKey, MS(at), MS(at), id); err != nil {
				return err
			}
		}
		return nil
	})
}

// Secret returns the named secret, storing gen() first when there is none.
//
// Race-free across nodes: every racer inserts with ON CONFLICT DO NOTHING,
// which waits for a concurrent insert of the same name to commit, so the
// SELECT that follows reads the one stored value.
func (s *Store) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.w.QueryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(s.conn.Err(err), store.ErrNotFound) {
		return nil, s.wrap("secret", err)
	}
	nv, err := gen()
	if err != nil {
		return nil, fmt.Errorf("%s: secret %s: generate: %w", s.d.Name, name, err)
	}
	if _, err := s.w.Exec(ctx, `INSERT INTO secrets(name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, nv); err != nil {
		return nil, s.wrap("secret", err)
	}
	if err := s.w.QueryRow(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, s.wrap("secret", err)
	}
	return v, nil
}
