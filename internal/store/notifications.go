package store

import (
	"context"
	"time"
)

// Notification states.
const (
	NotificationPending   = "pending"
	NotificationDelivered = "delivered"
	NotificationFailed    = "failed"
)

// Notification is one message queued for the notification gateway: Ref
// is the alert or incident it belongs to, Body the JSON sent.
type Notification struct {
	ID            string
	Org           string
	Env           string
	Ref           string
	RecipientID   string
	Channel       string
	Level         int
	Body          []byte
	Status        string
	Attempts      int
	NextAttemptAt time.Time
	LastError     string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Notifications is the durable queue of the notification gateway.
type Notifications interface {
	// EnqueueNotification stores n, claimed by owner until until (the
	// enqueuer makes the first attempt itself). A notification of n's ID
	// already queued is left alone: ErrConflict.
	EnqueueNotification(ctx context.Context, n Notification, owner string, until time.Time) error
	// ClaimNotifications claims for owner until until at most limit
	// pending notifications due at now that no live claim holds, earliest
	// first; two concurrent callers never claim the same one.
	ClaimNotifications(ctx context.Context, owner string, now, until time.Time, limit int) ([]Notification, error)
	// RecordNotification writes n's Status, Attempts, NextAttemptAt,
	// LastError and UpdatedAt and releases the claim, if owner still
	// holds it; ErrConflict when it does not.
	RecordNotification(ctx context.Context, owner string, n Notification) error
	// ListNotifications lists the notifications of a Ref, oldest first.
	ListNotifications(ctx context.Context, s Scope, ref string) ([]Notification, error)
}
