package emergency

import "time"

// Values of incidents.
var (
	Statuses   = []string{"active", "resolved", "cancelled", "escalated"}
	Severities = []string{"low", "moderate", "high", "critical"}
	EventTypes = []string{"crash", "breakdown", "medical_emergency", "security_incident"}
)

// moves lists the allowed status transitions of an incident.
var moves = map[string][]string{"active": {"escalated", "resolved", "cancelled"}, "escalated": {"resolved", "cancelled"}}

// Location of an incident: every field of the interface is there, null
// when the report did not give it.
type Location struct {
	Latitude  float64  `json:"latitude"`
	Longitude float64  `json:"longitude"`
	Address   *string  `json:"address" doc:"as reported; null when the report gave none"`
	Accuracy  *float64 `json:"accuracy" doc:"metres, 0 or more, as reported; null when the report gave none"`
	Landmark  *string  `json:"landmark" doc:"as reported; null when the report gave none"`
}

// ReportedLocation is the place a report gives: latitude and longitude
// are required (a missing one is refused, never taken as 0).
type ReportedLocation struct {
	Latitude  *float64 `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude *float64 `json:"longitude" required:"true" doc:"-180 to 180"`
	Address   string   `json:"address,omitempty" doc:"at most 500 characters"`
	Accuracy  *float64 `json:"accuracy,omitempty" doc:"metres, 0 or more"`
	Landmark  string   `json:"landmark,omitempty" doc:"at most 200 characters"`
}

// location is l as the incident keeps it; l is validated.
func (l *ReportedLocation) location() Location {
	loc := Location{Latitude: *l.Latitude, Longitude: *l.Longitude, Accuracy: l.Accuracy}
	if l.Address != "" {
		loc.Address = &l.Address
	}
	if l.Landmark != "" {
		loc.Landmark = &l.Landmark
	}
	return loc
}

// Responder is a first responder unit.
type Responder struct {
	UnitID     string  `json:"unit_id"`
	Type       string  `json:"type"`
	EtaMinutes float64 `json:"eta_minutes"`
	Status     string  `json:"status"`
	Contact    string  `json:"contact"`
}

// Response is the emergency response block. This release calls no
// emergency service: Status is not_integrated, nothing is dispatched or
// contacted, and the response time is unknown (null).
type Response struct {
	Dispatched            bool        `json:"dispatched" source:"constant" doc:"always false: no emergency dispatch is integrated"`
	ServicesContacted     []string    `json:"services_contacted" source:"constant" doc:"services this hub contacted: none, no emergency dispatch is integrated"`
	EstimatedResponseTime *float64    `json:"estimated_response_time" source:"unknown" doc:"minutes; null: no emergency service reports to the hub"`
	Status                string      `json:"status" enum:"not_integrated" doc:"not_integrated: the hub calls no emergency service, whatever the incident's own status (escalated, resolved and cancelled are the incident's status, not a response's); the people of the directory are notified (communication_log)"`
	FirstResponders       []Responder `json:"first_responders" source:"constant" doc:"always empty: no emergency dispatch is integrated"`
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
	Notes          *string   `json:"notes" doc:"as the change gave them; null without"`
	ResolutionType string    `json:"resolution_type,omitempty"`
}

// Contact of a party.
// Every field is there, null when the directory does not know it.
type Contact struct {
	Name             *string `json:"name" doc:"the driver's directory entry's name; null without one"`
	Phone            *string `json:"phone" doc:"the directory entry's sms or voice number; null without one"`
	EmergencyContact *string `json:"emergency_contact" doc:"the name of the driver's first emergency contact in the directory; null without one"`
}

// Party is someone or something involved.
type Party struct {
	Type        string  `json:"type" enum:"driver,vehicle" doc:"driver when the report names a driver (or its trip has one), else vehicle"`
	DeviceID    *string `json:"device_id" doc:"the vehicle_id of the report; null without one"`
	DriverID    *string `json:"driver_id" doc:"the driver_id of the report (or of its trip); null without one"`
	ContactInfo Contact `json:"contact_info"`
	Status      string  `json:"status" enum:"unknown" source:"unknown" doc:"unknown: nothing reports the state of the people involved to the hub"`
}

// CrashAnalysis of a crash incident: what the hub can tell from the trip
// and the report, and unknown for what needs sensors or an inspection.
type CrashAnalysis struct {
	ImpactType              string   `json:"impact_type" enum:"unknown" source:"unknown" doc:"unknown: no crash sensor data reaches the hub"`
	EstimatedSpeedAtImpact  *float64 `json:"estimated_speed_at_impact" source:"computed" doc:"km/h, the speed of the incident's trip's last point when that point lies within a minute of the report; null without a trip, a reported speed or such a point (an older speed says nothing of the crash)"`
	DecelerationRate        *float64 `json:"deceleration_rate" source:"unknown" doc:"g; null: no accelerometer data reaches the hub"`
	AirbagDeployment        *bool    `json:"airbag_deployment" doc:"as the report gave it; null when the report did not say"`
	VehicleDamageAssessment string   `json:"vehicle_damage_assessment" enum:"unknown" source:"unknown" doc:"unknown: the hub inspects nothing"`
	OccupantRiskLevel       string   `json:"occupant_risk_level" enum:"low,moderate,high,unknown" source:"computed" doc:"high with airbags deployed or over 50 km/h, moderate over 20 km/h, else low; unknown without airbags and without a speed at impact"`
}

// Claim is the insurance claim block: the hub files no claims, so it
// holds the advice and says what is not known.
type Claim struct {
	ClaimID          *string  `json:"claim_id" source:"unknown" doc:"null: the hub files no claims"`
	Status           string   `json:"status" enum:"not_filed" source:"constant" doc:"not_filed: the hub files no claims"`
	Provider         *string  `json:"provider" source:"unknown" doc:"null: the fleet's insurer is not known to the hub"`
	AdjusterAssigned *bool    `json:"adjuster_assigned" source:"unknown" doc:"null: no insurer reports to the hub"`
	NextSteps        []string `json:"next_steps" source:"constant" doc:"the same advice for every crash"`
}

// Tracking is live location sharing: a signed link, readable without a
// key until it expires, that shows the incident and its vehicle's last
// position (Incidents.Shared).
type Tracking struct {
	ShareLocationURL  *string    `json:"share_location_url" doc:"the share link: an absolute http or https address on the host the request reached (GET, no key), signed and expiring; null when the server shares no links"`
	ExpiresAt         *time.Time `json:"expires_at" doc:"when the share link stops working"`
	AuthorizedViewers []string   `json:"authorized_viewers" source:"constant" doc:"always empty: whoever holds the link may read it"`
}

// Communication is one message sent about an incident.
type Communication struct {
	Timestamp       time.Time `json:"timestamp"`
	Type            string    `json:"type"`
	Recipient       string    `json:"recipient"`
	Message         string    `json:"message"`
	DeliveryStatus  string    `json:"delivery_status"`
	DurationSeconds *float64  `json:"duration_seconds" source:"unknown" doc:"null: the gateway answers that it accepted a notification, not how long a call lasted"`
	Outcome         *string   `json:"outcome" source:"unknown" doc:"null: the gateway answers that it accepted a notification, not whether the person answered or replied"`
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
	CrashAnalysis     *CrashAnalysis  `json:"crash_analysis" doc:"a crash's; null for another event_type"`
	InsuranceClaim    *Claim          `json:"insurance_claim" doc:"a crash's; null for another event_type"`
	LiveTracking      Tracking        `json:"live_tracking"`
	CommunicationLog  []Communication `json:"communication_log"`
	NextActions       NextActions     `json:"next_actions"`
}

// ReportBody reports an incident.
type ReportBody struct {
	EventType      string            `json:"event_type" required:"true" enum:"crash,breakdown,medical_emergency,security_incident"`
	SeverityLevel  string            `json:"severity_level" required:"true" enum:"low,moderate,high,critical"`
	Location       *ReportedLocation `json:"location" required:"true"`
	VehicleID      string            `json:"vehicle_id,omitempty" doc:"1 to 200 characters, no control character"`
	DriverID       string            `json:"driver_id,omitempty" doc:"1 to 200 characters, no control character"`
	TripID         string            `json:"trip_id,omitempty"`
	FleetID        string            `json:"fleet_id,omitempty" doc:"1 to 200 characters, no control character; left out, the fleet of the vehicle's profile"`
	Description    string            `json:"description,omitempty"`
	AirbagDeployed *bool             `json:"airbag_deployment,omitempty" doc:"crash only: whether the airbags deployed, as the vehicle or the reporter knows it; left out, unknown"`
}

// StatusBody changes an incident's status.
type StatusBody struct {
	Status         string `json:"status" required:"true" enum:"active,resolved,cancelled,escalated"`
	ResolutionType string `json:"resolution_type,omitempty" doc:"with status resolved or cancelled only, at most 100 characters: e.g. false_positive, emergency_services_resolved, self_resolved, towed"`
	Notes          string `json:"notes,omitempty" doc:"at most 2000 characters"`
	UpdatedBy      string `json:"updated_by,omitempty" doc:"at most 200 characters, not only white space; default the key's id"`
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
