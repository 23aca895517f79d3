package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateKey inserts k; ErrConflict when its id or hash exists.
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	perms, err := json.Marshal(k.Permissions)
	if err != nil {
		return fmt.Errorf("postgres: key permissions: %w", err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO api_keys(id, org, env, name, hash, hint, permissions, plan, rpm, created_at, last_used_at, revoked_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
		k.ID, k.Org, k.Env, k.Name, k.Hash, k.Hint, string(perms), k.Plan, k.RPM, ms(k.CreatedAt), ms(k.LastUsedAt), ms(k.RevokedAt))
	if err != nil {
		return wrap("create key", err)
	}
	return nil
}

const keyCols = `id, org, env, name, hash, hint, permissions, plan, rpm, created_at, last_used_at, revoked_at`

func scanKey(row pgx.Row) (store.APIKey, error) {
	var k store.APIKey
	var perms string
	var created, used, revoked int64
	if err := row.Scan(&k.ID, &k.Org, &k.Env, &k.Name, &k.Hash, &k.Hint, &perms, &k.Plan, &k.RPM, &created, &used, &revoked); err != nil {
		return store.APIKey{}, err
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return store.APIKey{}, fmt.Errorf("permissions of key %s: %w", k.ID, err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMS(created), fromMS(used), fromMS(revoked)
	return k, nil
}

// KeyByHash finds a key, revoked or not, by hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = $1`, hash))
	if err != nil {
		return store.APIKey{}, wrap("key by hash", err)
	}
	return k, nil
}

// ListKeys lists the keys of a scope, oldest first; never nil.
func (s *Store) ListKeys(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+keyCols+` FROM api_keys WHERE org = $1 AND env = $2 ORDER BY created_at, id`, sc.Org, sc.Env)
	if err != nil {
		return nil, wrap("list keys", err)
	}
	defer rows.Close()
	out := []store.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, wrap("list keys", err)
		}
		out = append(out, k)
	}
	if err := rows.Err(); err != nil {
		return nil, wrap("list keys", err)
	}
	return out, nil
}

// RevokeKey marks a key of scope sc revoked at at, in one statement;
// revoking twice keeps the first time. ErrNotFound when the scope has no
// such key.
func (s *Store) RevokeKey(ctx context.Context, sc store.Scope, id string, at time.Time) (store.APIKey, error) {
	k, err := scanKey(s.pool.QueryRow(ctx, `UPDATE api_keys
		SET revoked_at = CASE WHEN revoked_at = 0 THEN $1 ELSE revoked_at END
		WHERE id = $2 AND org = $3 AND env = $4
		RETURNING `+keyCols, ms(at), id, sc.Org, sc.Env))
	if err != nil {
		return store.APIKey{}, wrap("revoke key", err)
	}
	return k, nil
}

// TouchKeys records last use times in one statement; a time never moves
// back, and unknown ids are ignored.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	ids := make([]string, 0, len(used))
	ats := make([]int64, 0, len(used))
	for id, at := range used {
		ids = append(ids, id)
		ats = append(ats, ms(at))
	}
	_, err := s.pool.Exec(ctx, `UPDATE api_keys AS k
		SET last_used_at = GREATEST(k.last_used_at, u.at)
		FROM unnest($1::text[], $2::bigint[]) AS u(id, at)
		WHERE k.id = u.id`, ids, ats)
	if err != nil {
		return wrap("touch keys", err)
	}
	return nil
}
