package emergency

import (
	"context"

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
// counts the deliveries as they stand (retrying ones pending).
func (a *Alerts) overlay(ctx context.Context, sc store.Scope, al *Alert) error {
	sl, ok := a.notify.(statusLister)
	if !ok {
		return nil
	}
	rows, err := sl.Statuses(ctx, sc, al.AlertID)
	if err != nil || len(rows) == 0 {
		return err
	}
	apply := func(ds []RecipientDelivery, n store.Notification) {
		for i := range ds {
			d := &ds[i]
			if d.Channel != n.Channel || d.Level != n.Level || d.Status == "skipped" {
				continue
			}
			d.Attempts, d.Reason = n.Attempts, n.LastError
			switch n.Status {
			case store.NotificationDelivered:
				d.Status = "delivered"
			case store.NotificationFailed:
				d.Status = "failed"
			default:
				d.Status = "retrying"
			}
		}
	}
	for _, n := range rows {
		if n.Level == 0 {
			for i := range al.Recipients {
				r := &al.Recipients[i]
				if r.RecipientID == n.RecipientID {
					apply(r.Deliveries, n)
					if n.Status == store.NotificationDelivered {
						r.Delivered = true
					}
				}
			}
			continue
		}
		for i := range al.EscalationStatus.Levels {
			l := &al.EscalationStatus.Levels[i]
			if l.Level != n.Level {
				continue
			}
			for j := range l.Notified {
				if l.Notified[j].ContactID == n.RecipientID {
					apply(l.Notified[j].Deliveries, n)
				}
			}
		}
	}
	al.AffectedAreaAnalysis.count(al.Recipients)
	al.DeliveryStatus = deliveryStatus(al.Recipients)
	return nil
}
