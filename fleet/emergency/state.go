package emergency

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/store"
)

// stored is an alert's document in the store: the alert as answered and
// the policy its escalation follows.
type stored struct {
	Alert      Alert             `json:"alert"`
	Escalation *EscalationPolicy `json:"escalation_policy,omitempty"`
	Acks       []float64         `json:"ack_seconds,omitempty"`
}

func (a *Alerts) save(ctx context.Context, sc store.Scope, al *Alert, prev int64, esc *EscalationPolicy) error {
	al.NextStatusCheck = al.nextCheck()
	doc, err := json.Marshal(stored{Alert: *al, Escalation: esc})
	if err != nil {
		return err
	}
	rec := store.Alert{ID: al.AlertID, Org: sc.Org, Env: sc.Env, Status: al.Status, Doc: doc, Version: prev + 1, CreatedAt: al.CreatedAt,
		UpdatedAt: apitime.Of(a.now()), ExpiresAt: al.ExpiresAt}
	if prev == 0 {
		return a.st.CreateAlert(ctx, rec)
	}
	return a.st.UpdateAlert(ctx, rec, prev)
}

// load reads an alert and brings its state to now: expiry and escalation
// levels whose delay passed while acknowledgments are pending. changed
// says whether it moved.
func (a *Alerts) load(ctx context.Context, sc store.Scope, id string) (al *Alert, esc *EscalationPolicy, ver int64, changed bool, err error) {
	rec, err := a.st.GetAlert(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, 0, false, ErrAlertNotFound
	}
	if err != nil {
		return nil, nil, 0, false, err
	}
	return a.fromRecord(ctx, sc, rec)
}

// fromRecord decodes a stored alert and brings its state to now, as load.
func (a *Alerts) fromRecord(ctx context.Context, sc store.Scope, rec store.Alert) (al *Alert, esc *EscalationPolicy, ver int64, changed bool, err error) {
	var s stored
	if err := json.Unmarshal(rec.Doc, &s); err != nil {
		return nil, nil, 0, false, err
	}
	al = &s.Alert
	if al.Recipients == nil {
		// stored as null when it reached nobody: a list with nobody in it
		al.Recipients = []Recipient{}
	}
	now := a.now().UTC()
	if al.Status == "active" && !now.Before(al.ExpiresAt) {
		al.expire()
		changed = true
	}
	if a.sched == nil && a.escalate(ctx, sc, al, s.Escalation, now) {
		changed = true
	}
	al.NextStatusCheck = al.nextCheck()
	if al.AreaResolution.Approximated {
		// stored with a radius of 0 before an unknown extent was null
		al.AffectedAreaAnalysis.EstimatedImpactRadiusKm = nil
	}
	if m := &al.AlertMetrics; m.TimedDeliveries == 0 {
		// stored before the timings were counted: 0 was nothing delivered
		m.CreationToFirstDeliveryMS, m.AverageDeliveryTimeMS = nil, nil
	}
	return al, s.Escalation, rec.Version, changed, nil
}

// escalate raises an active alert with pending acknowledgments through
// every level whose time has come, publishing each level's action, and
// says whether it raised any.
func (a *Alerts) escalate(ctx context.Context, sc store.Scope, al *Alert, esc *EscalationPolicy, now time.Time) bool {
	if al.Status != "active" || !esc.on() || al.AcknowledgmentStatus.Pending <= 0 {
		return false
	}
	st := &al.EscalationStatus
	raised := false
	for st.CurrentLevel < len(esc.EscalationLevels) && st.NextEscalationAt != nil && !now.Before(*st.NextEscalationAt) {
		lvl := esc.EscalationLevels[st.CurrentLevel]
		st.CurrentLevel++
		st.EscalationTriggered = true
		if st.CurrentLevel < len(esc.EscalationLevels) {
			t := al.CreatedAt.Add(time.Duration(esc.EscalationLevels[st.CurrentLevel].DelayMinutes) * time.Minute)
			st.NextEscalationAt = &t
		} else {
			st.NextEscalationAt = nil
		}
		a.published(a.publishAction(ctx, sc, al, lvl.Action, event.Source{}), al.AlertID, "emergency_action")
		raised = true
	}
	return raised
}

// Get reads an alert with its state brought to now (stored when it
// moved); ErrAlertNotFound when the scope has none of that id.
func (a *Alerts) Get(ctx context.Context, sc store.Scope, id string) (Alert, error) {
	al, esc, ver, changed, err := a.load(ctx, sc, id)
	if err != nil {
		return Alert{}, err
	}
	if changed {
		if err := a.save(ctx, sc, al, ver, esc); err != nil && !errors.Is(err, store.ErrConflict) {
			return Alert{}, err
		}
	}
	if err := a.overlay(ctx, sc, al); err != nil {
		return Alert{}, err
	}
	return *al, nil
}

// Cancel cancels an active alert, calling off its delivery rounds still
// to come, and publishes emergency_alert_cancelled. An alert that is not active is a
// *TransitionError; one written by another request or a scheduled step
// meanwhile is read again and cancelled on top (ErrChanged only when that
// keeps happening).
func (a *Alerts) Cancel(ctx context.Context, sc store.Scope, id string) (Alert, error) {
	return rewritten(ctx, func() (Alert, error) { return a.cancel(ctx, sc, id) })
}

// maxRewrites bounds how often a cancellation or an acknowledgment reads
// the alert again when another request or a scheduled step wrote it
// between its read and its write: none of those undoes the others (the
// acknowledgments of a fleet's drivers answering one alert at once each
// change a recipient of their own), so each is applied again on top.
const maxRewrites = 64

// rewritten runs op, a read, change and conditional write of an alert,
// again while its write meets another one (store.ErrConflict), after a
// short random pause that spreads the writers that met; ErrChanged when
// it met one every time.
func rewritten(ctx context.Context, op func() (Alert, error)) (Alert, error) {
	for attempt := 1; ; attempt++ {
		al, err := op()
		if !errors.Is(err, store.ErrConflict) {
			return al, err
		}
		if attempt >= maxRewrites || ctx.Err() != nil {
			return Alert{}, ErrChanged
		}
		rewritePause(attempt)
	}
}

// rewritePause is the short random pause before the attempt-th rewrite of
// a record another request wrote meanwhile: up to 0.5 ms per attempt (at
// most 10 ms), which spreads the writers that met.
func rewritePause(attempt int) {
	time.Sleep(time.Duration(rand.IntN(500*min(attempt, 20))) * time.Microsecond)
}

// cancel is one attempt of Cancel; store.ErrConflict when the alert was
// written meanwhile.
func (a *Alerts) cancel(ctx context.Context, sc store.Scope, id string) (Alert, error) {
	al, esc, ver, _, err := a.load(ctx, sc, id)
	if err != nil {
		return Alert{}, err
	}
	if al.Status != "active" {
		return Alert{}, &TransitionError{From: al.Status, To: "cancelled"}
	}
	al.Status = "cancelled"
	al.EscalationStatus.NextEscalationAt = nil
	al.stopDeliveries(ChannelCancelled, "alert_cancelled")
	if err := a.save(ctx, sc, al, ver, esc); err != nil {
		return Alert{}, err
	}
	a.published(a.publishAlert(ctx, sc, al, Recipient{}, "emergency_alert_cancelled", nil), al.AlertID, "emergency_alert_cancelled")
	return *al, nil
}

// Check names every field of b at fault, at once (Acknowledge's checks,
// which change nothing); empty when there is none.
func (b *AckBody) Check() map[string]string {
	bad := map[string]string{}
	if b.RecipientID == "" {
		bad["recipient_id"] = "is required"
	}
	if b.RecipientType != "" && !slices.Contains(AckTypes, b.RecipientType) {
		bad["recipient_type"] = enum.Refusal(AckTypes...)
	}
	if utf8.RuneCountInString(b.Note) > maxNote {
		bad["note"] = fmt.Sprintf("must be at most %d characters", maxNote)
	}
	return bad
}

// Acknowledge records a recipient's acknowledgment of an active alert
// (again is a no-op): their delayed deliveries and repeats are called
// off. An alert that is not active is a *TransitionError; one written by
// another request or a scheduled step meanwhile is read again and the
// acknowledgment recorded on top (ErrChanged only when that keeps
// happening).
func (a *Alerts) Acknowledge(ctx context.Context, sc store.Scope, id string, b AckBody) (Alert, error) {
	if bad := b.Check(); len(bad) > 0 {
		return Alert{}, &ValidationError{Fields: bad}
	}
	return rewritten(ctx, func() (Alert, error) { return a.acknowledge(ctx, sc, id, b) })
}

// acknowledge is one attempt of Acknowledge; store.ErrConflict when the
// alert was written meanwhile.
func (a *Alerts) acknowledge(ctx context.Context, sc store.Scope, id string, b AckBody) (Alert, error) {
	al, esc, ver, _, err := a.load(ctx, sc, id)
	if err != nil {
		return Alert{}, err
	}
	if al.Status != "active" {
		return Alert{}, &TransitionError{From: al.Status, To: "acknowledged"}
	}
	i := slices.IndexFunc(al.Recipients, func(r Recipient) bool { return r.RecipientID == b.RecipientID })
	if i < 0 {
		return Alert{}, &ValidationError{Fields: map[string]string{"recipient_id": "is not a recipient of this alert"}}
	}
	if r := &al.Recipients[i]; r.AcknowledgedAt == nil {
		now := apitime.Of(a.now())
		r.AcknowledgedAt, r.Note, r.AcknowledgedByType = &now, b.Note, cmp.Or(b.RecipientType, r.RecipientType)
		al.acknowledged(now)
		// their delayed deliveries and repeats are called off; once
		// nobody is left to acknowledge, every channel is done
		r.cancelScheduled("acknowledged")
		if !al.unacknowledged() {
			al.stopDeliveries(ChannelDone, "acknowledged")
		}
		al.recount()
	}
	if err := a.save(ctx, sc, al, ver, esc); err != nil {
		return Alert{}, err
	}
	return *al, nil
}

// maxNote is the longest note of an acknowledgment, in characters, as
// an incident's status change takes its notes.
const maxNote = 2000

// AckTypes are the recipient types an acknowledgment may name.
var AckTypes = []string{"driver", "vehicle", "field_personnel", "dispatcher", "supervisor", "emergency_management", "emergency_contact"}

// acknowledged counts one more acknowledgment, received at now; the last
// pending one stops the escalation.
func (al *Alert) acknowledged(now time.Time) {
	st := &al.AcknowledgmentStatus
	n, avg := float64(st.Received), 0.0
	if st.AverageResponseTimeSeconds != nil {
		avg = *st.AverageResponseTimeSeconds
	}
	avg = round2((avg*n + now.Sub(al.CreatedAt).Seconds()) / (n + 1))
	st.AverageResponseTimeSeconds = &avg
	st.Received++
	st.Pending = max(0, st.Pending-1)
	st.AcknowledgmentRate = share(1, st.Received, len(al.Recipients))
	al.AlertMetrics.EngagementRate = share(1, st.Received, len(al.Recipients))
	if st.Pending == 0 {
		al.EscalationStatus.NextEscalationAt = nil
	}
}
