package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/store"
)

const streamCols = `id, org, env, kind, state, config, secret, version, created_at, updated_at, stopped_at`

func scanStream(row pgx.Row) (store.Stream, error) {
	var s store.Stream
	var cfg string
	var created, updated, stopped int64
	if err := row.Scan(&s.ID, &s.Org, &s.Env, &s.Kind, &s.State, &cfg, &s.Secret, &s.Version, &created, &updated, &stopped); err != nil {
		return s, err
	}
	s.Config = []byte(cfg)
	s.CreatedAt, s.UpdatedAt, s.StoppedAt = fromMS(created), fromMS(updated), fromMS(stopped)
	return s, nil
}

// CreateStream inserts a stream.
func (s *Store) CreateStream(ctx context.Context, st store.Stream) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO streams(`+streamCols+`) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11)`,
		st.ID, st.Org, st.Env, st.Kind, st.State, string(st.Config), st.Secret, st.Version, ms(st.CreatedAt), ms(st.UpdatedAt), ms(st.StoppedAt))
	return wrap("create stream", err)
}

// GetStream reads a stream of the scope.
func (s *Store) GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error) {
	st, err := scanStream(s.pool.QueryRow(ctx, `SELECT `+streamCols+` FROM streams WHERE id = $1 AND org = $2 AND env = $3`, id, sc.Org, sc.Env))
	return st, wrap("get stream", err)
}

// UpdateStream writes a stream when its version is still prev.
func (s *Store) UpdateStream(ctx context.Context, st store.Stream, prev int64) error {
	tag, err := s.pool.Exec(ctx, `UPDATE streams SET state = $1, config = $2, secret = $3, version = $4, updated_at = $5, stopped_at = $6
		WHERE id = $7 AND org = $8 AND env = $9 AND version = $10`,
		st.State, string(st.Config), st.Secret, st.Version, ms(st.UpdatedAt), ms(st.StoppedAt), st.ID, st.Org, st.Env, prev)
	if err != nil {
		return wrap("update stream", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("update stream", store.ErrConflict)
	}
	return nil
}

// ListStreams lists streams updated since a time.
func (s *Store) ListStreams(ctx context.Context, since time.Time) ([]store.Stream, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+streamCols+` FROM streams WHERE updated_at >= $1 ORDER BY updated_at, id`, ms(since))
	if err != nil {
		return nil, wrap("list streams", err)
	}
	defer rows.Close()
	var out []store.Stream
	for rows.Next() {
		st, err := scanStream(rows)
		if err != nil {
			return nil, wrap("list streams", err)
		}
		out = append(out, st)
	}
	return out, wrap("list streams", rows.Err())
}
