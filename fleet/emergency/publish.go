package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
)

// publishAlert puts an alert event (emergency_alert to a recipient,
// emergency_alert_cancelled to all) on the bus, keyed by the recipient's
// vehicle.
func (a *Alerts) publishAlert(ctx context.Context, sc store.Scope, al *Alert, r Recipient, typ string) error {
	if a.pub == nil {
		return ErrNoGateway
	}
	data := map[string]any{"alert_id": al.AlertID, "alert_type": al.AlertType, "title": al.Title, "message": al.Message}
	if r.RecipientID != "" {
		data["recipient_id"] = r.RecipientID
	}
	return a.publish(ctx, sc, al, typ, event.Source{VehicleID: r.VehicleID}, data)
}

// published logs a publish that failed, but for want of a bus (the
// event is then not sent on purpose).
func (a *Alerts) published(err error, alertID, typ string) {
	if err != nil && !errors.Is(err, ErrNoGateway) {
		a.cfg.Log.Warn("emergency: alert event not published", "alert_id", alertID, "type", typ, "err", err)
	}
}

// publishAction puts an emergency_action event on the bus: an automated
// action requested of the vehicle src names (keyed by it), or an
// escalation level's action for the consoles (src empty).
func (a *Alerts) publishAction(ctx context.Context, sc store.Scope, al *Alert, action string, src event.Source) error {
	if a.pub == nil {
		return ErrNoGateway
	}
	return a.publish(ctx, sc, al, "emergency_action", src, map[string]any{"alert_id": al.AlertID, "action": action})
}

func (a *Alerts) publish(ctx context.Context, sc store.Scope, al *Alert, typ string, src event.Source, data map[string]any) error {
	sev := map[string]string{"low": "low", "moderate": "medium", "high": "high", "critical": "critical"}[al.Severity]
	now := a.now().UTC()
	var idb [8]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return fmt.Errorf("emergency: event id: %w", err)
	}
	ev := &event.Event{EventID: "evt_" + hex.EncodeToString(idb[:]), EventType: typ, Category: event.CategoryEmergency, Timestamp: now, Severity: sev,
		Priority: "emergency", Source: src, EventData: data,
		Metadata: event.Metadata{CorrelationID: al.AlertID, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.emergency"}}
	return a.pub.Publish(ctx, sc.Org, sc.Env, ev)
}
