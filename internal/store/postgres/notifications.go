package postgres

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

const notificationCols = `id, org, env, ref, recipient_id, channel, level, body, status, attempts, next_attempt_at, last_error, created_at, updated_at`

func scanNotification(row interface{ Scan(...any) error }) (store.Notification, error) {
	var n store.Notification
	var body string
	var next, cr, up int64
	err := row.Scan(&n.ID, &n.Org, &n.Env, &n.Ref, &n.RecipientID, &n.Channel, &n.Level, &body, &n.Status, &n.Attempts, &next, &n.LastError, &cr, &up)
	n.Body, n.NextAttemptAt, n.CreatedAt, n.UpdatedAt = []byte(body), fromMS(next), fromMS(cr), fromMS(up)
	return n, err
}

// EnqueueNotification stores a notification claimed by owner, leaving one
// of the same id alone (ErrConflict).
func (s *Store) EnqueueNotification(ctx context.Context, n store.Notification, owner string, until time.Time) error {
	tag, err := s.pool.Exec(ctx, `INSERT INTO notifications(`+notificationCols+`, owner, lease_until) VALUES ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15,$16)
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Org, n.Env, n.Ref, n.RecipientID, n.Channel, n.Level, string(n.Body), n.Status, n.Attempts, ms(n.NextAttemptAt), n.LastError,
		ms(n.CreatedAt), ms(n.UpdatedAt), owner, ms(until))
	if err != nil {
		return wrap("enqueue notification", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("enqueue notification "+n.ID, store.ErrConflict)
	}
	return nil
}

// ClaimNotifications claims due notifications; FOR UPDATE SKIP LOCKED
// keeps two nodes' claims apart.
func (s *Store) ClaimNotifications(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.Notification, error) {
	rows, err := s.pool.Query(ctx, `UPDATE notifications SET owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= $3 AND lease_until <= $3
			ORDER BY next_attempt_at LIMIT $4 FOR UPDATE SKIP LOCKED)
		RETURNING `+notificationCols, owner, ms(until), ms(now), limit)
	if err != nil {
		return nil, wrap("claim notifications", err)
	}
	defer rows.Close()
	var out []store.Notification
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, wrap("claim notifications", err)
		}
		out = append(out, n)
	}
	return out, wrap("claim notifications", rows.Err())
}

// RecordNotification records an attempt and releases the claim.
func (s *Store) RecordNotification(ctx context.Context, owner string, n store.Notification) error {
	tag, err := s.pool.Exec(ctx, `UPDATE notifications SET status = $1, attempts = $2, next_attempt_at = $3, last_error = $4, updated_at = $5, owner = '', lease_until = 0
		WHERE id = $6 AND owner = $7`, n.Status, n.Attempts, ms(n.NextAttemptAt), n.LastError, ms(n.UpdatedAt), n.ID, owner)
	if err != nil {
		return wrap("record notification", err)
	}
	if tag.RowsAffected() == 0 {
		return wrap("record notification", store.ErrConflict)
	}
	return nil
}

// ListNotifications lists a ref's notifications, oldest first.
func (s *Store) ListNotifications(ctx context.Context, sc store.Scope, ref string) ([]store.Notification, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+notificationCols+` FROM notifications WHERE org = $1 AND env = $2 AND ref = $3 ORDER BY created_at, id`, sc.Org, sc.Env, ref)
	if err != nil {
		return nil, wrap("list notifications", err)
	}
	defer rows.Close()
	out := []store.Notification{}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, wrap("list notifications", err)
		}
		out = append(out, n)
	}
	return out, wrap("list notifications", rows.Err())
}
