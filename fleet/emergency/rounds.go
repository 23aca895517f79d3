package emergency

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/internal/store"
)

// A delivery channel's rounds: its first delivery, DelayMinutes after the
// alert's creation (at once without a delay), then up to MaxRepeats
// repeats every RepeatIntervalMinutes, each to the recipients who have not
// acknowledged, whether or not the alert requires acknowledgments. Round
// n is due at FirstDeliveryAt + n intervals; the rounds due after the
// expiration are never scheduled. The rounds still to come are stored
// steps of the alert schedule (store.AlertDueDelivery, the channel, the
// round as level), taken by Tick on whichever node claims them, like the
// escalation levels. A channel's ChannelSchedule records its progress:
// a round is taken once, and one overtaken by a later round (a claim that
// lapsed) is dropped, since the later one reached the same people. When
// several rounds of a channel are due at once (no node ran when they fell
// due), only the latest is sent.

// planChannels is the schedule of a new alert's channels, created at now
// and expiring at exp: a channel without a delay was sent at now, and
// went says whether it went out to anyone.
func planChannels(chs []Channel, now, exp time.Time, went func(channel string) bool) []ChannelSchedule {
	out := make([]ChannelSchedule, 0, len(chs))
	for _, c := range chs {
		cs := ChannelSchedule{Channel: c.Channel, Priority: c.Priority, DelayMinutes: c.DelayMinutes, RepeatIntervalMinutes: c.RepeatIntervalMinutes,
			MaxRepeats: c.MaxRepeats, FirstDeliveryAt: now.Add(time.Duration(c.DelayMinutes) * time.Minute), Status: ChannelScheduled}
		cs.RepeatsRemaining = cs.repeatsBefore(exp)
		if c.DelayMinutes == 0 {
			cs.sent(0, now, exp, went(c.Channel))
		}
		out = append(out, cs)
	}
	return out
}

// due is when round n of the channel is due.
func (cs *ChannelSchedule) due(n int) time.Time {
	return cs.FirstDeliveryAt.Add(time.Duration(n*cs.RepeatIntervalMinutes) * time.Minute)
}

// repeatsBefore is how many of the channel's repeats are due before exp.
func (cs *ChannelSchedule) repeatsBefore(exp time.Time) int {
	n := 0
	for n < cs.MaxRepeats && cs.due(n+1).Before(exp) {
		n++
	}
	return n
}

// next is when the channel's next round is due; nil when none is to
// come.
func (cs *ChannelSchedule) next() *time.Time {
	switch cs.Status {
	case ChannelScheduled:
		t := cs.FirstDeliveryAt
		return &t
	case ChannelRepeating:
		return cs.NextRepeatAt
	}
	return nil
}

// pending says whether round n is still to be sent: it is not due before
// the channel's next round.
func (cs *ChannelSchedule) pending(n int) bool {
	next := cs.next()
	return next != nil && !cs.due(n).Before(*next)
}

// sent records round n as taken at now, and as sent when it went out to
// at least one recipient (went); exp bounds the repeats to come.
func (cs *ChannelSchedule) sent(n int, now, exp time.Time, went bool) {
	if went {
		cs.TimesSent++
		cs.LastSentAt = &now
	}
	last := cs.repeatsBefore(exp)
	cs.RepeatsRemaining = max(0, last-n)
	cs.Status, cs.NextRepeatAt = ChannelDone, nil
	if n < last {
		t := cs.due(n + 1)
		cs.Status, cs.NextRepeatAt = ChannelRepeating, &t
	}
}

// stop calls off the rounds still to come, the channel taking status.
func (cs *ChannelSchedule) stop(status string) {
	if cs.Status == ChannelScheduled || cs.Status == ChannelRepeating {
		cs.Status, cs.NextRepeatAt, cs.RepeatsRemaining = status, nil, 0
	}
}

// deliverySteps are the rounds of an alert's channels still to come, as
// steps of the alert schedule.
func deliverySteps(sc store.Scope, al *Alert) []store.AlertDue {
	var steps []store.AlertDue
	for _, cs := range al.DeliveryStatus.ChannelSchedule {
		for n := 0; n <= cs.MaxRepeats; n++ {
			if cs.pending(n) && cs.due(n).Before(al.ExpiresAt) {
				steps = append(steps, store.AlertDue{AlertID: al.AlertID, Org: sc.Org, Env: sc.Env, Kind: store.AlertDueDelivery, Channel: cs.Channel,
					Level: n, DueAt: cs.due(n)})
			}
		}
	}
	return steps
}

// recount counts the recipients' deliveries as they stand again, keeping
// the channels' schedule, the share of recipients reached by now
// (alert_metrics.notification_reach_percentage) and the
// notify_emergency_contacts action: a later round or a retry that
// reached someone counts as the first deliveries do.
func (al *Alert) recount() {
	cs := al.DeliveryStatus.ChannelSchedule
	al.DeliveryStatus = deliveryStatus(al.Recipients)
	al.DeliveryStatus.ChannelSchedule = cs
	reached := 0
	for _, r := range al.Recipients {
		if r.Delivered {
			reached++
		}
	}
	al.AlertMetrics.NotificationReachPercentage = share(100, reached, len(al.Recipients))
	al.recountActions()
}

// stopDeliveries calls off every round still to come, the channels
// taking status, and cancels the scheduled deliveries for reason.
func (al *Alert) stopDeliveries(status, reason string) {
	for i := range al.DeliveryStatus.ChannelSchedule {
		al.DeliveryStatus.ChannelSchedule[i].stop(status)
	}
	for i := range al.Recipients {
		al.Recipients[i].cancelScheduled(reason)
	}
	al.recount()
}

// cancelScheduled cancels the recipient's scheduled deliveries for reason.
func (r *Recipient) cancelScheduled(reason string) {
	for j := range r.Deliveries {
		if d := &r.Deliveries[j]; d.Status == "scheduled" {
			d.Status, d.Reason = "cancelled", reason
		}
	}
}

// unacknowledged says whether a recipient of the alert is still to
// acknowledge it (required or not).
func (al *Alert) unacknowledged() bool {
	return slices.ContainsFunc(al.Recipients, func(r Recipient) bool { return r.AcknowledgedAt == nil })
}

// roundSent is a round's outcome for one recipient.
type roundSent struct {
	recipientID string
	rd          RecipientDelivery
}

// takeRound sends round d.Level of channel d.Channel to the recipients of
// the alert who have not acknowledged, when the round is still pending and
// the alert active and not past its expiration, and records it; sent keeps the outcomes across retries of the
// alert's write, so a round is sent at most once per take. It says
// whether the alert changed.
func (a *Alerts) takeRound(ctx context.Context, sc store.Scope, al *Alert, d store.AlertDue, now time.Time, sent *[]roundSent) (bool, error) {
	i := slices.IndexFunc(al.DeliveryStatus.ChannelSchedule, func(cs ChannelSchedule) bool { return cs.Channel == d.Channel })
	if al.Status != "active" || !now.Before(al.ExpiresAt) || i < 0 || !al.DeliveryStatus.ChannelSchedule[i].pending(d.Level) {
		return false, nil
	}
	cs := &al.DeliveryStatus.ChannelSchedule[i]
	if n := d.Level + 1; n <= cs.repeatsBefore(al.ExpiresAt) && !now.Before(cs.due(n)) {
		// a later round is due too (nobody took this one on time): that
		// one goes, not both
		return false, nil
	}
	if *sent == nil {
		sends, err := a.roundSends(ctx, sc, al, cs, d)
		if err != nil {
			return false, err
		}
		rds, outs := a.sendAll(ctx, sc, al, sends)
		al.AlertMetrics.timed(al.CreatedAt, now, outs)
		*sent = make([]roundSent, 0, len(rds))
		for k, rd := range rds {
			*sent = append(*sent, roundSent{al.Recipients[sends[k].i].RecipientID, rd})
		}
	}
	for _, s := range *sent {
		if j := slices.IndexFunc(al.Recipients, func(r Recipient) bool { return r.RecipientID == s.recipientID }); j >= 0 {
			al.Recipients[j].record(s.rd)
		}
	}
	went := false
	for _, s := range *sent {
		went = went || s.rd.wentOut()
	}
	cs.sent(d.Level, now, al.ExpiresAt, went)
	al.recount()
	al.AffectedAreaAnalysis.count(al.Recipients)
	return true, nil
}

// roundSends are a round's sends: one to each recipient who has not
// acknowledged, at the address their directory entry holds now.
func (a *Alerts) roundSends(ctx context.Context, sc store.Scope, al *Alert, cs *ChannelSchedule, d store.AlertDue) ([]send, error) {
	ch := Channel{Channel: cs.Channel, Priority: cs.Priority}
	due := d.DueAt
	var sends []send
	for i, r := range al.Recipients {
		if r.AcknowledgedAt != nil {
			continue
		}
		s := send{i: i, ch: ch, round: d.Level, due: &due}
		if r.ContactID != "" && a.dir != nil {
			c, err := a.dir.Get(ctx, sc, r.ContactID)
			switch {
			case errors.Is(err, contacts.ErrNotFound):
				s.skip = "not_in_directory"
			case err != nil:
				return nil, err
			default:
				s.c = &c
			}
		}
		sends = append(sends, s)
	}
	return sends, nil
}

// record sets the outcome of a round on the recipient's delivery of its
// channel: a send replaces the entry; a skipped one leaves the outcome of
// the send before it, nothing having been sent.
func (r *Recipient) record(rd RecipientDelivery) {
	j := slices.IndexFunc(r.Deliveries, func(d RecipientDelivery) bool { return d.Channel == rd.Channel && d.Level == 0 })
	switch {
	case j < 0:
		r.Deliveries = append(r.Deliveries, rd)
	case rd.Status != "skipped" || r.Deliveries[j].Status == "scheduled" || r.Deliveries[j].Status == "skipped":
		r.Deliveries[j] = rd
	}
	if rd.Status == "delivered" {
		r.Delivered = true
	}
}
