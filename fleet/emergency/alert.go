package emergency

import (
	"encoding/json"
	"time"
)

// Alert values.
var (
	AlertTypes = []string{"severe_weather_warning", "road_hazard", "security_threat", "fleet_emergency", "system_maintenance", "traffic_disruption"}
	Channels   = []string{"sms", "email", "push_notification", "voice_call", "in_app_alert"}
	Actions    = []string{"suspend_outdoor_operations", "route_vehicles_to_shelter", "enable_emergency_tracking", "play_emergency_sound", "show_safe_route", "notify_emergency_contacts"}
	Audiences  = []string{"active_drivers", "field_personnel", "emergency_contacts", "dispatchers"}
)

// AreaPoint is a position of an affected area: latitude and longitude
// are required (a missing one is refused, never taken as 0).
type AreaPoint struct {
	Latitude  *float64 `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude *float64 `json:"longitude" required:"true" doc:"-180 to 180"`
}

// AffectedArea is where an alert applies.
type AffectedArea struct {
	Type     string      `json:"type" enum:"radius,polygon,route,city,state"`
	Center   *AreaPoint  `json:"center,omitempty"`
	RadiusKm *float64    `json:"radius_km,omitempty"`
	Polygon  []AreaPoint `json:"polygon,omitempty"`
	RouteID  string      `json:"route_id,omitempty" doc:"type route: a stored optimization's optimization_id, or <optimization_id>:<vehicle_id> for one of its routes; one that names no optimization of the organization, or a vehicle without a route in its plan, is refused naming affected_area.route_id"`
	City     string      `json:"city,omitempty" doc:"type city: 1 to 200 characters, not only white space, without a control character"`
	State    string      `json:"state,omitempty" doc:"type state, or a city's state: a USPS code in capitals (OH, DC, PR)"`
	// BufferKm widens a city, state or route area; default 2.
	BufferKm *float64 `json:"buffer_km,omitempty" doc:"km around a city's or state's addresses or a route's stops and legs; default 2"`
}

// Audience says who receives an alert.
type Audience struct {
	Include          []string `json:"include,omitempty" enum:"active_drivers,field_personnel,emergency_contacts,dispatchers"`
	Exclude          []string `json:"exclude,omitempty" enum:"active_drivers,field_personnel,emergency_contacts,dispatchers"`
	SpecificVehicles []string `json:"specific_vehicles,omitempty" id:"true" doc:"at most 1000 vehicle ids (1 to 200 characters, no control character); each reaches the contacts whose links.vehicle_ids name it, the driver of its active or paused trip when they have a directory entry, and the vehicle itself (in-app)"`
	SpecificDrivers  []string `json:"specific_drivers,omitempty" id:"true" doc:"at most 1000 driver ids (1 to 200 characters, no control character); each is reached at their directory entry, or in-app only without one"`
}

// Channel is one way of delivering, with its timing: the first delivery
// DelayMinutes after the alert's creation (at once when 0), then up to
// MaxRepeats repeats every RepeatIntervalMinutes to the recipients who
// have not acknowledged. Any channel takes them.
type Channel struct {
	Channel               string `json:"channel" enum:"sms,email,push_notification,voice_call,in_app_alert"`
	Priority              string `json:"priority,omitempty" enum:"immediate,high,normal,low" doc:"handed to the notification gateway with each notification; for in_app_alert, in the emergency_alert event's event_data"`
	RepeatIntervalMinutes int    `json:"repeat_interval_minutes,omitempty" doc:"1-1440: minutes between the repeats sent to the recipients who have not acknowledged; requires max_repeats"`
	MaxRepeats            int    `json:"max_repeats,omitempty" doc:"1-20: repeats after the first delivery at most (those that would fall after the expiration are not sent); requires repeat_interval_minutes"`
	DelayMinutes          int    `json:"delay_minutes,omitempty" doc:"0-1440: minutes after the alert's creation before the channel's first delivery (0: at once); must fall before the expiration"`
}

// EscalationLevel is one step of escalation.
type EscalationLevel struct {
	DelayMinutes int    `json:"delay_minutes" doc:"1-1440 minutes after the alert's creation, after the level before it and before the expiration"`
	Action       string `json:"action" enum:"notify_supervisors,notify_emergency_management,notify_dispatchers"`
}

// EscalationPolicy of an alert.
type EscalationPolicy struct {
	// Enabled is required: a policy whose escalation_levels were sent
	// without it would be taken as off, its levels never run.
	Enabled          *bool             `json:"enabled" required:"true" schema:"oneOf:boolean" doc:"required: true escalates through escalation_levels while acknowledgments are pending, and needs acknowledgment_required true (refused otherwise); false turns escalation off"`
	EscalationLevels []EscalationLevel `json:"escalation_levels,omitempty"`
}

// on says whether the policy escalates.
func (p *EscalationPolicy) on() bool { return p != nil && p.Enabled != nil && *p.Enabled }

// AlertBody creates an alert.
type AlertBody struct {
	AlertType              string            `json:"alert_type" required:"true" enum:"severe_weather_warning,road_hazard,security_threat,fleet_emergency,system_maintenance,traffic_disruption"`
	Severity               string            `json:"severity" required:"true" enum:"low,moderate,high,critical"`
	Title                  string            `json:"title" required:"true"`
	Message                string            `json:"message" required:"true"`
	AffectedArea           *AffectedArea     `json:"affected_area" required:"true"`
	TargetAudience         *Audience         `json:"target_audience" required:"true" doc:"who is reached: the included audiences minus the excluded ones, and the specific vehicles and drivers; it must name someone (an included audience not excluded, or a specific vehicle or driver)"`
	DeliveryChannels       []Channel         `json:"delivery_channels" required:"true"`
	Expiration             string            `json:"expiration" required:"true" doc:"RFC 3339 date-time in the future; kept to the millisecond (a finer fraction is cut)"`
	AcknowledgmentRequired bool              `json:"acknowledgment_required,omitempty"`
	EscalationPolicy       *EscalationPolicy `json:"escalation_policy,omitempty"`
	AutomatedActions       []string          `json:"automated_actions,omitempty" enum:"suspend_outdoor_operations,route_vehicles_to_shelter,enable_emergency_tracking,play_emergency_sound,show_safe_route,notify_emergency_contacts"`
}

// ChannelCounts per channel.
type ChannelCounts struct {
	Sent      int `json:"sent"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
}

// VoiceCounts of voice calls. The gateway answers whether it accepted a
// call, not how the call ended: answered and voicemail are unknown.
type VoiceCounts struct {
	Initiated int  `json:"initiated" source:"measured" doc:"calls handed to the notification gateway, whatever its answer"`
	Answered  *int `json:"answered" source:"unknown" doc:"null: the gateway reports only that it accepted a call, not whether anyone answered it"`
	Voicemail *int `json:"voicemail" source:"unknown" doc:"null: the gateway reports only that it accepted a call, not whether it reached voicemail"`
	Failed    int  `json:"failed" source:"measured" doc:"calls the gateway refused or that failed for good"`
}

// Breakdown per channel.
type Breakdown struct {
	SMS   ChannelCounts `json:"sms"`
	Push  ChannelCounts `json:"push_notification"`
	Voice VoiceCounts   `json:"voice_call"`
	Email ChannelCounts `json:"email"`
	InApp ChannelCounts `json:"in_app_alert"`
}

// DeliveryStatus of an alert.
type DeliveryStatus struct {
	TotalRecipients      int       `json:"total_recipients" source:"measured"`
	SuccessfulDeliveries int       `json:"successful_deliveries" source:"measured"`
	FailedDeliveries     int       `json:"failed_deliveries" source:"measured"`
	PendingDeliveries    int       `json:"pending_deliveries" source:"measured"`
	ScheduledDeliveries  int       `json:"scheduled_deliveries" doc:"recipients' first deliveries waiting for their channel's delay_minutes"`
	DeliveryBreakdown    Breakdown `json:"delivery_breakdown"`
	// ChannelSchedule is each delivery channel's timing and progress.
	ChannelSchedule []ChannelSchedule `json:"channel_schedule"`
}

// The states of a channel's schedule.
const (
	ChannelScheduled = "scheduled" // the first delivery waits for the delay
	ChannelRepeating = "repeating" // sent; repeats are to come
	ChannelDone      = "done"      // nothing more to send
	ChannelCancelled = "cancelled" // the alert was cancelled or expired first
)

// ChannelSchedule is one delivery channel of an alert: its first
// delivery at FirstDeliveryAt (the creation plus its delay), then its
// repeats, each sent to the recipients who have not acknowledged.
type ChannelSchedule struct {
	Channel               string `json:"channel"`
	Priority              string `json:"priority,omitempty"`
	DelayMinutes          int    `json:"delay_minutes"`
	RepeatIntervalMinutes int    `json:"repeat_interval_minutes"`
	MaxRepeats            int    `json:"max_repeats"`
	Status                string `json:"status" enum:"scheduled,repeating,done,cancelled" doc:"scheduled: the first delivery waits for delay_minutes; repeating: sent, repeats to come; done: nothing more to send (every repeat made, or every recipient acknowledged); cancelled: the alert was cancelled or expired before everything was sent"`
	// FirstDeliveryAt is when the first delivery goes (or went).
	FirstDeliveryAt  time.Time  `json:"first_delivery_at" doc:"the alert's creation plus delay_minutes: when the first delivery goes, or went"`
	TimesSent        int        `json:"times_sent" doc:"how many of the channel's rounds (the first delivery and each repeat) went out to at least one recipient"`
	LastSentAt       *time.Time `json:"last_sent_at"`
	RepeatsRemaining int        `json:"repeats_remaining" doc:"repeats still to come; repeats that would fall after the expiration are not counted (nor sent)"`
	NextRepeatAt     *time.Time `json:"next_repeat_at" doc:"when the next repeat goes; null when none is to come or the first delivery is still scheduled"`
}

// AckStatus of an alert.
type AckStatus struct {
	Required                   bool     `json:"required"`
	Received                   int      `json:"received" source:"measured"`
	Pending                    int      `json:"pending" source:"measured"`
	AcknowledgmentRate         *float64 `json:"acknowledgment_rate" source:"computed" doc:"acknowledgments over recipients, 0-1; null for an alert without recipients, where there is no rate"`
	AverageResponseTimeSeconds *float64 `json:"average_response_time_seconds" source:"computed" doc:"from creation to each acknowledgment; null before the first"`
}

// The states of an automated action: requested (published to the
// devices of the vehicles in the area as emergency_action events), sent
// (notifications reached someone), pending (notifications still to
// come), failed, skipped (no vehicle to ask, nobody to notify).
const (
	ActionRequested = "requested"
	ActionSent      = "sent"
	ActionPending   = "pending"
	ActionFailed    = "failed"
	ActionSkipped   = "skipped"
)

// ActionRecord is an automated action and what became of it.
type ActionRecord struct {
	Action             string    `json:"action"`
	Status             string    `json:"status" enum:"requested,sent,pending,failed,skipped" doc:"requested: published as emergency_action events, one per vehicle of the area naming it, for its device (and the consoles) to act on (the hub does not learn whether they did); sent: notify_emergency_contacts reached at least one contact (by the alert's creation or a later delivery round or gateway retry); pending: none reached yet, a delivery to them waits for its channel's delay or a gateway retry; failed: no request could be published, or every notification tried to the emergency contacts failed; skipped: no vehicle in the area, nothing requested, or (notify_emergency_contacts) no emergency contact to notify or none tried (quiet hours, no address, a delay the cancellation or expiry called off)"`
	ExecutedAt         time.Time `json:"executed_at"`
	AffectedOperations *int      `json:"affected_operations,omitempty" source:"measured" doc:"suspend_outdoor_operations: the vehicles it was requested of (emergency_action events published)"`
	AffectedVehicles   *int      `json:"affected_vehicles,omitempty" source:"measured" doc:"route_vehicles_to_shelter, show_safe_route: the vehicles it was requested of (emergency_action events published)"`
	TrackingEnabledFor *int      `json:"tracking_enabled_for,omitempty" source:"measured" doc:"enable_emergency_tracking: the vehicles it was requested of (emergency_action events published); whether a device turned tracking on is not reported"`
	ContactsNotified   *int      `json:"contacts_notified,omitempty" doc:"notify_emergency_contacts: the emergency contacts reached by now"`
	ReroutingProgress  *string   `json:"rerouting_progress,omitempty" source:"unknown" doc:"route_vehicles_to_shelter: null, always: no device reports to the hub how far its rerouting went"`
}

// MarshalJSON writes the record, with route_vehicles_to_shelter's
// rerouting_progress null: the interface names it, and no device reports
// it to the hub.
func (r ActionRecord) MarshalJSON() ([]byte, error) {
	type plain ActionRecord
	b, err := json.Marshal(plain(r))
	if err != nil || r.Action != "route_vehicles_to_shelter" || r.ReroutingProgress != nil {
		return b, err
	}
	return append(b[:len(b)-1], `,"rerouting_progress":null}`...), nil
}

// Escalation state.
type Escalation struct {
	Enabled             bool       `json:"enabled"`
	CurrentLevel        int        `json:"current_level"`
	NextEscalationAt    *time.Time `json:"next_escalation_at"`
	EscalationTriggered bool       `json:"escalation_triggered"`
	// Channels are the gateway channels each level's notifications go
	// on: the alert's delivery channels other than in_app_alert.
	Channels []string `json:"channels,omitempty"`
	// Levels records each level reached and whom it notified.
	Levels []LevelRecord `json:"levels,omitempty"`
}

// LevelRecord is one escalation level reached.
type LevelRecord struct {
	Level       int              `json:"level"`
	Action      string           `json:"action"`
	DueAt       time.Time        `json:"due_at"`
	TriggeredAt time.Time        `json:"triggered_at"`
	Notified    []LevelRecipient `json:"notified"`
}

// LevelRecipient is a contact an escalation level notified, with each
// channel's outcome.
type LevelRecipient struct {
	ContactID  string              `json:"contact_id"`
	Name       string              `json:"name"`
	Role       string              `json:"role"`
	Deliveries []RecipientDelivery `json:"deliveries"`
}

// AreaAnalysis summarizes who is affected: per audience, and for the
// drivers and vehicles named in the target audience, the recipients it
// names that were reached at least once. A person named by several
// counts in each.
type AreaAnalysis struct {
	TotalVehiclesInArea       int      `json:"total_vehicles_in_area" source:"computed" doc:"vehicles of active trips whose last position is in the area"`
	ActiveDriversNotified     int      `json:"active_drivers_notified" source:"measured" doc:"drivers of the active trips in the area reached"`
	FieldPersonnelNotified    int      `json:"field_personnel_notified" source:"measured"`
	DispatchersNotified       int      `json:"dispatchers_notified" source:"measured"`
	EmergencyContactsNotified int      `json:"emergency_contacts_notified" source:"measured"`
	SpecificDriversNotified   int      `json:"specific_drivers_notified" source:"measured" doc:"drivers named in target_audience.specific_drivers reached"`
	SpecificVehiclesNotified  int      `json:"specific_vehicles_notified" source:"measured" doc:"recipients named through target_audience.specific_vehicles (the vehicles, the contacts linked to them, the drivers of their trips) reached"`
	EstimatedImpactRadiusKm   *float64 `json:"estimated_impact_radius_km" source:"computed" doc:"a radius area's radius; a drawn area's farthest point from its mean, plus the buffer; null for an approximated area (area_resolution), whose extent is not known"`
}

// Metrics of an alert.
type Metrics struct {
	CreationToFirstDeliveryMS   *float64 `json:"creation_to_first_delivery_ms" source:"measured" doc:"from the alert's creation to the end of its first delivery that went through (accepted by the gateway, on a retry of the gateway queue too, or the in-app alert published); null until one did"`
	AverageDeliveryTimeMS       *float64 `json:"average_delivery_time_ms" source:"measured" doc:"the average time a delivery that went through took, over timed_deliveries; null until one did"`
	TimedDeliveries             int      `json:"timed_deliveries" source:"measured" doc:"the deliveries that went through, at creation and in the channels' later rounds, that average_delivery_time_ms is over"`
	NotificationReachPercentage *float64 `json:"notification_reach_percentage" source:"computed" doc:"recipients reached at least once by now (the channels' later rounds and the gateway queue's retries included) over recipients, percent; null for an alert without recipients, where there is no share"`
	EngagementRate              *float64 `json:"engagement_rate" source:"computed" doc:"the acknowledgment rate; null for an alert without recipients"`
}

// Recipient is who an alert went to.
type Recipient struct {
	RecipientID   string   `json:"recipient_id"`
	RecipientType string   `json:"recipient_type"`
	VehicleID     string   `json:"vehicle_id,omitempty"`
	ContactID     string   `json:"contact_id,omitempty" doc:"the directory entry that reached this person"`
	Name          string   `json:"name,omitempty"`
	Audiences     []string `json:"audiences,omitempty" doc:"the target audiences that name this person, with specific_drivers and specific_vehicles when named there"`
	Delivered     bool     `json:"delivered"`
	// Deliveries is the outcome of each channel for this recipient.
	Deliveries     []RecipientDelivery `json:"deliveries,omitempty"`
	AcknowledgedAt *time.Time          `json:"acknowledged_at,omitempty"`
	// AcknowledgedByType is who acknowledged: the recipient_type of the
	// acknowledgment (a dispatcher may acknowledge for a driver), else
	// the recipient's own type.
	AcknowledgedByType string `json:"acknowledged_by_type,omitempty" doc:"the acknowledgment's recipient_type (who acknowledged), else the recipient's own type"`
	Note               string `json:"note,omitempty"`
}

// RecipientDelivery is one channel's outcome for one recipient: delivered,
// failed, retrying, skipped (the recipient has no address for the channel,
// a driver or vehicle without a directory entry having none, or it is
// their quiet hours), scheduled (the channel's first delivery
// waits for its delay) or cancelled (a scheduled delivery the recipient's
// acknowledgment, or the alert's cancellation or expiry, called off). A
// repeat replaces the entry with its own outcome; one skipped leaves it.
type RecipientDelivery struct {
	Channel string `json:"channel"`
	To      string `json:"to,omitempty"`
	Status  string `json:"status" enum:"delivered,failed,skipped,retrying,scheduled,cancelled"`
	Reason  string `json:"reason,omitempty"`
	// Attempts counts the gateway's attempts when it is queued.
	Attempts int `json:"attempts,omitempty"`
	// Level is the escalation level that sent it; 0 for the alert itself.
	Level int `json:"level,omitempty"`
	// Repeat is the repeat the entry tells of; 0 for the first delivery.
	Repeat int `json:"repeat,omitempty" doc:"the repeat this outcome is of (1 for the first); absent for the first delivery"`
	// ScheduledAt is when a delayed first delivery or a repeat was due.
	ScheduledAt *time.Time `json:"scheduled_at,omitempty" doc:"when the channel's delayed first delivery, or this repeat, is or was due"`
	// NotificationID is the gateway notification's id (its webhook-id).
	NotificationID string `json:"notification_id,omitempty"`
}

// Alert is the emergency alert resource.
type Alert struct {
	AlertID                  string         `json:"alert_id"`
	AlertType                string         `json:"alert_type"`
	Severity                 string         `json:"severity"`
	Title                    string         `json:"title"`
	Message                  string         `json:"message"`
	Status                   string         `json:"status" enum:"active,expired,cancelled"`
	CreatedAt                time.Time      `json:"created_at"`
	DeliveryStatus           DeliveryStatus `json:"delivery_status"`
	AcknowledgmentStatus     AckStatus      `json:"acknowledgment_status"`
	AutomatedActionsExecuted []ActionRecord `json:"automated_actions_executed"`
	EscalationStatus         Escalation     `json:"escalation_status"`
	AffectedAreaAnalysis     AreaAnalysis   `json:"affected_area_analysis"`
	AreaResolution           AreaResolution `json:"area_resolution"`
	AlertMetrics             Metrics        `json:"alert_metrics"`
	RelatedIncidents         []string       `json:"related_incidents" source:"computed" doc:"the incidents active or escalated at the alert's creation whose location lies in the affected area or whose vehicle or driver target_audience names (specific_vehicles, specific_drivers); fixed at creation; null when the service keeps no incidents"`
	ExpiresAt                time.Time      `json:"expires_at" doc:"the expiration in UTC to the millisecond"`
	NextStatusCheck          *time.Time     `json:"next_status_check" source:"computed" doc:"when the alert's next scheduled step falls due: the earliest of its next escalation level, its channels' next delivery rounds and its expiration; null once it is cancelled or expired"`
	Recipients               []Recipient    `json:"recipients"`
}

// AckBody acknowledges an alert.
type AckBody struct {
	RecipientID   string `json:"recipient_id" required:"true"`
	RecipientType string `json:"recipient_type,omitempty" enum:"driver,vehicle,field_personnel,dispatcher,supervisor,emergency_management,emergency_contact" doc:"who acknowledges: the recipient, or someone on their behalf; recorded as acknowledged_by_type"`
	Note          string `json:"note,omitempty" doc:"at most 2000 characters"`
}
