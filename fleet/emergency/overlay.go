package emergency

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// statusLister is a Notifier that keeps its notifications (Outbox).
type statusLister interface {
	Statuses(ctx context.Context, sc store.Scope, ref string) ([]store.Notification, error)
}

// overlay brings each recipient's and each escalation contact's gateway
// deliveries up to the queue's state: delivered, failed for good, or
// "retrying" with the last error, and the attempts made; the affected
// area analysis counts the recipients reached by then, and delivery_status
// counts the deliveries as they stand (retrying ones pending). A
// recipient's delivery is the notification of its notification_id (a
// repeat's replaces the first delivery's); one stored before deliveries
// carried it is the notification of its channel.
func (a *Alerts) overlay(ctx context.Context, sc store.Scope, al *Alert) error {
	sl, ok := a.notify.(statusLister)
	if !ok {
		return nil
	}
	rows, err := sl.Statuses(ctx, sc, al.AlertID)
	if err != nil || len(rows) == 0 {
		return err
	}
	byID := make(map[string]store.Notification, len(rows))
	byRecipient := map[string][]store.Notification{} // the alert's own, not the levels'
	for _, n := range rows {
		byID[n.ID] = n
		if n.Level == 0 {
			byRecipient[n.RecipientID] = append(byRecipient[n.RecipientID], n)
		}
	}
	for i := range al.Recipients {
		r := &al.Recipients[i]
		for j := range r.Deliveries {
			d := &r.Deliveries[j]
			if d.NotificationID != "" {
				if n, ok := byID[d.NotificationID]; ok && queued(d, n) {
					r.Delivered = true
				}
				continue
			}
			for _, n := range byRecipient[r.RecipientID] {
				if d.Channel == n.Channel && d.Level == 0 && sent(d) && queued(d, n) {
					r.Delivered = true
				}
			}
		}
	}
	for _, n := range rows {
		if n.Level == 0 {
			continue
		}
		for i := range al.EscalationStatus.Levels {
			l := &al.EscalationStatus.Levels[i]
			if l.Level != n.Level {
				continue
			}
			for j := range l.Notified {
				if l.Notified[j].ContactID != n.RecipientID {
					continue
				}
				for k := range l.Notified[j].Deliveries {
					if d := &l.Notified[j].Deliveries[k]; d.Channel == n.Channel && d.Level == n.Level && sent(d) {
						queued(d, n)
					}
				}
			}
		}
	}
	for _, n := range rows {
		if n.Level == 0 && n.Status == store.NotificationDelivered && n.Attempts > 1 {
			al.AlertMetrics.retried(al.CreatedAt, n.UpdatedAt)
		}
	}
	al.AffectedAreaAnalysis.count(al.Recipients)
	al.recount()
	return nil
}

// retried takes a notification the gateway queue delivered on a retry,
// at t, into creation_to_first_delivery_ms when it went through before
// every delivery timed so far: it is a delivery that went through, as the
// reach counts it. It is not timed: the average stays over the deliveries
// made at creation and in the channels' rounds.
func (m *Metrics) retried(created, t time.Time) {
	v := round2(float64(t.Sub(created).Microseconds()) / 1000)
	if m.CreationToFirstDeliveryMS == nil || v < *m.CreationToFirstDeliveryMS {
		m.CreationToFirstDeliveryMS = &v
	}
}

// sent says whether a delivery went to the gateway (not skipped,
// scheduled or cancelled).
func sent(d *RecipientDelivery) bool {
	return d.Status != "skipped" && d.Status != "scheduled" && d.Status != "cancelled"
}

// queued sets a delivery to its notification's state in the queue and
// says whether it was delivered.
func queued(d *RecipientDelivery, n store.Notification) bool {
	d.Attempts, d.Reason = n.Attempts, n.LastError
	switch n.Status {
	case store.NotificationDelivered:
		d.Status = "delivered"
		return true
	case store.NotificationFailed:
		d.Status = "failed"
	default:
		d.Status = "retrying"
	}
	return false
}
