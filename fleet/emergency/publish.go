package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// publishAlert puts an alert event (emergency_alert to a recipient,
// emergency_alert_cancelled to all) on the bus, keyed by the recipient's
// vehicle; extra joins its event_data (an in-app delivery's priority and
// repeat).
func (a *Alerts) publishAlert(ctx context.Context, sc store.Scope, al *Alert, r Recipient, typ string, extra map[string]any) error {
	if a.pub == nil {
		return ErrNoBus
	}
	data := map[string]any{"alert_id": al.AlertID, "alert_type": al.AlertType, "title": al.Title, "message": al.Message}
	maps.Copy(data, extra)
	if r.RecipientID != "" {
		data["recipient_id"] = r.RecipientID
	}
	return a.publish(ctx, sc, al, typ, event.Source{VehicleID: r.VehicleID}, data, typ != "emergency_alert")
}

// published logs a publish that failed, but for want of a bus (the
// event is then not sent on purpose).
func (a *Alerts) published(err error, alertID, typ string) {
	if err != nil && !errors.Is(err, ErrNoBus) {
		a.cfg.Log.Warn("emergency: alert event not published", "alert_id", alertID, "type", typ, "err", err)
	}
}

// publishAction puts an emergency_action event on the bus: an automated
// action requested of the vehicle src names (keyed by it), or an
// escalation level's action for the consoles (src empty).
func (a *Alerts) publishAction(ctx context.Context, sc store.Scope, al *Alert, action string, src event.Source) error {
	if a.pub == nil {
		return ErrNoBus
	}
	return a.publish(ctx, sc, al, "emergency_action", src, map[string]any{"alert_id": al.AlertID, "action": action}, true)
}

// publish puts an alert's event on the bus; counted says whether the
// alert's recipients have their deliveries counted (not while the alert
// is being delivered, as an emergency_alert is published).
func (a *Alerts) publish(ctx context.Context, sc store.Scope, al *Alert, typ string, src event.Source, data map[string]any, counted bool) error {
	sev := map[string]string{"low": "low", "moderate": "medium", "high": "high", "critical": "critical"}[al.Severity]
	now := apitime.Of(a.now())
	var idb [8]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return fmt.Errorf("emergency: event id: %w", err)
	}
	ev := &event.Event{EventID: "evt_" + hex.EncodeToString(idb[:]), EventType: typ, Category: event.CategoryEmergency, Timestamp: now, Severity: sev,
		Priority: "emergency", Source: src, EventData: data,
		Metadata: event.Metadata{CorrelationID: al.AlertID, ProcessingTime: apitime.Format(now), SourceSystem: "fleethub.emergency"}}
	ev.EmergencyResponse, ev.Escalation = alertResponse(al, counted), alertEscalation(al)
	return a.pub.Publish(ctx, sc.Org, sc.Env, ev)
}

// alertResponse is an alert event's emergency_response: the hub
// dispatches nothing and contacts no authority, so no response is
// initiated and none is timed; emergency_contacts_notified counts the
// recipients of the emergency_contacts audience reached at least once
// (as affected_area_analysis does), null while the alert is being
// delivered and the count is not made yet.
func alertResponse(al *Alert, counted bool) map[string]any {
	var reached any
	if counted {
		reached = notified(al.Recipients, audEmergency)
	}
	return map[string]any{"response_initiated": false, "authorities_contacted": false, "emergency_contacts_notified": reached, "estimated_response_time": nil}
}

// alertEscalation is an alert event's escalation: the level reached (0
// before the first), when the next level falls due (null when none is
// scheduled) and the contacts the levels reached (at least one delivery
// delivered).
func alertEscalation(al *Alert) map[string]any {
	st := &al.EscalationStatus
	var next any
	if st.NextEscalationAt != nil {
		next = apitime.Format(*st.NextEscalationAt)
	}
	contacts := []string{}
	for _, l := range st.Levels {
		for _, r := range l.Notified {
			if !slices.Contains(contacts, r.ContactID) && slices.ContainsFunc(r.Deliveries, func(d RecipientDelivery) bool { return d.Status == "delivered" }) {
				contacts = append(contacts, r.ContactID)
			}
		}
	}
	return map[string]any{"level": st.CurrentLevel, "next_escalation": next, "escalation_contacts": contacts}
}
