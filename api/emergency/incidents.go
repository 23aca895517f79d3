// Package emergency serves emergency incidents: report, list, read and
// move through their states (active → escalated | resolved | cancelled;
// escalated → resolved | cancelled). Every change is appended to the
// incident's timeline and status_updates and published as an
// emergency_events event.
package emergency

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
)

// Values of incidents.
var (
	Statuses   = []string{"active", "resolved", "cancelled", "escalated"}
	Severities = []string{"low", "moderate", "high", "critical"}
	EventTypes = []string{"crash", "breakdown", "medical_emergency", "security_incident"}
)

// moves lists the allowed status transitions.
var moves = map[string][]string{"active": {"escalated", "resolved", "cancelled"}, "escalated": {"resolved", "cancelled"}}

// Location of an incident.
type Location struct {
	Latitude  float64  `json:"latitude"`
	Longitude float64  `json:"longitude"`
	Address   string   `json:"address,omitempty"`
	Accuracy  *float64 `json:"accuracy,omitempty"`
	Landmark  string   `json:"landmark,omitempty"`
}

// Responder is a first responder unit.
type Responder struct {
	UnitID     string  `json:"unit_id"`
	Type       string  `json:"type"`
	EtaMinutes float64 `json:"eta_minutes"`
	Status     string  `json:"status"`
	Contact    string  `json:"contact"`
}

// Response is the emergency response block.
type Response struct {
	Dispatched            bool        `json:"dispatched"`
	ServicesContacted     []string    `json:"services_contacted"`
	EstimatedResponseTime float64     `json:"estimated_response_time" doc:"minutes"`
	Status                string      `json:"status"`
	FirstResponders       []Responder `json:"first_responders"`
}

// TimelineEntry is one step of an incident.
type TimelineEntry struct {
	Timestamp   time.Time      `json:"timestamp"`
	Event       string         `json:"event"`
	Description string         `json:"description"`
	Severity    string         `json:"severity,omitempty"`
	Data        map[string]any `json:"data,omitempty"`
}

// StatusUpdate records a status change.
type StatusUpdate struct {
	Timestamp      time.Time `json:"timestamp"`
	Status         string    `json:"status"`
	UpdatedBy      string    `json:"updated_by"`
	Notes          string    `json:"notes,omitempty"`
	ResolutionType string    `json:"resolution_type,omitempty"`
}

// Contact of a party.
type Contact struct {
	Name             string `json:"name,omitempty"`
	Phone            string `json:"phone,omitempty"`
	EmergencyContact string `json:"emergency_contact,omitempty"`
}

// Party is someone or something involved.
type Party struct {
	Type        string  `json:"type"`
	DeviceID    string  `json:"device_id,omitempty"`
	DriverID    string  `json:"driver_id,omitempty"`
	ContactInfo Contact `json:"contact_info"`
	Status      string  `json:"status"`
}

// CrashAnalysis of a crash incident.
type CrashAnalysis struct {
	ImpactType              string  `json:"impact_type"`
	EstimatedSpeedAtImpact  float64 `json:"estimated_speed_at_impact" doc:"km/h, the last reported speed of the trip"`
	DecelerationRate        float64 `json:"deceleration_rate" doc:"g"`
	AirbagDeployment        bool    `json:"airbag_deployment"`
	VehicleDamageAssessment string  `json:"vehicle_damage_assessment"`
	OccupantRiskLevel       string  `json:"occupant_risk_level"`
}

// Claim is the insurance claim block.
type Claim struct {
	ClaimID          string   `json:"claim_id"`
	Status           string   `json:"status"`
	Provider         string   `json:"provider"`
	AdjusterAssigned bool     `json:"adjuster_assigned"`
	NextSteps        []string `json:"next_steps"`
}

// Tracking is live location sharing.
type Tracking struct {
	ShareLocationURL  string    `json:"share_location_url"`
	ExpiresAt         time.Time `json:"expires_at"`
	AuthorizedViewers []string  `json:"authorized_viewers"`
}

// Communication is one message sent about an incident.
type Communication struct {
	Timestamp       time.Time `json:"timestamp"`
	Type            string    `json:"type"`
	Recipient       string    `json:"recipient"`
	Message         string    `json:"message"`
	DeliveryStatus  string    `json:"delivery_status"`
	DurationSeconds float64   `json:"duration_seconds"`
	Outcome         string    `json:"outcome"`
}

// NextActions are the recommended next steps.
type NextActions struct {
	Immediate       []string `json:"immediate"`
	Within30Minutes []string `json:"within_30_minutes"`
	Within4Hours    []string `json:"within_4_hours"`
}

// Incident is the emergency incident resource.
type Incident struct {
	IncidentID        string          `json:"incident_id"`
	Status            string          `json:"status" enum:"active,resolved,cancelled,escalated"`
	SeverityLevel     string          `json:"severity_level" enum:"low,moderate,high,critical"`
	EventType         string          `json:"event_type" enum:"crash,breakdown,medical_emergency,security_incident"`
	VehicleID         string          `json:"vehicle_id,omitempty"`
	DriverID          string          `json:"driver_id,omitempty"`
	TripID            string          `json:"trip_id,omitempty"`
	FleetID           string          `json:"fleet_id,omitempty"`
	Description       string          `json:"description,omitempty"`
	CreatedAt         time.Time       `json:"created_at"`
	UpdatedAt         time.Time       `json:"updated_at"`
	Location          Location        `json:"location"`
	EmergencyResponse Response        `json:"emergency_response"`
	Timeline          []TimelineEntry `json:"timeline"`
	StatusUpdates     []StatusUpdate  `json:"status_updates"`
	InvolvedParties   []Party         `json:"involved_parties"`
	CrashAnalysis     *CrashAnalysis  `json:"crash_analysis,omitempty"`
	InsuranceClaim    *Claim          `json:"insurance_claim,omitempty"`
	LiveTracking      Tracking        `json:"live_tracking"`
	CommunicationLog  []Communication `json:"communication_log"`
	NextActions       NextActions     `json:"next_actions"`
}

// ReportBody reports an incident.
type ReportBody struct {
	EventType      string    `json:"event_type" required:"true" enum:"crash,breakdown,medical_emergency,security_incident"`
	SeverityLevel  string    `json:"severity_level" required:"true" enum:"low,moderate,high,critical"`
	Location       *Location `json:"location" required:"true"`
	VehicleID      string    `json:"vehicle_id,omitempty"`
	DriverID       string    `json:"driver_id,omitempty"`
	TripID         string    `json:"trip_id,omitempty"`
	FleetID        string    `json:"fleet_id,omitempty"`
	Description    string    `json:"description,omitempty"`
	AirbagDeployed bool      `json:"airbag_deployment,omitempty"`
}

// StatusBody changes an incident's status.
type StatusBody struct {
	Status         string `json:"status" required:"true" enum:"active,resolved,cancelled,escalated"`
	ResolutionType string `json:"resolution_type,omitempty" doc:"e.g. false_positive, emergency_services_resolved, self_resolved, towed"`
	Notes          string `json:"notes,omitempty"`
	UpdatedBy      string `json:"updated_by,omitempty"`
}

// ListResponse is the incident listing.
type ListResponse struct {
	Incidents  []Incident `json:"incidents"`
	Pagination Pagination `json:"pagination"`
}

// Pagination of the listing.
type Pagination struct {
	TotalCount int  `json:"total_count"`
	Limit      int  `json:"limit"`
	Offset     int  `json:"offset"`
	HasMore    bool `json:"has_more"`
}

// Trips reads the last point of a trip (crash analysis).
type Trips interface {
	GetTrip(ctx context.Context, s store.Scope, id string) (store.Trip, error)
}

// Handlers serves incidents.
type Handlers struct {
	st    store.Incidents
	trips Trips
	pub   interface {
		Publish(ctx context.Context, msgs ...hub.Message) error
	}
	log *slog.Logger
	now func() time.Time
}

// New makes the handlers; pub may be nil.
func New(st store.Incidents, trips Trips, pub interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}, log *slog.Logger) *Handlers {
	return &Handlers{st: st, trips: trips, pub: pub, log: log, now: time.Now}
}

// Routes returns the incident routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "incident_id", In: "path", Type: "string", Required: true}}
	q := []api.Param{{Name: "status", In: "query", Type: "string", Enum: Statuses}, {Name: "severity", In: "query", Type: "string", Enum: Severities},
		{Name: "event_type", In: "query", Type: "string", Enum: EventTypes}, {Name: "fleet_id", In: "query", Type: "string"}, {Name: "driver_id", In: "query", Type: "string"},
		{Name: "date_from", In: "query", Type: "string"}, {Name: "date_to", In: "query", Type: "string"},
		{Name: "limit", In: "query", Type: "integer", Description: "1-200, default 50"}, {Name: "offset", In: "query", Type: "integer"}}
	return []*api.Route{
		{Method: "GET", Path: "/v1/emergency/incidents", Tag: "emergency", Summary: "List incidents, newest first", Permission: "emergency:read",
			Params: q, Response: ListResponse{}, Handler: h.list},
		{Method: "POST", Path: "/v1/emergency/incidents", Tag: "emergency", Summary: "Report an incident (panic button, manual report)", Permission: "emergency:write",
			Request: ReportBody{}, Response: Incident{}, Status: 201, Handler: h.report},
		{Method: "GET", Path: "/v1/emergency/incidents/{incident_id}", Tag: "emergency", Summary: "Get an incident", Permission: "emergency:read",
			Params: id, Response: Incident{}, Handler: h.get},
		{Method: "PUT", Path: "/v1/emergency/incidents/{incident_id}/status", Tag: "emergency", Summary: "Change an incident's status",
			Permission: "emergency:write", Params: id, Request: StatusBody{}, Response: Incident{}, Errors: []int{409}, Handler: h.status},
	}
}

func (h *Handlers) report(c *api.Ctx) error {
	var b ReportBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	bad := map[string]string{}
	if !slices.Contains(EventTypes, b.EventType) {
		bad["event_type"] = "must be crash, breakdown, medical_emergency or security_incident"
	}
	if !slices.Contains(Severities, b.SeverityLevel) {
		bad["severity_level"] = "must be low, moderate, high or critical"
	}
	if b.Location == nil {
		bad["location"] = "is required"
	} else {
		if math.IsNaN(b.Location.Latitude) || b.Location.Latitude < -90 || b.Location.Latitude > 90 {
			bad["location.latitude"] = "must be between -90 and 90"
		}
		if math.IsNaN(b.Location.Longitude) || b.Location.Longitude < -180 || b.Location.Longitude > 180 {
			bad["location.longitude"] = "must be between -180 and 180"
		}
	}
	if len(b.Description) > 2000 {
		bad["description"] = "must be at most 2000 characters"
	}
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	now := h.now().UTC().Truncate(time.Millisecond)
	var idb [10]byte
	_, _ = rand.Read(idb[:])
	in := Incident{IncidentID: "inc_" + hex.EncodeToString(idb[:]), Status: "active", SeverityLevel: b.SeverityLevel, EventType: b.EventType,
		VehicleID: b.VehicleID, DriverID: b.DriverID, TripID: b.TripID, FleetID: b.FleetID, Description: b.Description, CreatedAt: now, UpdatedAt: now,
		Location: *b.Location, StatusUpdates: []StatusUpdate{{Timestamp: now, Status: "active", UpdatedBy: c.Principal.KeyID, Notes: "reported"}},
		InvolvedParties: []Party{}, CommunicationLog: []Communication{},
		LiveTracking: Tracking{ShareLocationURL: "/v1/emergency/incidents/" + "inc_" + hex.EncodeToString(idb[:]), ExpiresAt: now.Add(24 * time.Hour), AuthorizedViewers: []string{}}}
	in.Timeline = []TimelineEntry{{Timestamp: now, Event: "incident_detected", Description: "Incident reported: " + b.EventType, Severity: b.SeverityLevel}}
	serious := b.SeverityLevel == "high" || b.SeverityLevel == "critical" || b.EventType == "medical_emergency"
	in.EmergencyResponse = Response{Dispatched: false, ServicesContacted: []string{}, Status: "pending_review", FirstResponders: []Responder{}}
	if serious {
		in.EmergencyResponse.Status = "awaiting_dispatch"
		in.EmergencyResponse.ServicesContacted = servicesFor(b.EventType)
		in.Timeline = append(in.Timeline, TimelineEntry{Timestamp: now, Event: "emergency_services_contacted", Description: "Emergency services notified",
			Data: map[string]any{"services": in.EmergencyResponse.ServicesContacted}})
	}
	if b.VehicleID != "" || b.DriverID != "" {
		in.InvolvedParties = append(in.InvolvedParties, Party{Type: "driver", DeviceID: b.VehicleID, DriverID: b.DriverID, Status: "unknown"})
	}
	if b.EventType == "crash" {
		ca := &CrashAnalysis{ImpactType: "unknown", AirbagDeployment: b.AirbagDeployed, VehicleDamageAssessment: "pending_inspection", OccupantRiskLevel: "unknown"}
		if b.TripID != "" && h.trips != nil {
			if t, err := h.trips.GetTrip(c.Context(), sc, b.TripID); err == nil {
				var st struct {
					Last *struct {
						Speed *float64 `json:"speed"`
					} `json:"last"`
				}
				_ = json.Unmarshal(t.State, &st)
				if st.Last != nil && st.Last.Speed != nil {
					ca.EstimatedSpeedAtImpact = math.Round(*st.Last.Speed*10) / 10
					// stopping from that speed within one second
					ca.DecelerationRate = math.Round(*st.Last.Speed/3.6/9.80665*100) / 100
				}
			}
		}
		switch {
		case b.AirbagDeployed || ca.EstimatedSpeedAtImpact > 50:
			ca.OccupantRiskLevel = "high"
		case ca.EstimatedSpeedAtImpact > 20:
			ca.OccupantRiskLevel = "moderate"
		default:
			ca.OccupantRiskLevel = "low"
		}
		in.CrashAnalysis = ca
		in.InsuranceClaim = &Claim{ClaimID: "clm_" + hex.EncodeToString(idb[:6]), Status: "not_filed", Provider: "", NextSteps: []string{"document the scene", "collect witness details", "file the claim with the fleet's insurer"}}
	}
	in.NextActions = nextActions(in)
	if err := h.save(c.Context(), sc, in, 0); err != nil {
		return err
	}
	h.publish(c.Context(), org, env, in, "incident_reported")
	return c.JSON(201, in)
}

func servicesFor(t string) []string {
	switch t {
	case "crash":
		return []string{"ambulance", "police"}
	case "medical_emergency":
		return []string{"ambulance"}
	case "security_incident":
		return []string{"police"}
	}
	return []string{"roadside_assistance"}
}

func nextActions(in Incident) NextActions {
	na := NextActions{Immediate: []string{}, Within30Minutes: []string{}, Within4Hours: []string{}}
	switch in.Status {
	case "resolved", "cancelled":
		na.Within4Hours = append(na.Within4Hours, "review the incident report")
		return na
	}
	na.Immediate = append(na.Immediate, "contact the driver", "confirm the location")
	if in.EventType == "crash" || in.EventType == "medical_emergency" {
		na.Immediate = append(na.Immediate, "confirm emergency services are on the way")
	}
	na.Within30Minutes = append(na.Within30Minutes, "notify the fleet supervisor", "arrange vehicle recovery if needed")
	na.Within4Hours = append(na.Within4Hours, "file the incident report")
	return na
}

func (h *Handlers) save(ctx context.Context, sc store.Scope, in Incident, prev int64) error {
	doc, err := json.Marshal(in)
	if err != nil {
		return err
	}
	rec := store.Incident{ID: in.IncidentID, Org: sc.Org, Env: sc.Env, Status: in.Status, Severity: in.SeverityLevel, EventType: in.EventType,
		FleetID: in.FleetID, DriverID: in.DriverID, Doc: doc, Version: prev + 1, CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt}
	if prev == 0 {
		return h.st.CreateIncident(ctx, rec)
	}
	return h.st.UpdateIncident(ctx, rec, prev)
}

func (h *Handlers) publish(ctx context.Context, org, env string, in Incident, typ string) {
	if h.pub == nil {
		return
	}
	sev := map[string]string{"low": "low", "moderate": "medium", "high": "high", "critical": "critical"}[in.SeverityLevel]
	pri := "urgent"
	if in.SeverityLevel == "critical" || in.EventType == "medical_emergency" {
		pri = "emergency"
	}
	now := h.now().UTC()
	ev := &event.Event{EventID: "evt_" + in.IncidentID + "_" + strconv.Itoa(len(in.StatusUpdates)), EventType: typ, Category: event.CategoryEmergency, Timestamp: now,
		Severity: sev, Priority: pri, Source: event.Source{VehicleID: in.VehicleID, DriverID: in.DriverID, TripID: in.TripID},
		Location:          &event.Location{Latitude: in.Location.Latitude, Longitude: in.Location.Longitude, Address: in.Location.Address},
		EventData:         map[string]any{"incident_id": in.IncidentID, "incident_type": in.EventType, "status": in.Status},
		Metadata:          event.Metadata{CorrelationID: in.IncidentID, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.emergency"},
		EmergencyResponse: map[string]any{"response_initiated": in.EmergencyResponse.Status != "pending_review", "authorities_contacted": len(in.EmergencyResponse.ServicesContacted) > 0}}
	key := in.VehicleID
	if key == "" {
		key = in.IncidentID
	}
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: now})
	if err == nil {
		err = h.pub.Publish(ctx, hub.Message{Topic: hub.TopicEvents, Key: []byte(key), Value: b})
	}
	if err != nil && h.log != nil {
		h.log.Warn("incident event not published", "incident_id", in.IncidentID, "error", err)
	}
}

func (h *Handlers) load(ctx context.Context, sc store.Scope, id string) (Incident, int64, error) {
	rec, err := h.st.GetIncident(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return Incident{}, 0, api.Errf("incident_not_found", "incident not found")
	}
	if err != nil {
		return Incident{}, 0, err
	}
	var in Incident
	if err := json.Unmarshal(rec.Doc, &in); err != nil {
		return in, 0, err
	}
	return in, rec.Version, nil
}

func (h *Handlers) get(c *api.Ctx) error {
	org, env := c.Scope()
	in, _, err := h.load(c.Context(), store.Scope{Org: org, Env: env}, c.PathParam("incident_id"))
	if err != nil {
		return err
	}
	return c.JSON(200, in)
}

func (h *Handlers) status(c *api.Ctx) error {
	var b StatusBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	if !slices.Contains(Statuses, b.Status) {
		return api.Validation("validation_failed", map[string]string{"status": "must be active, resolved, cancelled or escalated"})
	}
	if len(b.Notes) > 2000 || len(b.UpdatedBy) > 200 || len(b.ResolutionType) > 100 {
		return api.Validation("validation_failed", map[string]string{"notes": "notes at most 2000, updated_by 200, resolution_type 100 characters"})
	}
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	for attempt := 0; ; attempt++ {
		in, ver, err := h.load(c.Context(), sc, c.PathParam("incident_id"))
		if err != nil {
			return err
		}
		if !slices.Contains(moves[in.Status], b.Status) {
			return api.Errf("invalid_state_transition", "an incident that is %s cannot become %s", in.Status, b.Status).
				WithDetails(map[string]string{"status": in.Status})
		}
		now := h.now().UTC().Truncate(time.Millisecond)
		by := b.UpdatedBy
		if by == "" {
			by = c.Principal.KeyID
		}
		in.Status, in.UpdatedAt = b.Status, now
		in.StatusUpdates = append(in.StatusUpdates, StatusUpdate{Timestamp: now, Status: b.Status, UpdatedBy: by, Notes: b.Notes, ResolutionType: b.ResolutionType})
		in.Timeline = append(in.Timeline, TimelineEntry{Timestamp: now, Event: "status_" + b.Status, Description: "Status changed to " + b.Status,
			Data: map[string]any{"updated_by": by, "resolution_type": b.ResolutionType}})
		if b.Status == "escalated" {
			in.EmergencyResponse.Status = "escalated"
		}
		if b.Status == "resolved" || b.Status == "cancelled" {
			in.EmergencyResponse.Status = b.Status
		}
		in.NextActions = nextActions(in)
		err = h.save(c.Context(), sc, in, ver)
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return err
		}
		h.publish(c.Context(), org, env, in, "incident_"+b.Status)
		return c.JSON(200, in)
	}
}

func (h *Handlers) list(c *api.Ctx) error {
	a := c.QueryArgs()
	f := store.IncidentFilter{Status: string(a.Peek("status")), Severity: string(a.Peek("severity")), EventType: string(a.Peek("event_type")),
		FleetID: string(a.Peek("fleet_id")), DriverID: string(a.Peek("driver_id")), Limit: 50}
	bad := map[string]string{}
	if f.Status != "" && !slices.Contains(Statuses, f.Status) {
		bad["status"] = "must be active, resolved, cancelled or escalated"
	}
	if f.Severity != "" && !slices.Contains(Severities, f.Severity) {
		bad["severity"] = "must be low, moderate, high or critical"
	}
	if f.EventType != "" && !slices.Contains(EventTypes, f.EventType) {
		bad["event_type"] = "must be crash, breakdown, medical_emergency or security_incident"
	}
	for _, d := range []struct {
		name string
		dst  *time.Time
	}{{"date_from", &f.From}, {"date_to", &f.To}} {
		if v := string(a.Peek(d.name)); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				if t, err = time.Parse("2006-01-02", v); err != nil {
					bad[d.name] = "must be an ISO 8601 date or date-time"
					continue
				}
			}
			*d.dst = t
		}
	}
	if v := a.Peek("limit"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 1 || n > 200 {
			bad["limit"] = "must be an integer from 1 to 200"
		}
		f.Limit = n
	}
	if v := a.Peek("offset"); len(v) > 0 {
		n, err := strconv.Atoi(string(v))
		if err != nil || n < 0 {
			bad["offset"] = "must be an integer of 0 or more"
		}
		f.Offset = n
	}
	if len(bad) > 0 {
		return api.Validation("invalid_request", bad)
	}
	if !f.From.IsZero() && !f.To.IsZero() && f.From.After(f.To) {
		return api.Errf("invalid_date_range", "date_from must not be after date_to")
	}
	org, env := c.Scope()
	f.Scope = store.Scope{Org: org, Env: env}
	recs, total, err := h.st.ListIncidents(c.Context(), f)
	if err != nil {
		return err
	}
	out := ListResponse{Incidents: []Incident{}, Pagination: Pagination{TotalCount: total, Limit: f.Limit, Offset: f.Offset, HasMore: f.Offset+len(recs) < total}}
	for _, r := range recs {
		var in Incident
		if json.Unmarshal(r.Doc, &in) == nil {
			out.Incidents = append(out.Incidents, in)
		}
	}
	return c.JSON(200, out)
}
