package emergency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/internal/store"
)

// Limits of a delivery.
const (
	// maxDeliveries is how many deliveries of one alert run at a time.
	maxDeliveries = 16
	// notifyTimeout bounds one call to the gateway.
	notifyTimeout = 5 * time.Second
)

// outcome is one delivery: its channel, whether it went through and how
// long it took.
type outcome struct {
	channel string
	ok      bool
	at      time.Duration
}

// address is a contact's address for a gateway channel.
func address(c *contacts.Contact, channel string) string {
	switch channel {
	case "sms":
		return c.Channels.SMS
	case "voice_call":
		return c.Channels.Voice
	case "email":
		return c.Channels.Email
	case "push_notification":
		return c.Channels.PushToken
	}
	return ""
}

// send is one delivery to make: a recipient (an index of the alert's
// recipients) on a channel, in a round of it (0 the first delivery, n the
// n-th repeat). c is the recipient's directory entry, nil for a recipient
// without one; skip, when set, is why nothing is sent.
type send struct {
	i     int
	ch    Channel
	round int
	due   *time.Time // when a scheduled round was due; nil at creation
	c     *contacts.Contact
	skip  string
}

// deliveryNotificationID is the id (webhook-id) of an alert's delivery
// to a recipient on a channel in a round: the same whichever node sends
// it and however often, so a queue that holds it already does not send it
// again and a gateway drops a repeat.
func deliveryNotificationID(alertID, channel, recipientID string, round int) string {
	h := sha256.Sum256(fmt.Appendf(nil, "delivery\x00%s\x00%s\x00%s\x00%d", alertID, channel, recipientID, round))
	return "ntf_" + hex.EncodeToString(h[:10])
}

// deliver makes a new alert's first deliveries: at once to each of its
// recipients on every channel without a delay (with sendAll), and
// scheduled on the others. It answers the outcomes of those sent and the
// recipients reached at least once. A recipient from the directory is
// reached at their address for each channel; each recipient's Deliveries
// records every channel, in the order of channels.
func (a *Alerts) deliver(ctx context.Context, sc store.Scope, al *Alert, channels []Channel, people map[string]*contacts.Contact) ([]outcome, map[string]bool) {
	var sends []send
	for _, ch := range channels {
		if ch.DelayMinutes > 0 {
			continue
		}
		for i, r := range al.Recipients {
			sends = append(sends, send{i: i, ch: ch, c: people[r.RecipientID]})
		}
	}
	rds, outs := a.sendAll(ctx, sc, al, sends)
	delivered := map[string]bool{}
	j := 0 // sends are in the order of channels, then of recipients
	for _, ch := range channels {
		at := al.CreatedAt.Add(time.Duration(ch.DelayMinutes) * time.Minute)
		for i := range al.Recipients {
			r := &al.Recipients[i]
			if ch.DelayMinutes > 0 {
				rd := RecipientDelivery{Channel: ch.Channel, Status: "scheduled", ScheduledAt: &at}
				if c := people[r.RecipientID]; c != nil {
					rd.To = address(c, ch.Channel)
				} else if ch.Channel != "in_app_alert" {
					// no directory entry, so no address, now or then
					rd.Status, rd.Reason, rd.ScheduledAt = "skipped", "no_address", nil
				}
				r.Deliveries = append(r.Deliveries, rd)
				continue
			}
			r.Deliveries = append(r.Deliveries, rds[j])
			if rds[j].Status == "delivered" {
				delivered[r.RecipientID] = true
			}
			j++
		}
	}
	return outs, delivered
}

// sendAll makes sends concurrently, at most maxDeliveries at a time, and
// answers when all are done with each one's outcome (rds[k] of sends[k])
// and the timings of those that reached the gateway or the bus. A channel
// other than in-app is skipped for a contact without an address for it,
// or during their quiet hours, and for a recipient without one (a driver
// or vehicle with no directory entry): nothing is sent without an address.
func (a *Alerts) sendAll(ctx context.Context, sc store.Scope, al *Alert, sends []send) (rds []RecipientDelivery, outs []outcome) {
	var mu sync.Mutex // guards outs
	rds = make([]RecipientDelivery, len(sends))
	sem := make(chan struct{}, maxDeliveries)
	var wg sync.WaitGroup
	now := a.now()
	for k, s := range sends {
		rd := &rds[k]
		*rd = RecipientDelivery{Channel: s.ch.Channel, Repeat: s.round, ScheduledAt: s.due}
		if s.skip == "" && s.ch.Channel != "in_app_alert" {
			// the gateway is given an address or nothing: a recipient
			// without a directory entry has none
			if s.c != nil {
				rd.To = address(s.c, s.ch.Channel)
			}
			switch {
			case rd.To == "":
				s.skip = "no_address"
			case s.c.Quiet(now, al.Severity):
				s.skip = "quiet_hours"
			}
		}
		if s.skip != "" {
			rd.Status, rd.Reason = "skipped", s.skip
			continue
		}
		if s.ch.Channel != "in_app_alert" && a.notify != nil {
			rd.NotificationID = deliveryNotificationID(al.AlertID, s.ch.Channel, al.Recipients[s.i].RecipientID, s.round)
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			start := time.Now()
			err := a.deliverOne(ctx, sc, al, s, rd.To, rd.NotificationID)
			took := time.Since(start)
			rd.Status = "delivered"
			switch {
			case err == nil:
			case errors.Is(err, ErrRetrying):
				rd.Status, rd.Reason = "retrying", err.Error()
			default:
				rd.Status, rd.Reason = "failed", err.Error()
			}
			mu.Lock()
			outs = append(outs, outcome{s.ch.Channel, err == nil, took})
			mu.Unlock()
		}()
	}
	wg.Wait()
	return rds, outs
}

// deliverOne sends an alert to one recipient on one channel: in_app_alert
// on the bus, the others through the gateway under the notification id id.
func (a *Alerts) deliverOne(ctx context.Context, sc store.Scope, al *Alert, s send, to, id string) error {
	r := al.Recipients[s.i]
	switch {
	case s.ch.Channel == "in_app_alert":
		// the channel's priority and the repeat reach the app as the
		// gateway's notifications carry them
		extra := map[string]any{}
		if s.ch.Priority != "" {
			extra["priority"] = s.ch.Priority
		}
		if s.round > 0 {
			extra["repeat"] = s.round
		}
		return a.publishAlert(ctx, sc, al, r, "emergency_alert", extra)
	case a.notify == nil:
		return ErrNoGateway
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	n := Notification{ID: id, AlertID: al.AlertID, Channel: s.ch.Channel, Recipient: r.RecipientID, Title: al.Title, Message: al.Message,
		Severity: al.Severity, Priority: s.ch.Priority, To: to, RecipientType: r.RecipientType, ContactID: r.ContactID, Repeat: s.round,
		Org: sc.Org, Env: sc.Env}
	if s.c != nil {
		n.Language = s.c.Language
	}
	return a.notify.Notify(ctx, n)
}

// timings are the shortest and the summed times of the successful
// deliveries.
func timings(outs []outcome) (first, total time.Duration) {
	first = time.Duration(math.MaxInt64)
	for _, o := range outs {
		if o.ok {
			total += o.at
			first = min(first, o.at)
		}
	}
	return first, total
}

// deliveryStatus counts the recipients' deliveries as they stand:
// delivered ones are successful, those the gateway queue still retries are
// pending, and those that failed for good are failed; scheduled ones wait
// for their channel's delay; skipped deliveries (quiet hours, no address)
// and cancelled ones were never sent and count nowhere else. Its
// ChannelSchedule is left empty.
func deliveryStatus(rs []Recipient) DeliveryStatus {
	ds := DeliveryStatus{TotalRecipients: len(rs)}
	counts := map[string]*ChannelCounts{"sms": &ds.DeliveryBreakdown.SMS, "push_notification": &ds.DeliveryBreakdown.Push,
		"email": &ds.DeliveryBreakdown.Email, "in_app_alert": &ds.DeliveryBreakdown.InApp}
	for _, r := range rs {
		for _, d := range r.Deliveries {
			if d.Status == "scheduled" && d.Level == 0 {
				ds.ScheduledDeliveries++
			}
			if d.Level != 0 || d.Status == "skipped" || d.Status == "scheduled" || d.Status == "cancelled" {
				continue
			}
			v := &ds.DeliveryBreakdown.Voice
			cc := counts[d.Channel]
			switch {
			case !d.wentOut():
				// never left the hub (no gateway configured): failed,
				// not sent
			case d.Channel == "voice_call":
				v.Initiated++
			case cc != nil:
				cc.Sent++
			}
			switch d.Status {
			case "delivered":
				ds.SuccessfulDeliveries++
				// a voice call the gateway accepted is not known to
				// have been answered: it counts as initiated only
				if cc != nil {
					cc.Delivered++
				}
			case "retrying":
				ds.PendingDeliveries++
			default:
				ds.FailedDeliveries++
				if d.Channel == "voice_call" {
					v.Failed++
				} else if cc != nil {
					cc.Failed++
				}
			}
		}
	}
	return ds
}

// wentOut reports whether a delivery left the hub: published on the bus
// (in-app) or handed to the notification gateway, whatever the gateway
// answered. One that failed before (no gateway configured, a publish
// that failed) did not.
func (d RecipientDelivery) wentOut() bool {
	switch d.Status {
	case "delivered", "retrying":
		return true
	case "failed":
		return d.Channel != "in_app_alert" && d.NotificationID != ""
	}
	return false
}
