package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// NotificationQueue is the gateway's durable queue (store.Notifications).
type NotificationQueue interface {
	EnqueueNotification(ctx context.Context, n store.Notification, owner string, until time.Time) error
	ClaimNotifications(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.Notification, error)
	RecordNotification(ctx context.Context, owner string, n store.Notification) error
	ListNotifications(ctx context.Context, s store.Scope, ref string) ([]store.Notification, error)
}

// Claims tunes a service that claims due work in the store (the alert
// scheduler's escalation steps, the outbox's retries); zero fields take
// defaults.
type Claims struct {
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Node names this node's claims; default random.
	Node string
	// Poll is how often Run looks for due work; default 1 s.
	Poll time.Duration
	// Lease is how long a claim stays this node's before another node
	// may take it over; default 1 min.
	Lease time.Duration
	// Batch is how many items one look claims at most; default 32.
	Batch int
	// Log receives the failures of Run; default discard.
	Log *slog.Logger
}

func (c Claims) withDefaults() Claims {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Node == "" {
		c.Node = randomNode()
	}
	if c.Poll <= 0 {
		c.Poll = time.Second
	}
	if c.Lease <= 0 {
		c.Lease = time.Minute
	}
	if c.Batch <= 0 {
		c.Batch = 32
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return c
}

// OutboxConfig tunes an Outbox; zero fields take defaults. Its Claims
// are the retries'.
type OutboxConfig struct {
	Claims
	// MaxAttempts is how many times a notification is tried before it
	// is failed for good; default 8.
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the wait before a retry, doubled
	// from MinBackoff at every failure; default 2 s and 5 min.
	MinBackoff, MaxBackoff time.Duration
}

// Outbox is a Notifier that queues every notification durably before
// the gateway sees it: Notify stores it claimed by this node, makes the
// first attempt at once and answers its outcome; a failed attempt is
// retried by Run (on any node, once its claim lapses) with exponential
// backoff until MaxAttempts. A node that stops between sending and
// recording lets the notification be sent again (at least once; the
// webhook-id header is stable for the gateway to drop duplicates).
//
// A notification whose ID is given and already queued is not queued nor
// sent again: Notify answers its queued state (nil when delivered,
// ErrRetrying while pending, its last error when failed for good).
type Outbox struct {
	cfg OutboxConfig
	q   NotificationQueue
	gw  Notifier
}

var _ Notifier = (*Outbox)(nil)

// NewOutbox makes an outbox over q sending through gw.
func NewOutbox(cfg OutboxConfig, q NotificationQueue, gw Notifier) *Outbox {
	cfg.Claims = cfg.Claims.withDefaults()
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 8
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = 2 * time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 5 * time.Minute
	}
	return &Outbox{cfg: cfg, q: q, gw: gw}
}

// Notify queues n and makes its first attempt; n.ID, when set, names it
// (else a random id does).
func (o *Outbox) Notify(ctx context.Context, n Notification) error {
	if n.ID == "" {
		var b [10]byte
		_, _ = rand.Read(b[:])
		n.ID = "ntf_" + hex.EncodeToString(b[:])
	}
	body, err := json.Marshal(n)
	if err != nil {
		return err
	}
	ref := n.AlertID
	if ref == "" {
		ref = n.IncidentID
	}
	now := o.cfg.Now().UTC()
	row := store.Notification{ID: n.ID, Org: n.Org, Env: n.Env, Ref: ref, RecipientID: n.Recipient, Channel: n.Channel, Level: n.Level, Body: body,
		Status: store.NotificationPending, NextAttemptAt: now, CreatedAt: now, UpdatedAt: now}
	err = o.q.EnqueueNotification(ctx, row, o.cfg.Node, now.Add(o.cfg.Lease))
	if errors.Is(err, store.ErrConflict) {
		return o.queued(ctx, row)
	}
	if err != nil {
		return err
	}
	return o.attempt(ctx, row, n)
}

// queued answers the state of a notification already in the queue: nil
// when delivered, ErrRetrying while pending (Run sends it when due and
// unclaimed), its last error when failed for good.
func (o *Outbox) queued(ctx context.Context, row store.Notification) error {
	rows, err := o.q.ListNotifications(ctx, store.Scope{Org: row.Org, Env: row.Env}, row.Ref)
	if err != nil {
		return err
	}
	for _, q := range rows {
		if q.ID != row.ID {
			continue
		}
		switch q.Status {
		case store.NotificationDelivered:
			return nil
		case store.NotificationFailed:
			return fmt.Errorf("emergency: notification %s failed: %s", q.ID, q.LastError)
		}
		reason := "queued"
		if q.LastError != "" {
			reason = q.LastError
		}
		return fmt.Errorf("%w: %s", ErrRetrying, reason)
	}
	return fmt.Errorf("emergency: notification %s: queued under another scope: %w", row.ID, store.ErrConflict)
}

// attempt sends a claimed notification and records the outcome: the
// next attempt after a backoff, or failed for good.
func (o *Outbox) attempt(ctx context.Context, row store.Notification, n Notification) error {
	nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	err := o.gw.Notify(nctx, n)
	cancel()
	row.Attempts++
	row.UpdatedAt = o.cfg.Now().UTC()
	switch {
	case err == nil:
		row.Status, row.LastError = store.NotificationDelivered, ""
	case row.Attempts >= o.cfg.MaxAttempts:
		row.Status, row.LastError = store.NotificationFailed, err.Error()
	default:
		row.Status, row.LastError = store.NotificationPending, err.Error()
		row.NextAttemptAt = row.UpdatedAt.Add(o.backoff(row.Attempts))
		err = fmt.Errorf("%w: %w", ErrRetrying, err)
	}
	// Recorded even when the caller has gone: the attempt happened.
	rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), notifyTimeout)
	defer rcancel()
	if rerr := o.q.RecordNotification(rctx, o.cfg.Node, row); rerr != nil && !errors.Is(rerr, store.ErrConflict) {
		o.cfg.Log.Warn("emergency: record notification", "id", row.ID, "err", rerr)
	}
	return err
}

// backoff is the wait after the n-th failed attempt.
func (o *Outbox) backoff(n int) time.Duration {
	d := o.cfg.MinBackoff
	for i := 1; i < n && d < o.cfg.MaxBackoff; i++ {
		d *= 2
	}
	return min(d, o.cfg.MaxBackoff)
}

// Run retries due notifications every Poll until ctx ends; it answers nil
// then.
func (o *Outbox) Run(ctx context.Context) error {
	t := time.NewTicker(o.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := o.Tick(ctx); err != nil && ctx.Err() == nil {
			o.cfg.Log.Warn("emergency: notification retries", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick claims the notifications due now and attempts each; it answers
// how many it attempted.
func (o *Outbox) Tick(ctx context.Context) (int, error) {
	n := 0
	for {
		now := o.cfg.Now().UTC()
		due, err := o.q.ClaimNotifications(ctx, o.cfg.Node, now, now.Add(o.cfg.Lease), o.cfg.Batch)
		if err != nil {
			return n, err
		}
		for _, row := range due {
			var msg Notification
			if err := json.Unmarshal(row.Body, &msg); err != nil {
				row.Status, row.LastError, row.UpdatedAt = store.NotificationFailed, "unreadable: "+err.Error(), now
				if err := o.q.RecordNotification(ctx, o.cfg.Node, row); err != nil && !errors.Is(err, store.ErrConflict) {
					o.cfg.Log.Warn("emergency: record notification", "id", row.ID, "err", err)
				}
				continue
			}
			msg.Org, msg.Env = row.Org, row.Env
			// the outcome is in the row attempt records; its error only
			// tells a caller that waits on this one notification
			if err := o.attempt(ctx, row, msg); err != nil {
				o.cfg.Log.Debug("emergency: notification attempt", "id", row.ID, "err", err)
			}
			n++
		}
		if len(due) < o.cfg.Batch {
			return n, nil
		}
	}
}

// Statuses lists the queued notifications of an alert or incident.
func (o *Outbox) Statuses(ctx context.Context, sc store.Scope, ref string) ([]store.Notification, error) {
	return o.q.ListNotifications(ctx, sc, ref)
}

// randomNode names a node that was given no name (tests and single
// components; cmd/fleethub passes its one node id to every component).
func randomNode() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "node_" + hex.EncodeToString(b[:])
}
