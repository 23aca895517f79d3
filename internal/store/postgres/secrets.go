package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Secret returns the named secret, storing gen() first when there is none.
//
// Race-free across nodes: every racer inserts with ON CONFLICT DO NOTHING,
// which waits for a concurrent insert of the same name to commit, so the
// SELECT that follows reads the one stored value.
func (s *Store) Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error) {
	var v []byte
	err := s.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v)
	if err == nil {
		return v, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, wrap("secret", err)
	}
	nv, err := gen()
	if err != nil {
		return nil, fmt.Errorf("postgres: secret %s: generate: %w", name, err)
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO secrets(name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, nv); err != nil {
		return nil, wrap("secret", err)
	}
	if err := s.pool.QueryRow(ctx, `SELECT value FROM secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, wrap("secret", err)
	}
	return v, nil
}
