package sqlite

import (
	"context"
	"fmt"
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
	res, err := s.w.ExecContext(ctx, `INSERT INTO notifications(`+notificationCols+`, owner, lease_until) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Org, n.Env, n.Ref, n.RecipientID, n.Channel, n.Level, string(n.Body), n.Status, n.Attempts, ms(n.NextAttemptAt), n.LastError,
		ms(n.CreatedAt), ms(n.UpdatedAt), owner, ms(until))
	if err != nil {
		return fmt.Errorf("sqlite: enqueue notification: %w", err)
	}
	if c, _ := res.RowsAffected(); c == 0 {
		return fmt.Errorf("sqlite: enqueue notification %s: %w", n.ID, store.ErrConflict)
	}
	return nil
}

// ClaimNotifications claims due notifications in one statement.
func (s *Store) ClaimNotifications(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.Notification, error) {
	rows, err := s.w.QueryContext(ctx, `UPDATE notifications SET owner = ?, lease_until = ?
		WHERE id IN (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= ? AND lease_until <= ? ORDER BY next_attempt_at LIMIT ?)
		RETURNING `+notificationCols, owner, ms(until), ms(now), ms(now), limit)
	if err != nil {
		return nil, fmt.Errorf("sqlite: claim notifications: %w", err)
	}
	defer rows.Close()
	var out []store.Notification
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: claim notifications: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: claim notifications: %w", err)
	}
	return out, nil
}

// RecordNotification records an attempt and releases the claim.
func (s *Store) RecordNotification(ctx context.Context, owner string, n store.Notification) error {
	res, err := s.w.ExecContext(ctx, `UPDATE notifications SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?, owner = '', lease_until = 0
		WHERE id = ? AND owner = ?`, n.Status, n.Attempts, ms(n.NextAttemptAt), n.LastError, ms(n.UpdatedAt), n.ID, owner)
	if err != nil {
		return fmt.Errorf("sqlite: record notification: %w", err)
	}
	if c, _ := res.RowsAffected(); c == 0 {
		return fmt.Errorf("sqlite: record notification: %w", store.ErrConflict)
	}
	return nil
}

// ListNotifications lists a ref's notifications, oldest first.
func (s *Store) ListNotifications(ctx context.Context, sc store.Scope, ref string) ([]store.Notification, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+notificationCols+` FROM notifications WHERE org = ? AND env = ? AND ref = ? ORDER BY created_at, id`, sc.Org, sc.Env, ref)
	if err != nil {
		return nil, fmt.Errorf("sqlite: list notifications: %w", err)
	}
	defer rows.Close()
	out := []store.Notification{}
	for rows.Next() {
		n, err := scanNotification(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlite: list notifications: %w", err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlite: list notifications: %w", err)
	}
	return out, nil
}
