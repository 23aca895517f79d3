package emergency

import (
	"context"
	"math"
	"sync"
	"time"

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

// deliver sends an alert to each of its recipients on every channel,
// concurrently, at most maxDeliveries at a time, and answers when all are
// done with their outcomes and the recipients reached at least once.
func (a *Alerts) deliver(ctx context.Context, sc store.Scope, al *Alert, channels []Channel) ([]outcome, map[string]bool) {
	var mu sync.Mutex // guards outs and delivered
	var outs []outcome
	delivered := map[string]bool{}
	sem := make(chan struct{}, maxDeliveries)
	var wg sync.WaitGroup
	for _, ch := range channels {
		for _, r := range al.Recipients {
			wg.Add(1)
			sem <- struct{}{}
			go func(ch Channel, r Recipient) {
				defer wg.Done()
				defer func() { <-sem }()
				start := time.Now()
				err := a.deliverOne(ctx, sc, al, ch, r)
				mu.Lock()
				outs = append(outs, outcome{ch.Channel, err == nil, time.Since(start)})
				if err == nil {
					delivered[r.RecipientID] = true
				}
				mu.Unlock()
			}(ch, r)
		}
	}
	wg.Wait()
	return outs, delivered
}

// deliverOne sends an alert to one recipient on one channel: in_app_alert
// on the bus, the others through the gateway.
func (a *Alerts) deliverOne(ctx context.Context, sc store.Scope, al *Alert, ch Channel, r Recipient) error {
	switch {
	case ch.Channel == "in_app_alert":
		return a.publishAlert(ctx, sc, al, r, "emergency_alert")
	case a.notify == nil:
		return ErrNoGateway
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	return a.notify.Notify(ctx, Notification{AlertID: al.AlertID, Channel: ch.Channel, Recipient: r.RecipientID, Title: al.Title, Message: al.Message,
		Severity: al.Severity, Priority: ch.Priority})
}

// tally counts the outcomes per channel; first and total are the shortest
// and the summed times of the successful deliveries.
func tally(outs []outcome, recipients int) (ds DeliveryStatus, first, total time.Duration) {
	ds.TotalRecipients = recipients
	first = time.Duration(math.MaxInt64)
	counts := map[string]*ChannelCounts{"sms": &ds.DeliveryBreakdown.SMS, "push_notification": &ds.DeliveryBreakdown.Push,
		"email": &ds.DeliveryBreakdown.Email, "in_app_alert": &ds.DeliveryBreakdown.InApp}
	for _, o := range outs {
		if o.channel == "voice_call" {
			ds.DeliveryBreakdown.Voice.Initiated++
			if o.ok {
				ds.DeliveryBreakdown.Voice.Answered++
			} else {
				ds.DeliveryBreakdown.Voice.Failed++
			}
		} else {
			cc := counts[o.channel]
			cc.Sent++
			if o.ok {
				cc.Delivered++
			} else {
				cc.Failed++
			}
		}
		if o.ok {
			ds.SuccessfulDeliveries++
			total += o.at
			first = min(first, o.at)
		} else {
			ds.FailedDeliveries++
		}
	}
	return ds, first, total
}
