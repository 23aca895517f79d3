package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

const streamCols = `id, org, env, kind, state, config, secret, version, created_at, updated_at, stopped_at`

func scanStream(row interface{ Scan(...any) error }) (store.Stream, error) {
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
	_, err := s.w.ExecContext(ctx, `INSERT INTO streams(`+streamCols+`) VALUES (?,?,?,?,?,?,?,?,?,?,?)`,
		st.ID, st.Org, st.Env, st.Kind, st.State, string(st.Config), st.Secret, st.Version, ms(st.CreatedAt), ms(st.UpdatedAt), ms(st.StoppedAt))
	if err != nil {
		if strings.Contains(err.Error(), "UNIQUE") {
			return fmt.Errorf("sqlite: create stream: %w", store.ErrConflict)
		}
		return fmt.Errorf("sqlite: create stream: %w", err)
	}
	return nil
}

// GetStream reads a stream of the scope.
func (s *Store) GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error) {
	st, err := scanStream(s.r.QueryRowContext(ctx, `SELECT `+streamCols+` FROM streams WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	if errors.Is(err, sql.ErrNoRows) {
		return st, store.ErrNotFound
	}
	if err != nil {
		return st, fmt.Errorf("sqlite: get stream: %w", err)
	}
	return st, nil
}

// UpdateStream writes a stream when its version is still prev.
func (s *Store) UpdateStream(ctx context.Context, st store.Stream, prev int64) error {
	res, err := s.w.ExecContext(ctx, `UPDATE streams SET state = ?, config = ?, secret = ?, version = ?, updated_at = ?, stopped_at = ?
		WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		st.State, string(st.Config), st.Secret, st.Version, ms(st.UpdatedAt), ms(st.StoppedAt), st.ID, st.Org, st.Env, prev)
	if err != nil {
		return fmt.Errorf("sqlite: update stream: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("sqlite: update stream: %w", store.ErrConflict)
	}
	return nil
}

// ListStreams lists streams updated since a time.
func (s *Store) ListStreams(ctx context.Context, since time.Time) ([]store.Stream, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+streamCols+` FROM streams WHERE updated_at >= ? ORDER BY updated_at, id`, ms(since))
	if err != nil {
		return nil, fmt.Errorf("sqlite: list streams: %w", err)
	}
	defer rows.Close()
	var out []store.Stream
	for rows.Next() {
		st, err := scanStream(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list streams: %w", err)
		}
		out = append(out, st)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list streams: %w", err)
	}
	return out, nil
}
