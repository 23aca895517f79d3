package sqlstore

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// The notification gateway's queue (store.Notifications).

const notificationCols = `id, org, env, ref, recipient_id, channel, level, body, status, attempts, next_attempt_at, last_error, created_at, updated_at`

func scanNotification(row Row) (store.Notification, error) {
	var n store.Notification
	var body string
	var next, cr, up int64
	err := row.Scan(&n.ID, &n.Org, &n.Env, &n.Ref, &n.RecipientID, &n.Channel, &n.Level, &body, &n.Status, &n.Attempts, &next, &n.LastError, &cr, &up)
	n.Body, n.NextAttemptAt, n.CreatedAt, n.UpdatedAt = []byte(body), FromMS(next), FromMS(cr), FromMS(up)
	return n, err
}

// EnqueueNotification stores a notification claimed by owner, leaving one
// of the same id alone (ErrConflict).
func (s *Store) EnqueueNotification(ctx context.Context, n store.Notification, owner string, until time.Time) error {
	c, err := s.w.Exec(ctx, `INSERT INTO notifications(`+notificationCols+`, owner, lease_until)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
		n.ID, n.Org, n.Env, n.Ref, n.RecipientID, n.Channel, n.Level, string(n.Body), n.Status, n.Attempts, MS(n.NextAttemptAt), n.LastError,
		MS(n.CreatedAt), MS(n.UpdatedAt), owner, MS(until))
	return s.wrap("enqueue notification "+n.ID, changed(c, err, store.ErrConflict))
}

// ClaimNotifications claims due notifications in one statement.
func (s *Store) ClaimNotifications(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.Notification, error) {
	rows, err := s.w.Query(ctx, `UPDATE notifications SET owner = ?, lease_until = ?
		WHERE id IN (SELECT id FROM notifications WHERE status = 'pending' AND next_attempt_at <= ? AND lease_until <= ?
			ORDER BY next_attempt_at LIMIT ?`+s.d.skipLocked+`)
		RETURNING `+notificationCols, owner, MS(until), MS(now), MS(now), limit)
	out, err := collect(nil, rows, err, scanNotification)
	return out, s.wrap("claim notifications", err)
}

// RecordNotification records an attempt and releases the claim, if owner
// still holds it.
func (s *Store) RecordNotification(ctx context.Context, owner string, n store.Notification) error {
	c, err := s.w.Exec(ctx, `UPDATE notifications SET status = ?, attempts = ?, next_attempt_at = ?, last_error = ?, updated_at = ?, owner = '', lease_until = 0
		WHERE id = ? AND owner = ?`, n.Status, n.Attempts, MS(n.NextAttemptAt), n.LastError, MS(n.UpdatedAt), n.ID, owner)
	return s.wrap("record notification", changed(c, err, store.ErrConflict))
}

// ListNotifications lists a ref's notifications, oldest first.
func (s *Store) ListNotifications(ctx context.Context, sc store.Scope, ref string) ([]store.Notification, error) {
	rows, err := s.r.Query(ctx, `SELECT `+notificationCols+` FROM notifications WHERE org = ? AND env = ? AND ref = ? ORDER BY created_at, id`,
		sc.Org, sc.Env, ref)
	out, err := collect([]store.Notification{}, rows, err, scanNotification)
	return out, s.wrap("list notifications", err)
}
