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

// Response is the emergency response block. This release calls no
// emergency service: Status is not_integrated, nothing is dispatched or
// contacted, and the response time is unknown (null).
type Response struct {
	Dispatched            bool        `json:"dispatched"`
	ServicesContacted     []string    `json:"services_contacted" doc:"services this hub contacted: none, no emergency dispatch is integrated"`
	EstimatedResponseTime *float64    `json:"estimated_response_time" doc:"minutes; null while unknown"`
	Status                string      `json:"status" enum:"not_integrated" doc:"not_integrated: the hub calls no emergency service; the people of the directory are notified (communication_log)"`
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

// Tracking is live location sharing: a signed link, readable without a
// key until it expires, that shows the incident and its vehicle's last
// position (Incidents.Shared).
type Tracking struct {
	ShareLocationURL  *string    `json:"share_location_url" doc:"path of the share link on this server (GET, no key), signed and expiring; null when the server shares no links"`
	ExpiresAt         *time.Time `json:"expires_at" doc:"when the share link stops working"`
	AuthorizedViewers []string   `json:"authorized_viewers" doc:"always empty: whoever holds the link may read it"`
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
