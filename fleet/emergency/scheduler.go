package emergency

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// Schedule keeps alerts' due steps (store.AlertSchedule): escalation
// levels, delivery rounds and expiry, claimed by one node at a time.
type Schedule interface {
	ScheduleAlert(ctx context.Context, steps []store.AlertDue) error
	ClaimDueAlerts(ctx context.Context, owner string, now, until time.Time, limit int) ([]store.AlertDue, error)
	FinishAlertDue(ctx context.Context, owner string, d store.AlertDue, at time.Time) error
}

// levelRoles are the roles an escalation action notifies.
var levelRoles = map[string]string{
	"notify_supervisors":          "supervisor",
	"notify_emergency_management": "emergency_management",
	"notify_dispatchers":          "dispatcher",
}

// ChannelPriorities are a delivery channel's priorities, handed to the
// gateway with each notification.
var ChannelPriorities = []string{"immediate", "high", "normal", "low"}

// schedule stores a new alert's steps: each escalation level at its due
// time (the level's delay after creation), each delivery round still to
// come (deliverySteps) and the expiry.
func (a *Alerts) schedule(ctx context.Context, sc store.Scope, al *Alert, esc *EscalationPolicy) error {
	if a.sched == nil {
		return nil
	}
	steps := []store.AlertDue{{AlertID: al.AlertID, Org: sc.Org, Env: sc.Env, Kind: store.AlertDueExpiry, DueAt: al.ExpiresAt}}
	steps = append(steps, deliverySteps(sc, al)...)
	if esc.on() {
		for i, l := range esc.EscalationLevels {
			steps = append(steps, store.AlertDue{AlertID: al.AlertID, Org: sc.Org, Env: sc.Env, Kind: store.AlertDueEscalation, Level: i + 1,
				DueAt: al.CreatedAt.Add(time.Duration(l.DelayMinutes) * time.Minute)})
		}
	}
	return a.sched.ScheduleAlert(ctx, steps)
}

// Run sends due escalation levels and delivery rounds and expires
// alerts, looking every Poll, until ctx ends; it answers nil then.
// Without a Schedule it only waits.
func (a *Alerts) Run(ctx context.Context) error {
	if a.sched == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(a.cfg.Poll)
	defer t.Stop()
	for {
		if _, err := a.Tick(ctx); err != nil && ctx.Err() == nil {
			// The next look retries: the steps stay due.
			a.cfg.Log.Warn("emergency: alert scheduler", "err", err)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}

// Tick takes every step due now (by the service's clock): it claims them,
// sends each escalation level whose alert is still active with
// acknowledgments pending and each delivery round of an active alert
// (takeRound), expires alerts, and marks the steps done. It answers how
// many steps it took.
//
// A claimed step is this node's for Lease; the level (current_level) or
// the round (the channel's schedule) is recorded in the alert before the
// step is marked done, and a level the alert already reached, or a round
// its channel is past, is not sent again, so a step another node takes
// over after a crash between the two is not sent twice. A crash after
// sending and before recording lets another node take the step over once
// the lease lapses: each of its notifications keeps its id
// (levelNotificationID, deliveryNotificationID: the webhook-id), so a
// queue that holds it answers its state instead of sending it again, and
// one the queue did not record as delivered reaches the gateway again
// under the same webhook-id.
func (a *Alerts) Tick(ctx context.Context) (int, error) {
	if a.sched == nil {
		return 0, nil
	}
	n := 0
	for {
		now := a.now().UTC()
		due, err := a.sched.ClaimDueAlerts(ctx, a.cfg.Node, now, now.Add(a.cfg.Lease), a.cfg.Batch)
		if err != nil {
			return n, err
		}
		for _, d := range due {
			if err := a.take(ctx, d); err != nil {
				return n, fmt.Errorf("emergency: alert %s %s %d: %w", d.AlertID, d.Kind, d.Level, err)
			}
			if err := a.sched.FinishAlertDue(ctx, a.cfg.Node, d, a.now().UTC()); err != nil && !errors.Is(err, store.ErrConflict) {
				return n, err
			}
			n++
		}
		if len(due) < a.cfg.Batch {
			return n, nil
		}
	}
}

// take carries out one step on the stored alert, retrying a write that
// lost to a concurrent change; notifications are sent at most once per
// call.
func (a *Alerts) take(ctx context.Context, d store.AlertDue) error {
	sc := store.Scope{Org: d.Org, Env: d.Env}
	var rec *LevelRecord
	var sent []roundSent
	for range 3 {
		stored, s, err := a.read(ctx, sc, d.AlertID)
		if errors.Is(err, ErrAlertNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		al := &s.Alert
		now := apitime.Of(a.now())
		changed := false
		switch d.Kind {
		case store.AlertDueExpiry:
			if changed = al.Status == "active"; changed {
				al.expire()
			}
		case store.AlertDueEscalation:
			changed = a.takeLevel(ctx, sc, al, s.Escalation, d, now, &rec)
		case store.AlertDueDelivery:
			if changed, err = a.takeRound(ctx, sc, al, d, now, &sent); err != nil {
				return err
			}
		}
		if !changed {
			return nil
		}
		err = a.save(ctx, sc, al, stored.Version, s.Escalation)
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return ErrChanged
}

// expire marks an active alert expired: nothing more is sent.
func (al *Alert) expire() {
	al.Status = "expired"
	al.EscalationStatus.NextEscalationAt = nil
	al.stopDeliveries(ChannelCancelled, "alert_expired")
}

// takeLevel sends escalation level d.Level when the alert is active with
// acknowledgments pending and has not reached it, and records it; rec
// keeps the level's record across retries of the alert's write, so a
// level is sent at most once per take. It says whether the alert changed.
func (a *Alerts) takeLevel(ctx context.Context, sc store.Scope, al *Alert, esc *EscalationPolicy, d store.AlertDue, now time.Time, rec **LevelRecord) bool {
	st := &al.EscalationStatus
	if al.Status != "active" || !esc.on() || al.AcknowledgmentStatus.Pending <= 0 ||
		d.Level > len(esc.EscalationLevels) || st.CurrentLevel >= d.Level {
		return false
	}
	lvl := esc.EscalationLevels[d.Level-1]
	sent := *rec == nil
	if sent {
		*rec = a.sendLevel(ctx, sc, al, d, lvl, now)
	}
	st.CurrentLevel, st.EscalationTriggered = d.Level, true
	st.Levels = append(st.Levels, **rec)
	st.NextEscalationAt = nil
	if d.Level < len(esc.EscalationLevels) {
		t := al.CreatedAt.Add(time.Duration(esc.EscalationLevels[d.Level].DelayMinutes) * time.Minute)
		st.NextEscalationAt = &t
	}
	if sent { // once the level is recorded, so its event tells of it
		a.published(a.publishAction(ctx, sc, al, lvl.Action, event.Source{}), al.AlertID, "emergency_action")
	}
	return true
}

// read loads an alert's stored document as it is.
func (a *Alerts) read(ctx context.Context, sc store.Scope, id string) (store.Alert, *stored, error) {
	rec, err := a.st.GetAlert(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return rec, nil, ErrAlertNotFound
	}
	if err != nil {
		return rec, nil, err
	}
	var s stored
	if err := json.Unmarshal(rec.Doc, &s); err != nil {
		return rec, nil, err
	}
	return rec, &s, nil
}

// sendLevel notifies the contacts of a level's role through the gateway
// on the escalation's channels and records the outcomes.
func (a *Alerts) sendLevel(ctx context.Context, sc store.Scope, al *Alert, d store.AlertDue, lvl EscalationLevel, now time.Time) *LevelRecord {
	rec := &LevelRecord{Level: d.Level, Action: lvl.Action, DueAt: d.DueAt, TriggeredAt: now, Notified: []LevelRecipient{}}
	role, ok := levelRoles[lvl.Action]
	if !ok || a.dir == nil {
		return rec
	}
	people, err := a.dir.WithRole(ctx, sc, role)
	if err != nil {
		return rec
	}
	for i := range people {
		c := &people[i]
		lr := LevelRecipient{ContactID: c.ContactID, Name: c.Name, Role: role, Deliveries: []RecipientDelivery{}}
		for _, ch := range al.EscalationStatus.Channels {
			lr.Deliveries = append(lr.Deliveries, a.sendOne(ctx, sc, al, c, role, ch, d.Level, now))
		}
		rec.Notified = append(rec.Notified, lr)
	}
	return rec
}

// levelNotificationID is the id (webhook-id) of an escalation level's
// notification to a contact on a channel: the same whichever node sends
// it and however often, so a queue that holds it already does not send it
// again and a gateway drops a repeat.
func levelNotificationID(alertID string, level int, contactID, channel string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%s\x00%s", alertID, level, contactID, channel)))
	return "ntf_" + hex.EncodeToString(h[:10])
}

// sendOne is one escalation notification.
func (a *Alerts) sendOne(ctx context.Context, sc store.Scope, al *Alert, c *contacts.Contact, role, channel string, level int, now time.Time) RecipientDelivery {
	rd := RecipientDelivery{Channel: channel, To: address(c, channel), Level: level}
	switch {
	case rd.To == "":
		rd.Status, rd.Reason = "skipped", "no_address"
		return rd
	case c.Quiet(now, al.Severity):
		rd.Status, rd.Reason = "skipped", "quiet_hours"
		return rd
	case a.notify == nil:
		rd.Status, rd.Reason = "failed", ErrNoGateway.Error()
		return rd
	}
	nctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	err := a.notify.Notify(nctx, Notification{ID: levelNotificationID(al.AlertID, level, c.ContactID, channel), AlertID: al.AlertID, Channel: channel,
		Recipient: c.ContactID, Title: al.Title, Message: al.Message, Severity: al.Severity, To: rd.To, RecipientType: role, ContactID: c.ContactID,
		Language: c.Language, Level: level, Org: sc.Org, Env: sc.Env})
	rd.Status = "delivered"
	switch {
	case errors.Is(err, ErrRetrying):
		rd.Status, rd.Reason = "retrying", err.Error()
	case err != nil:
		rd.Status, rd.Reason = "failed", err.Error()
	}
	return rd
}
