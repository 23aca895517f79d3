package sqlstore

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Streams (store.Streams).

const streamCols = `id, org, env, kind, state, config, secret, version, created_at, updated_at, stopped_at`

func scanStream(row Row) (store.Stream, error) {
	var st store.Stream
	var cfg string
	var created, updated, stopped int64
	if err := row.Scan(&st.ID, &st.Org, &st.Env, &st.Kind, &st.State, &cfg, &st.Secret, &st.Version, &created, &updated, &stopped); err != nil {
		return st, err
	}
	st.Config = []byte(cfg)
	st.CreatedAt, st.UpdatedAt, st.StoppedAt = FromMS(created), FromMS(updated), FromMS(stopped)
	return st, nil
}

// CreateStream inserts a stream; ErrConflict when its id is taken.
func (s *Store) CreateStream(ctx context.Context, st store.Stream) error {
	_, err := s.w.Exec(ctx, `INSERT INTO streams(`+streamCols+`) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		st.ID, st.Org, st.Env, st.Kind, st.State, string(st.Config), st.Secret, st.Version, MS(st.CreatedAt), MS(st.UpdatedAt), MS(st.StoppedAt))
	return s.wrap("create stream", err)
}

// GetStream reads a stream of the scope.
func (s *Store) GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error) {
	st, err := scanStream(s.r.QueryRow(ctx, `SELECT `+streamCols+` FROM streams WHERE id = ? AND org = ? AND env = ?`, id, sc.Org, sc.Env))
	return st, s.wrap("get stream", err)
}

// UpdateStream writes a stream when its version is still prev.
func (s *Store) UpdateStream(ctx context.Context, st store.Stream, prev int64) error {
	n, err := s.w.Exec(ctx, `UPDATE streams SET state = ?, config = ?, secret = ?, version = ?, updated_at = ?, stopped_at = ?
		WHERE id = ? AND org = ? AND env = ? AND version = ?`,
		st.State, string(st.Config), st.Secret, st.Version, MS(st.UpdatedAt), MS(st.StoppedAt), st.ID, st.Org, st.Env, prev)
	return s.wrap("update stream", changed(n, err, store.ErrConflict))
}

// ListStreams lists streams of every scope updated at or after since,
// oldest update first.
func (s *Store) ListStreams(ctx context.Context, since time.Time) ([]store.Stream, error) {
	rows, err := s.r.Query(ctx, `SELECT `+streamCols+` FROM streams WHERE updated_at >= ? ORDER BY updated_at, id`, MS(since))
	out, err := collect(nil, rows, err, scanStream)
	return out, s.wrap("list streams", err)
}

// StreamVersions lists the id, scope and version of the streams of every
// scope updated at or after since.
func (s *Store) StreamVersions(ctx context.Context, since time.Time) ([]store.StreamVersion, error) {
	rows, err := s.r.Query(ctx, `SELECT id, org, env, version FROM streams WHERE updated_at >= ?`, MS(since))
	out, err := collect(nil, rows, err, func(row Row) (store.StreamVersion, error) {
		var v store.StreamVersion
		err := row.Scan(&v.ID, &v.Org, &v.Env, &v.Version)
		return v, err
	})
	return out, s.wrap("list stream versions", err)
}
