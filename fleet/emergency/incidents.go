package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/store"
)

// IncidentStore keeps incidents.
type IncidentStore interface {
	CreateIncident(ctx context.Context, in store.Incident) error
	GetIncident(ctx context.Context, s store.Scope, id string) (store.Incident, error)
	// UpdateIncident writes in if the stored version is still prev.
	UpdateIncident(ctx context.Context, in store.Incident, prev int64) error
	ListIncidents(ctx context.Context, f store.IncidentFilter) ([]store.Incident, int, error)
}

// TripReader reads a trip: crash analysis takes its last reported speed.
type TripReader interface {
	GetTrip(ctx context.Context, s store.Scope, id string) (store.Trip, error)
}

// FleetReader answers the fleet a vehicle belongs to by its profile
// ("" without one): vehicles.Service.Fleet.
type FleetReader interface {
	Fleet(ctx context.Context, org, env, vehicleID string) (string, error)
}

// Publisher puts events of a scope on the bus (hub/publish).
type Publisher interface {
	Publish(ctx context.Context, org, env string, evs ...*event.Event) error
}

// Incidents is the incident service.
type Incidents struct {
	st     IncidentStore
	trips  TripReader
	dir    Directory
	notify Notifier
	pub    Publisher
	links  *Links      // nil: incidents have no share link
	fleets FleetReader // nil: an incident's fleet is the report's alone
	log    *slog.Logger
	now    func() time.Time
}

// NewIncidents makes the service; trips, dir, notify, pub and links may
// be nil.
func NewIncidents(st IncidentStore, trips TripReader, dir Directory, notify Notifier, pub Publisher, links *Links, log *slog.Logger) *Incidents {
	return &Incidents{st: st, trips: trips, dir: dir, notify: notify, pub: pub, links: links, log: log, now: time.Now}
}

// WithFleets makes the service fill a report's fleet_id, when left out,
// with the fleet of its vehicle's profile, as events are stamped.
func (s *Incidents) WithFleets(f FleetReader) *Incidents {
	s.fleets = f
	return s
}

func (b *ReportBody) validate() map[string]string {
	bad := map[string]string{}
	if msg := enum.Required(b.EventType, EventTypes...); msg != "" {
		bad["event_type"] = msg
	}
	if msg := enum.Required(b.SeverityLevel, Severities...); msg != "" {
		bad["severity_level"] = msg
	}
	if l := b.Location; l == nil {
		bad["location"] = "is required"
	} else {
		checkPoint(bad, "location", l.Latitude, l.Longitude)
		if l.Accuracy != nil && !(*l.Accuracy >= 0) {
			bad["location.accuracy"] = "must be a distance in metres, 0 or more"
		}
		// an address as trips and events take it, a landmark as a name
		if utf8.RuneCountInString(l.Address) > 500 {
			bad["location.address"] = "must be at most 500 characters"
		}
		if utf8.RuneCountInString(l.Landmark) > 200 {
			bad["location.landmark"] = "must be at most 200 characters"
		}
	}
	// ids as trips and vehicle profiles take them: one no trip or
	// profile could carry would match nothing
	for _, f := range []struct{ name, v string }{{"vehicle_id", b.VehicleID}, {"driver_id", b.DriverID}, {"fleet_id", b.FleetID}} {
		if f.v != "" && !vehicles.ValidID(f.v) {
			bad[f.name] = vehicles.IDRefusal
		}
	}
	if b.AirbagDeployed != nil && b.EventType != "crash" && slices.Contains(EventTypes, b.EventType) {
		bad["airbag_deployment"] = "applies to a crash only"
	}
	if utf8.RuneCountInString(b.Description) > 2000 {
		bad["description"] = "must be at most 2000 characters"
	}
	return bad
}

// Report records an incident reported by actor (the API key's id), and
// publishes incident_reported.
func (s *Incidents) Report(ctx context.Context, sc store.Scope, actor string, b ReportBody) (Incident, error) {
	bad := b.validate()
	trip, err := s.reportedTrip(ctx, sc, &b, bad)
	if err != nil {
		return Incident{}, err
	}
	if len(bad) > 0 {
		return Incident{}, &ValidationError{Fields: bad}
	}
	if b.FleetID == "" && b.VehicleID != "" && s.fleets != nil {
		// the fleet the vehicle's profile names, as its events carry it,
		// so that the listing's fleet_id finds the incident
		if b.FleetID, err = s.fleets.Fleet(ctx, sc.Org, sc.Env, b.VehicleID); err != nil {
			return Incident{}, fmt.Errorf("emergency: the fleet of vehicle %s: %w", b.VehicleID, err)
		}
	}
	now := apitime.Of(s.now())
	var idb [10]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Incident{}, fmt.Errorf("emergency: incident id: %w", err)
	}
	in := Incident{IncidentID: "inc_" + hex.EncodeToString(idb[:]), Status: "active", SeverityLevel: b.SeverityLevel, EventType: b.EventType,
		VehicleID: b.VehicleID, DriverID: b.DriverID, TripID: b.TripID, FleetID: b.FleetID, Description: b.Description, CreatedAt: now, UpdatedAt: now,
		Location: b.Location.location(), StatusUpdates: []StatusUpdate{{Timestamp: now, Status: "active", UpdatedBy: actor, Notes: opt("reported")}},
		InvolvedParties: []Party{}, CommunicationLog: []Communication{},
		LiveTracking: Tracking{AuthorizedViewers: []string{}}}
	if s.links != nil {
		exp := now.Add(s.links.ttl).Truncate(time.Second)
		url := SharePath + s.links.token(sc, in.IncidentID, exp)
		in.LiveTracking.ShareLocationURL, in.LiveTracking.ExpiresAt = &url, &exp
	}
	in.Timeline = []TimelineEntry{{Timestamp: now, Event: "incident_detected", Description: "Incident reported: " + b.EventType, Severity: b.SeverityLevel}}
	// no emergency dispatch is integrated: the block says so, and the
	// timeline lists only what happened
	in.EmergencyResponse = Response{Dispatched: false, ServicesContacted: []string{}, Status: "not_integrated", FirstResponders: []Responder{}}
	if b.VehicleID != "" || b.DriverID != "" {
		// a vehicle reported without a driver is the party itself: no
		// driver is known to be involved
		typ := "driver"
		if b.DriverID == "" {
			typ = "vehicle"
		}
		in.InvolvedParties = append(in.InvolvedParties, Party{Type: typ, DeviceID: opt(b.VehicleID), DriverID: opt(b.DriverID), Status: "unknown"})
	}
	if b.EventType == "crash" {
		in.CrashAnalysis = s.crashAnalysis(trip, &b, now)
		in.InsuranceClaim = &Claim{Status: "not_filed", NextSteps: []string{"document the scene", "collect witness details", "file the claim with the fleet's insurer"}}
	}
	s.notifyPeople(ctx, sc, &in, now)
	in.NextActions = nextActions(in)
	if err := s.save(ctx, sc, in, 0); err != nil {
		return Incident{}, err
	}
	s.publish(ctx, sc, in, "incident_reported")
	return in, nil
}

// reportedTrip reads the trip a report names: one the scope does not
// have is refused naming trip_id, a vehicle_id or driver_id the trip does
// not have is refused naming it, and those left out are the trip's. nil
// without a trip_id (or a trip reader).
func (s *Incidents) reportedTrip(ctx context.Context, sc store.Scope, b *ReportBody, bad map[string]string) (*store.Trip, error) {
	if b.TripID == "" && b.VehicleID != "" && vehicles.ValidID(b.VehicleID) {
		id, err := s.openTrip(ctx, sc, b)
		if err != nil {
			return nil, err
		}
		b.TripID = id
	}
	if b.TripID == "" || s.trips == nil {
		return nil, nil
	}
	t, err := s.trips.GetTrip(ctx, sc, b.TripID)
	if errors.Is(err, store.ErrNotFound) {
		bad["trip_id"] = "is not a trip of this organization"
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name      string
		v         *string
		ofTheTrip string
	}{{"vehicle_id", &b.VehicleID, t.VehicleID}, {"driver_id", &b.DriverID, t.DriverID}} {
		switch {
		case *f.v == "":
			*f.v = f.ofTheTrip
		case f.ofTheTrip != "" && *f.v != f.ofTheTrip:
			bad[f.name] = fmt.Sprintf("is not the %s of trip %s (%s)", f.name, t.ID, f.ofTheTrip)
		}
	}
	return &t, nil
}

// openTrips lists trips: the store's, to find a vehicle's open trip.
type openTrips interface {
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
}

// openTrip is the id of the trip a report of a vehicle without a trip_id
// happens on: the vehicle's active or paused trip (a vehicle has at most
// one), unless the report names another driver than the trip's; "" when
// there is none. The incident then has that trip's speed at impact, its
// driver and the live position its share link shows, as when the report
// names it.
func (s *Incidents) openTrip(ctx context.Context, sc store.Scope, b *ReportBody) (string, error) {
	l, ok := s.trips.(openTrips)
	if !ok {
		return "", nil
	}
	ts, err := l.ListTrips(ctx, store.TripFilter{Scope: sc, VehicleID: b.VehicleID, Statuses: []string{store.TripActive, store.TripPaused},
		Sort: "start_time", Desc: true, Limit: 1})
	if err != nil || len(ts) == 0 {
		return "", err
	}
	if t := ts[0]; b.DriverID == "" || t.DriverID == "" || t.DriverID == b.DriverID {
		return t.ID, nil
	}
	return "", nil
}

// ImpactSpeedWindow is how near the report the trip's last point must
// lie for its speed to stand for the speed at impact: a speed reported
// longer before (or after) says nothing of the moment of the crash.
const ImpactSpeedWindow = time.Minute

// crashAnalysis estimates a crash from the trip's last reported speed,
// when that point lies within ImpactSpeedWindow of the report at now,
// and the airbags (unknown, null, when the report does not say).
func (s *Incidents) crashAnalysis(t *store.Trip, b *ReportBody, now time.Time) *CrashAnalysis {
	ca := &CrashAnalysis{ImpactType: "unknown", AirbagDeployment: b.AirbagDeployed, VehicleDamageAssessment: "unknown", OccupantRiskLevel: "unknown"}
	if t != nil {
		var st struct {
			Last *struct {
				TS    int64    `json:"ts"`
				Speed *float64 `json:"speed"`
			} `json:"last"`
		}
		if err := json.Unmarshal(t.State, &st); err != nil && s.log != nil {
			s.log.Warn("incident: the trip's state is unreadable; no speed at impact", "trip_id", b.TripID, "error", err)
		}
		if l := st.Last; l != nil && l.Speed != nil && now.Sub(time.UnixMilli(l.TS)).Abs() <= ImpactSpeedWindow {
			v := math.Round(*l.Speed*10) / 10
			ca.EstimatedSpeedAtImpact = &v
		}
	}
	speed := -1.0 // unknown
	if ca.EstimatedSpeedAtImpact != nil {
		speed = *ca.EstimatedSpeedAtImpact
	}
	switch {
	case b.AirbagDeployed != nil && *b.AirbagDeployed || speed > 50:
		ca.OccupantRiskLevel = "high"
	case speed > 20:
		ca.OccupantRiskLevel = "moderate"
	case speed >= 0:
		ca.OccupantRiskLevel = "low"
	}
	return ca
}

func nextActions(in Incident) NextActions {
	na := NextActions{Immediate: []string{}, Within30Minutes: []string{}, Within4Hours: []string{}}
	switch in.Status {
	case "resolved", "cancelled":
		na.Within4Hours = append(na.Within4Hours, "review the incident report")
		return na
	}
	na.Immediate = append(na.Immediate, "contact the driver", "confirm the location")
	if in.EventType == "crash" || in.EventType == "medical_emergency" || in.SeverityLevel == "high" || in.SeverityLevel == "critical" {
		// the hub calls no emergency service itself
		na.Immediate = append(na.Immediate, "call emergency services")
	}
	na.Within30Minutes = append(na.Within30Minutes, "notify the fleet supervisor", "arrange vehicle recovery if needed")
	na.Within4Hours = append(na.Within4Hours, "file the incident report")
	return na
}

func (s *Incidents) save(ctx context.Context, sc store.Scope, in Incident, prev int64) error {
	doc, err := json.Marshal(in)
	if err != nil {
		return err
	}
	rec := store.Incident{ID: in.IncidentID, Org: sc.Org, Env: sc.Env, Status: in.Status, Severity: in.SeverityLevel, EventType: in.EventType,
		FleetID: in.FleetID, DriverID: in.DriverID, Doc: doc, Version: prev + 1, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
	if prev == 0 {
		return s.st.CreateIncident(ctx, rec)
	}
	return s.st.UpdateIncident(ctx, rec, prev)
}

// publish puts an incident's lifecycle event on the bus, in
// emergency_events, or maintenance_events for a breakdown; a failure is
// logged, not returned: the incident is already stored.
func (s *Incidents) publish(ctx context.Context, sc store.Scope, in Incident, typ string) {
	if s.pub == nil {
		return
	}
	sev := map[string]string{"low": "low", "moderate": "medium", "high": "high", "critical": "critical"}[in.SeverityLevel]
	pri := "urgent"
	if in.SeverityLevel == "critical" || in.EventType == "medical_emergency" {
		pri = "emergency"
	}
	now := apitime.Of(s.now())
	ev := &event.Event{EventID: "evt_" + in.IncidentID + "_" + strconv.Itoa(len(in.StatusUpdates)), EventType: typ, Category: event.CategoryEmergency, Timestamp: now,
		Severity: sev, Priority: pri, Source: event.Source{VehicleID: in.VehicleID, DriverID: in.DriverID, TripID: in.TripID, FleetID: in.FleetID},
		Location:  &event.Location{Latitude: in.Location.Latitude, Longitude: in.Location.Longitude, Address: deref(in.Location.Address)},
		EventData: map[string]any{"incident_id": in.IncidentID, "incident_type": in.EventType, "status": in.Status},
		Metadata:  event.Metadata{CorrelationID: in.IncidentID, ProcessingTime: apitime.Format(now), SourceSystem: "fleethub.emergency"}}
	ev.EmergencyResponse, ev.Escalation = incidentResponse(in), incidentEscalation(in)
	if in.EventType == "breakdown" {
		// a breakdown is a maintenance matter: maintenance_events, with the
		// incident's next actions as recommendations; the hub makes no
		// predictions, so its predictive indicators are null
		ev.Category = event.CategoryMaintenance
		recs := slices.Concat(in.NextActions.Immediate, in.NextActions.Within30Minutes, in.NextActions.Within4Hours)
		if recs == nil {
			recs = []string{}
		}
		ev.Recommendations = recs
		ev.PredictiveIndicators = map[string]any{"failure_probability": nil, "estimated_time_to_failure": nil}
	}
	err := s.pub.Publish(ctx, sc.Org, sc.Env, ev)
	if err != nil && s.log != nil {
		s.log.Warn("incident event not published", "incident_id", in.IncidentID, "error", err)
	}
}

// opt is s, or nil for "": a field the report or the change left out.
func opt(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// deref is *s, or "" for nil.
func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// incidentResponse is an incident event's emergency_response: no dispatch
// is integrated, so nothing is initiated, no authority contacted and no
// response time known; emergency_contacts_notified counts the driver's
// emergency contacts the report's notifications reached (dispatchers are
// not emergency contacts and are not counted).
func incidentResponse(in Incident) map[string]any {
	return map[string]any{"response_initiated": in.EmergencyResponse.Dispatched, "authorities_contacted": len(in.EmergencyResponse.ServicesContacted) > 0,
		"emergency_contacts_notified": len(reachedContacts(in)), "estimated_response_time": nil}
}

// incidentEscalation is an incident event's escalation: level 1 once the
// incident has been escalated, else 0; nothing escalates an incident by
// itself, so next_escalation is null; escalation_contacts lists whom the
// escalation notified, and an escalation notifies nobody.
func incidentEscalation(in Incident) map[string]any {
	level := 0
	for _, u := range in.StatusUpdates {
		if u.Status == "escalated" {
			level = 1
		}
	}
	return map[string]any{"level": level, "next_escalation": nil, "escalation_contacts": []string{}}
}

// reachedContacts are the ids of the emergency contacts the report's
// notifications reached, as its emergency_contacts_notified timeline
// entry names them (strings in memory, decoded as []any once stored).
func reachedContacts(in Incident) []string {
	out := []string{}
	for _, e := range in.Timeline {
		if e.Event != "emergency_contacts_notified" {
			continue
		}
		switch ids := e.Data["emergency_contacts"].(type) {
		case []string:
			out = append(out, ids...)
		case []any:
			for _, id := range ids {
				if s, ok := id.(string); ok {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

func (s *Incidents) load(ctx context.Context, sc store.Scope, id string) (Incident, int64, error) {
	rec, err := s.st.GetIncident(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return Incident{}, 0, ErrIncidentNotFound
	}
	if err != nil {
		return Incident{}, 0, err
	}
	in, err := decodeIncident(rec.Doc)
	return in, rec.Version, err
}

// decodeIncident reads a stored incident. Nothing reports a
// notification's duration or outcome to the hub: those of an incident
// stored as 0 and "" are unknown, null.
func decodeIncident(doc []byte) (Incident, error) {
	var in Incident
	if err := json.Unmarshal(doc, &in); err != nil {
		return in, err
	}
	for i := range in.CommunicationLog {
		in.CommunicationLog[i].DurationSeconds, in.CommunicationLog[i].Outcome = nil, nil
	}
	return in, nil
}

// Get reads an incident; ErrIncidentNotFound when the scope has none of
// that id.
func (s *Incidents) Get(ctx context.Context, sc store.Scope, id string) (Incident, error) {
	in, _, err := s.load(ctx, sc, id)
	if err != nil {
		return in, err
	}
	return in, s.overlay(ctx, sc, &in)
}

// validate checks every field of a status change; bad is keyed by field.
func (b *StatusBody) validate() map[string]string {
	bad := map[string]string{}
	if msg := enum.Required(b.Status, Statuses...); msg != "" {
		bad["status"] = msg
	}
	for _, f := range []struct {
		name string
		v    string
		max  int
	}{{"resolution_type", b.ResolutionType, 100}, {"notes", b.Notes, 2000}, {"updated_by", b.UpdatedBy, 200}} {
		switch {
		case utf8.RuneCountInString(f.v) > f.max:
			bad[f.name] = fmt.Sprintf("must be at most %d characters", f.max)
		case f.name != "notes" && f.v != "" && jsonpath.IsBlank(f.v):
			// a blank author or resolution would be recorded as one
			bad[f.name] = jsonpath.BlankRefusal
		}
	}
	if b.ResolutionType != "" && bad["resolution_type"] == "" && (b.Status == "active" || b.Status == "escalated") {
		// a resolution is how an incident ended: kept on a move that
		// does not end it, it would tell of an ending that did not happen
		bad["resolution_type"] = "applies to status resolved or cancelled only"
	}
	return bad
}

// SetStatus moves an incident to b.Status, by b.UpdatedBy or else actor,
// and publishes incident_<status>. A move its state does not allow is a
// *TransitionError.
func (s *Incidents) SetStatus(ctx context.Context, sc store.Scope, id, actor string, b StatusBody) (Incident, error) {
	if bad := b.validate(); len(bad) > 0 {
		return Incident{}, &ValidationError{Fields: bad}
	}
	by := b.UpdatedBy
	if by == "" {
		by = actor
	}
	for attempt := 0; ; attempt++ {
		in, ver, err := s.load(ctx, sc, id)
		if err != nil {
			return Incident{}, err
		}
		if !slices.Contains(moves[in.Status], b.Status) {
			return Incident{}, &TransitionError{From: in.Status, To: b.Status}
		}
		now := apitime.Of(s.now())
		in.Status, in.UpdatedAt = b.Status, now
		in.StatusUpdates = append(in.StatusUpdates, StatusUpdate{Timestamp: now, Status: b.Status, UpdatedBy: by, Notes: opt(b.Notes), ResolutionType: b.ResolutionType})
		data := map[string]any{"updated_by": by}
		if b.ResolutionType != "" {
			data["resolution_type"] = b.ResolutionType
		}
		in.Timeline = append(in.Timeline, TimelineEntry{Timestamp: now, Event: "status_" + b.Status, Description: "Status changed to " + b.Status, Data: data})
		in.NextActions = nextActions(in)
		err = s.save(ctx, sc, in, ver)
		if errors.Is(err, store.ErrConflict) {
			// another change came first: read it and move on top of it,
			// after a short random pause that spreads the writers that
			// met, as an alert's changes do (rewritten)
			if attempt+1 >= maxRewrites || ctx.Err() != nil {
				return Incident{}, ErrIncidentChanged
			}
			rewritePause(attempt + 1)
			continue
		}
		if err != nil {
			return Incident{}, err
		}
		s.publish(ctx, sc, in, "incident_"+b.Status)
		return in, s.overlay(ctx, sc, &in)
	}
}

// List answers a page of the filter's incidents, newest first, each as
// Get answers it (its communication log brought up to the gateway
// queue's state).
func (s *Incidents) List(ctx context.Context, f store.IncidentFilter) (ListResponse, error) {
	recs, total, err := s.st.ListIncidents(ctx, f)
	if err != nil {
		return ListResponse{}, err
	}
	out := ListResponse{Incidents: []Incident{}, Pagination: Pagination{TotalCount: total, Limit: f.Limit, Offset: f.Offset, HasMore: f.Offset+len(recs) < total}}
	for _, r := range recs {
		in, err := decodeIncident(r.Doc)
		if err != nil {
			continue
		}
		if err := s.overlay(ctx, f.Scope, &in); err != nil {
			return ListResponse{}, err
		}
		out.Incidents = append(out.Incidents, in)
	}
	return out, nil
}
