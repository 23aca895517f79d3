package store

import (
	"context"
	"time"
)

// Kinds of an alert's scheduled step.
const (
	AlertDueEscalation = "escalation"
	AlertDueExpiry     = "expiry"
	// AlertDueDelivery is a round of one delivery channel: its delayed
	// first delivery (level 0) or its n-th repeat (level n).
	AlertDueDelivery = "delivery"
)

// AlertDue is one scheduled step of an alert: an escalation level (1 for
// the first), its expiry (level 0), or a delivery round of Channel, due
// at DueAt. A step is known by its alert, kind, channel and level.
type AlertDue struct {
	AlertID string
	Org     string
	Env     string
	Kind    string
	// Channel is the delivery channel of a delivery step; "" for the
	// other kinds.
	Channel string
	Level   int
	DueAt   time.Time
}

// AlertSchedule keeps the due times of alerts' escalation levels, delivery
// rounds and expiries, so that any node picks them up, each exactly once
// while its claim lasts.
type AlertSchedule interface {
	// ScheduleAlert stores steps; a step already stored is left alone.
	ScheduleAlert(ctx context.Context, steps []AlertDue) error
	// ClaimDueAlerts claims, for owner until until, at most limit steps
	// due at now or before that nobody finished and nobody else holds a
	// live claim on, earliest first. Two concurrent callers never claim
	// the same step.
	ClaimDueAlerts(ctx context.Context, owner string, now, until time.Time, limit int) ([]AlertDue, error)
	// FinishAlertDue marks a step done if owner still holds it;
	// ErrConflict when it does not.
	FinishAlertDue(ctx context.Context, owner string, d AlertDue, at time.Time) error
}
