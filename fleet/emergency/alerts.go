package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/store"
)

// AlertStore keeps alerts.
type AlertStore interface {
	CreateAlert(ctx context.Context, a store.Alert) error
	GetAlert(ctx context.Context, s store.Scope, id string) (store.Alert, error)
	// UpdateAlert writes a if the stored version is still prev.
	UpdateAlert(ctx context.Context, a store.Alert, prev int64) error
	// ListAlerts returns the alerts matching f, newest first.
	ListAlerts(ctx context.Context, f store.AlertFilter) ([]store.Alert, error)
}

// AlertsConfig tunes the alert service; zero fields take defaults. Its
// Claims are the scheduled escalation steps'.
type AlertsConfig struct {
	Claims
	// Places draws city and state areas from the loaded addresses; nil:
	// those areas are approximated.
	Places Places
}

// Alerts is the alert service.
type Alerts struct {
	cfg   AlertsConfig
	st    AlertStore
	sched Schedule // nil when st keeps no schedule: steps are taken when an alert is read
	// incidents are looked through for related ones; nil when st keeps
	// no incidents
	incidents IncidentLister
	trips     TripLister
	dir       Directory // nil: no directory, the audiences beyond drivers reach nobody
	notify    Notifier  // nil: only in-app alerts are delivered
	pub       Publisher
	now       func() time.Time
}

// NewAlerts makes the service; dir, notify and pub may be nil. When st
// is also a Schedule, escalation levels and expiry are sent by Run (on
// any node) when they fall due; otherwise they are brought up to date
// when the alert is read.
func NewAlerts(cfg AlertsConfig, st AlertStore, trips TripLister, dir Directory, notify Notifier, pub Publisher) *Alerts {
	cfg.Claims = cfg.Claims.withDefaults()
	a := &Alerts{cfg: cfg, st: st, trips: trips, dir: dir, notify: notify, pub: pub, now: cfg.Now}
	a.sched, _ = st.(Schedule)
	a.incidents, _ = st.(IncidentLister)
	return a
}

// Create validates an alert, finds its recipients, delivers it to each of
// them on every channel, runs its automated actions and stores it; the
// answer carries the outcome of all of them.
func (a *Alerts) Create(ctx context.Context, sc store.Scope, b AlertBody) (Alert, error) {
	now := apitime.Of(a.now())
	exp, bad := b.validate(now)
	if a.sched == nil {
		// without a schedule nothing would send the later rounds
		for i, c := range b.DeliveryChannels {
			p := fmt.Sprintf("delivery_channels[%d]", i)
			if c.DelayMinutes > 0 {
				bad[p+".delay_minutes"] = "needs a store that keeps the alert schedule"
			}
			if c.MaxRepeats > 0 {
				bad[p+".max_repeats"] = "needs a store that keeps the alert schedule"
			}
		}
	}
	if len(bad) > 0 {
		return Alert{}, &ValidationError{Fields: bad}
	}
	reg, res, radius, err := a.resolve(ctx, sc, b.AffectedArea)
	if err != nil {
		return Alert{}, err
	}
	b.notifyContacts()
	recips, people, vehicles, err := a.recipients(ctx, sc, &b, reg)
	if err != nil {
		return Alert{}, err
	}
	if recips == nil {
		recips = []Recipient{} // nobody: a list with nobody in it
	}
	related, err := a.related(ctx, sc, &b, reg)
	if err != nil {
		return Alert{}, err
	}
	var idb [10]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Alert{}, fmt.Errorf("emergency: alert id: %w", err)
	}
	al := Alert{AlertID: "alr_" + hex.EncodeToString(idb[:]), AlertType: b.AlertType, Severity: b.Severity, Title: b.Title, Message: b.Message,
		Status: "active", CreatedAt: now, ExpiresAt: exp, RelatedIncidents: related, Recipients: recips, AutomatedActionsExecuted: []ActionRecord{}}
	// the escalation starts before the delivery, so the events the
	// delivery publishes tell of it
	al.EscalationStatus = startEscalation(b.EscalationPolicy, b.DeliveryChannels, now)
	if !b.AcknowledgmentRequired {
		al.EscalationStatus.NextEscalationAt = nil
	}
	outs, delivered := a.deliver(ctx, sc, &al, b.DeliveryChannels, people)
	for i := range al.Recipients {
		al.Recipients[i].Delivered = delivered[al.Recipients[i].RecipientID]
	}
	al.DeliveryStatus.ChannelSchedule = planChannels(b.DeliveryChannels, now, exp, func(channel string) bool {
		for _, r := range al.Recipients {
			for _, d := range r.Deliveries {
				if d.Channel == channel && d.Level == 0 && d.Repeat == 0 && d.wentOut() {
					return true
				}
			}
		}
		return false
	})
	if len(al.Recipients) == 0 {
		al.stopDeliveries(ChannelDone, "")
	}
	al.recount()
	al.AlertMetrics = deliveryMetrics(al.CreatedAt, outs, len(delivered), len(recips))
	al.AreaResolution = res
	al.AffectedAreaAnalysis = AreaAnalysis{TotalVehiclesInArea: len(vehicles)}
	if !res.Approximated {
		// an approximated area has no known extent: no radius is made up
		al.AffectedAreaAnalysis.EstimatedImpactRadiusKm = &radius
	}
	al.AffectedAreaAnalysis.count(al.Recipients)
	// escalation waits on acknowledgments: without required ones nothing
	// is pending, and no level is ever sent
	al.AcknowledgmentStatus = AckStatus{Required: b.AcknowledgmentRequired, AcknowledgmentRate: share(1, 0, len(al.Recipients))}
	al.AlertMetrics.EngagementRate = share(1, 0, len(al.Recipients))
	if b.AcknowledgmentRequired {
		al.AcknowledgmentStatus.Pending = len(recips)
	}
	if al.AcknowledgmentStatus.Pending == 0 {
		// nobody to acknowledge (no recipient): no level will be sent
		al.EscalationStatus.NextEscalationAt = nil
	}
	al.AutomatedActionsExecuted = append(al.AutomatedActionsExecuted, a.runActions(ctx, sc, &al, b.AutomatedActions, vehicles, now)...)
	al.NextStatusCheck = al.nextCheck()
	if err := a.schedule(ctx, sc, &al, b.EscalationPolicy); err != nil {
		return Alert{}, err
	}
	if err := a.save(ctx, sc, &al, 0, b.EscalationPolicy); err != nil {
		return Alert{}, err
	}
	return al, nil
}

// deliveryMetrics are the timings of a new alert's successful deliveries
// (outs, made as it was created) and the share of recipients reached.
func deliveryMetrics(created time.Time, outs []outcome, reached, recipients int) Metrics {
	var m Metrics
	m.timed(created, created, outs)
	m.NotificationReachPercentage = share(100, reached, recipients)
	return m
}

// share is n over of, times scale, rounded to hundredths; nil when of is
// 0: a share of nobody is no figure, not 0.
func share(scale float64, n, of int) *float64 {
	if of == 0 {
		return nil
	}
	v := round2(scale * float64(n) / float64(of))
	return &v
}

// count sets the per-audience counts of recipients reached at least once.
func (aa *AreaAnalysis) count(recips []Recipient) {
	aa.ActiveDriversNotified = notified(recips, audDrivers)
	aa.FieldPersonnelNotified = notified(recips, audField)
	aa.DispatchersNotified = notified(recips, audDispatch)
	aa.EmergencyContactsNotified = notified(recips, audEmergency)
	aa.SpecificDriversNotified = notified(recips, audSpecificDrivers)
	aa.SpecificVehiclesNotified = notified(recips, audSpecificVehicles)
}

// notified counts the recipients of an audience reached at least once.
func notified(recips []Recipient, audience string) int {
	n := 0
	for _, r := range recips {
		if slices.Contains(r.Audiences, audience) && r.Delivered {
			n++
		}
	}
	return n
}

// startEscalation is the escalation state of a new alert: its first level
// falls due after that level's delay.
func startEscalation(p *EscalationPolicy, channels []Channel, now time.Time) Escalation {
	e := Escalation{Enabled: p.on()}
	if e.Enabled {
		for _, c := range channels {
			if c.Channel != "in_app_alert" && !slices.Contains(e.Channels, c.Channel) {
				e.Channels = append(e.Channels, c.Channel)
			}
		}
		if len(e.Channels) == 0 {
			e.Channels = []string{"sms"}
		}
	}
	if e.Enabled && len(p.EscalationLevels) > 0 {
		t := now.Add(time.Duration(p.EscalationLevels[0].DelayMinutes) * time.Minute)
		e.NextEscalationAt = &t
	}
	return e
}

// runActions carries out each automated action and records its real
// state. notify_emergency_contacts added the emergency contacts to the
// alert's audience (AlertBody.notifyContacts), so they were sent the alert
// through the gateway like every recipient: it is sent when at least one
// of them was reached, failed when none of them was, skipped when the
// audience held none (nobody to notify). The other actions are requests
// to the devices of the vehicles in the area, one emergency_action event
// per vehicle naming it (consoles see them on their streams too); the
// action's count is the requests published, and it is requested once at
// least one is on the bus, failed when none could be published, skipped
// when no vehicle is in the area. The hub does not learn whether a device
// carried one out.
func (a *Alerts) runActions(ctx context.Context, sc store.Scope, al *Alert, actions []string, vehicles []areaVehicle, now time.Time) []ActionRecord {
	var recs []ActionRecord
	for _, act := range actions {
		rec := ActionRecord{Action: act, Status: ActionRequested, ExecutedAt: now}
		if act == "notify_emergency_contacts" {
			var reached int
			rec.Status, reached = al.contactsNotified()
			rec.ContactsNotified = &reached
			recs = append(recs, rec)
			continue
		}
		n := 0
		for _, v := range vehicles {
			err := a.publishAction(ctx, sc, al, act, event.Source{VehicleID: v.vehicleID, DriverID: v.driverID, TripID: v.tripID})
			a.published(err, al.AlertID, "emergency_action")
			if err == nil {
				n++
			}
		}
		switch {
		case len(vehicles) == 0:
			rec.Status = ActionSkipped
		case n == 0:
			rec.Status = ActionFailed
		}
		switch act {
		case "suspend_outdoor_operations":
			rec.AffectedOperations = &n
		case "route_vehicles_to_shelter", "show_safe_route":
			rec.AffectedVehicles = &n
		case "enable_emergency_tracking":
			rec.TrackingEnabledFor = &n
		}
		recs = append(recs, rec)
	}
	return recs
}

// contactsNotified is the state of the notify_emergency_contacts action
// as the emergency contacts' deliveries stand, and how many of them were
// reached: sent once one was; pending while none was and some delivery
// to them waits for its channel's delay or a gateway retry; failed when
// some was tried and every one failed; skipped when there is nobody to
// notify (no driver in the area has an emergency contact, or the body
// excludes them) or nothing was tried (quiet hours, no address, a delay
// the cancellation or expiry called off).
func (al *Alert) contactsNotified() (status string, reached int) {
	contacts, pending, tried := 0, false, false
	for _, r := range al.Recipients {
		if !slices.Contains(r.Audiences, audEmergency) {
			continue
		}
		contacts++
		if r.Delivered {
			reached++
			continue
		}
		for _, d := range r.Deliveries {
			switch {
			case d.Level != 0:
			case d.Status == "scheduled" || d.Status == "retrying":
				pending = true
			case d.Status == "failed":
				tried = true
			}
		}
	}
	switch {
	case contacts == 0:
		return ActionSkipped, 0
	case reached > 0:
		return ActionSent, reached
	case pending:
		return ActionPending, 0
	case tried:
		return ActionFailed, 0
	}
	return ActionSkipped, 0
}

// recountActions brings the notify_emergency_contacts action up to its
// contacts' deliveries (a delayed round or a gateway retry that reached
// one of them makes it sent).
func (al *Alert) recountActions() {
	for i := range al.AutomatedActionsExecuted {
		if a := &al.AutomatedActionsExecuted[i]; a.Action == "notify_emergency_contacts" {
			var reached int
			a.Status, reached = al.contactsNotified()
			a.ContactsNotified = &reached
		}
	}
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

// impactRadius is the radius of a radius area, or the distance in km from
// a polygon's mean vertex to its farthest vertex; 0 for other areas.
func impactRadius(a *AffectedArea) float64 {
	switch a.Type {
	case "radius":
		return *a.RadiusKm
	case "polygon":
		var lat, lon float64
		for _, p := range a.Polygon {
			lat, lon = lat+*p.Latitude, lon+*p.Longitude
		}
		n := float64(len(a.Polygon))
		r := 0.0
		for _, p := range a.Polygon {
			r = math.Max(r, geo.Distance(geo.Point{Lat: lat / n, Lon: lon / n}, geo.Point{Lat: *p.Latitude, Lon: *p.Longitude})/1000)
		}
		return round2(r)
	}
	return 0
}
