package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// CreateKey inserts k.
func (s *Store) CreateKey(ctx context.Context, k store.APIKey) error {
	perms, err := json.Marshal(k.Permissions)
	if err != nil {
		return fmt.Errorf("sqlite: key permissions: %w", err)
	}
	_, err = s.w.ExecContext(ctx, `INSERT INTO api_keys(id, org, env, name, hash, hint, permissions, plan, rpm, created_at, last_used_at, revoked_at)
		VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`,
		k.ID, k.Org, k.Env, k.Name, k.Hash, k.Hint, string(perms), k.Plan, k.RPM, ms(k.CreatedAt), ms(k.LastUsedAt), ms(k.RevokedAt))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return fmt.Errorf("sqlite: create key: %w", store.ErrConflict)
		}
		return fmt.Errorf("sqlite: create key: %w", err)
	}
	return nil
}

const keyCols = `id, org, env, name, hash, hint, permissions, plan, rpm, created_at, last_used_at, revoked_at`

func scanKey(row interface{ Scan(...any) error }) (store.APIKey, error) {
	var k store.APIKey
	var perms string
	var created, used, revoked int64
	if err := row.Scan(&k.ID, &k.Org, &k.Env, &k.Name, &k.Hash, &k.Hint, &perms, &k.Plan, &k.RPM, &created, &used, &revoked); err != nil {
		return k, err
	}
	if err := json.Unmarshal([]byte(perms), &k.Permissions); err != nil {
		return k, fmt.Errorf("permissions of key %s: %w", k.ID, err)
	}
	k.CreatedAt, k.LastUsedAt, k.RevokedAt = fromMS(created), fromMS(used), fromMS(revoked)
	return k, nil
}

// KeyByHash finds a key by hash.
func (s *Store) KeyByHash(ctx context.Context, hash string) (store.APIKey, error) {
	k, err := scanKey(s.r.QueryRowContext(ctx, `SELECT `+keyCols+` FROM api_keys WHERE hash = ?`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return k, store.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("sqlite: key by hash: %w", err)
	}
	return k, nil
}

// ListKeys lists the keys of a scope, oldest first.
func (s *Store) ListKeys(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+keyCols+` FROM api_keys WHERE org = ? AND env = ? ORDER BY created_at, id`, sc.Org, sc.Env)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list keys: %w", err)
	}
	defer rows.Close()
	out := []store.APIKey{}
	for rows.Next() {
		k, err := scanKey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list keys: %w", err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// RevokeKey marks a key revoked; revoking twice keeps the first time.
func (s *Store) RevokeKey(ctx context.Context, sc store.Scope, id string, at time.Time) (store.APIKey, error) {
	_, err := s.w.ExecContext(ctx, `UPDATE api_keys SET revoked_at = ? WHERE id = ? AND org = ? AND env = ? AND revoked_at = 0`, ms(at), id, sc.Org, sc.Env)
	if err != nil {
		return store.APIKey{}, fmt.Errorf("sqlite: revoke key: %w", err)
	}
	k, err := scanKey(s.w.QueryRowContext(ctx, `SELECT `+keyCols+` FROM api_keys WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return k, store.ErrNotFound
	}
	if err != nil {
		return k, fmt.Errorf("sqlite: revoke key: %w", err)
	}
	return k, nil
}

// TouchKeys records last use times.
func (s *Store) TouchKeys(ctx context.Context, used map[string]time.Time) error {
	if len(used) == 0 {
		return nil
	}
	tx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite: touch keys: %w", err)
	}
	defer tx.Rollback()
	for id, at := range used {
		if _, err := tx.ExecContext(ctx, `UPDATE api_keys SET last_used_at = MAX(last_used_at, ?) WHERE id = ?`, ms(at), id); err != nil {
			return fmt.Errorf("sqlite: touch keys: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite: touch keys: %w", err)
	}
	return nil
}

// Secret returns the named secret, creating it with gen when absent.
func (s *Store) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.w.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("sqlite: secret: %w", err)
	}
	nv, err := gen()
	if err != nil {
		return nil, fmt.Errorf("sqlite: secret: %w", err)
	}
	if _, err := s.w.ExecContext(ctx, `INSERT INTO secrets(name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING`, name, nv); err != nil {
		return nil, fmt.Errorf("sqlite: secret: %w", err)
	}
	if err := s.w.QueryRowContext(ctx, `SELECT value FROM secrets WHERE name = ?`, name).Scan(&v); err != nil {
		return nil, fmt.Errorf("sqlite: secret: %w", err)
	}
	return v, nil
}
