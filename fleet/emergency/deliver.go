package emergency

import (
	"context"
	"errors"
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

// deliver sends an alert to each of its recipients on every channel,
// concurrently, at most maxDeliveries at a time, and answers when all are
// done with their outcomes and the recipients reached at least once. A
// recipient from the directory is reached at their address for each
// channel; a channel they have no address for, or one other than in-app
// during their quiet hours, is skipped. Each recipient's Deliveries
// records every channel's outcome.
func (a *Alerts) deliver(ctx context.Context, sc store.Scope, al *Alert, channels []Channel, people map[string]*contacts.Contact) ([]outcome, map[string]bool) {
	var mu sync.Mutex // guards outs, delivered and per
	var outs []outcome
	delivered := map[string]bool{}
	per := make([][]RecipientDelivery, len(al.Recipients))
	sem := make(chan struct{}, maxDeliveries)
	var wg sync.WaitGroup
	now := a.now()
	for _, ch := range channels {
		for i := range al.Recipients {
			r := al.Recipients[i]
			c := people[r.RecipientID]
			rd := RecipientDelivery{Channel: ch.Channel}
			if c != nil && ch.Channel != "in_app_alert" {
				rd.To = address(c, ch.Channel)
				switch {
				case rd.To == "":
					rd.Status, rd.Reason = "skipped", "no_address"
				case c.Quiet(now, al.Severity):
					rd.Status, rd.Reason = "skipped", "quiet_hours"
				}
			}
			if rd.Status != "" {
				mu.Lock()
				per[i] = append(per[i], rd)
				mu.Unlock()
				continue
			}
			wg.Add(1)
			sem <- struct{}{}
			go func(ch Channel, i int, r Recipient, rd RecipientDelivery) {
				defer wg.Done()
				defer func() { <-sem }()
				start := time.Now()
				err := a.deliverOne(ctx, sc, al, ch, r, c, rd.To)
				mu.Lock()
				defer mu.Unlock()
				outs = append(outs, outcome{ch.Channel, err == nil, time.Since(start)})
				rd.Status = "delivered"
				switch {
				case err == nil:
					delivered[r.RecipientID] = true
				case errors.Is(err, ErrRetrying):
					rd.Status, rd.Reason = "retrying", err.Error()
				default:
					rd.Status, rd.Reason = "failed", err.Error()
				}
				per[i] = append(per[i], rd)
			}(ch, i, r, rd)
		}
	}
	wg.Wait()
	for i := range al.Recipients {
		al.Recipients[i].Deliveries = append(al.Recipients[i].Deliveries, per[i]...)
	}
	return outs, delivered
}

// deliverOne sends an alert to one recipient on one channel: in_app_alert
// on the bus, the others through the gateway.
func (a *Alerts) deliverOne(ctx context.Context, sc store.Scope, al *Alert, ch Channel, r Recipient, c *contacts.Contact, to string) error {
	switch {
	case ch.Channel == "in_app_alert":
		return a.publishAlert(ctx, sc, al, r, "emergency_alert")
	case a.notify == nil:
		return ErrNoGateway
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	n := Notification{AlertID: al.AlertID, Channel: ch.Channel, Recipient: r.RecipientID, Title: al.Title, Message: al.Message,
		Severity: al.Severity, Priority: ch.Priority, To: to, RecipientType: r.RecipientType, ContactID: r.ContactID, Org: sc.Org, Env: sc.Env}
	if c != nil {
		n.Language = c.Language
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
// pending, and those that failed for good are failed; skipped deliveries
// (quiet hours, no address) were never sent and count nowhere.
func deliveryStatus(rs []Recipient) DeliveryStatus {
	ds := DeliveryStatus{TotalRecipients: len(rs)}
	counts := map[string]*ChannelCounts{"sms": &ds.DeliveryBreakdown.SMS, "push_notification": &ds.DeliveryBreakdown.Push,
		"email": &ds.DeliveryBreakdown.Email, "in_app_alert": &ds.DeliveryBreakdown.InApp}
	for _, r := range rs {
		for _, d := range r.Deliveries {
			if d.Level != 0 || d.Status == "skipped" {
				continue
			}
			v := &ds.DeliveryBreakdown.Voice
			cc := counts[d.Channel]
			if d.Channel == "voice_call" {
				v.Initiated++
			} else if cc != nil {
				cc.Sent++
			}
			switch d.Status {
			case "delivered":
				ds.SuccessfulDeliveries++
				if d.Channel == "voice_call" {
					v.Answered++
				} else if cc != nil {
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
