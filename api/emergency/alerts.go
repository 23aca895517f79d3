package emergency

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/filters/geofence"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/store"
)

// Alert values.
var (
	AlertTypes = []string{"severe_weather_warning", "road_hazard", "security_threat", "fleet_emergency", "system_maintenance", "traffic_disruption"}
	Channels   = []string{"sms", "email", "push_notification", "voice_call", "in_app_alert"}
	Actions    = []string{"suspend_outdoor_operations", "route_vehicles_to_shelter", "enable_emergency_tracking", "play_emergency_sound", "show_safe_route", "notify_emergency_contacts"}
	Audiences  = []string{"active_drivers", "field_personnel", "emergency_contacts", "dispatchers"}
)

// AreaPoint is a position of an affected area.
type AreaPoint struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// AffectedArea is where an alert applies.
type AffectedArea struct {
	Type     string      `json:"type" enum:"radius,polygon,route,city,state"`
	Center   *AreaPoint  `json:"center,omitempty"`
	RadiusKm *float64    `json:"radius_km,omitempty"`
	Polygon  []AreaPoint `json:"polygon,omitempty"`
	RouteID  string      `json:"route_id,omitempty"`
	City     string      `json:"city,omitempty"`
	State    string      `json:"state,omitempty"`
}

// Audience says who receives an alert.
type Audience struct {
	Include          []string `json:"include,omitempty"`
	Exclude          []string `json:"exclude,omitempty"`
	SpecificVehicles []string `json:"specific_vehicles,omitempty"`
	SpecificDrivers  []string `json:"specific_drivers,omitempty"`
}

// Channel is one way of delivering.
type Channel struct {
	Channel               string `json:"channel" enum:"sms,email,push_notification,voice_call,in_app_alert"`
	Priority              string `json:"priority,omitempty"`
	RepeatIntervalMinutes int    `json:"repeat_interval_minutes,omitempty"`
	MaxRepeats            int    `json:"max_repeats,omitempty"`
	DelayMinutes          int    `json:"delay_minutes,omitempty"`
}

// EscalationLevel is one step of escalation.
type EscalationLevel struct {
	DelayMinutes int    `json:"delay_minutes"`
	Action       string `json:"action"`
}

// EscalationPolicy of an alert.
type EscalationPolicy struct {
	Enabled          bool              `json:"enabled"`
	EscalationLevels []EscalationLevel `json:"escalation_levels,omitempty"`
}

// AlertBody creates an alert.
type AlertBody struct {
	AlertType              string            `json:"alert_type" required:"true"`
	Severity               string            `json:"severity" required:"true"`
	Title                  string            `json:"title" required:"true"`
	Message                string            `json:"message" required:"true"`
	AffectedArea           *AffectedArea     `json:"affected_area" required:"true"`
	TargetAudience         *Audience         `json:"target_audience" required:"true"`
	DeliveryChannels       []Channel         `json:"delivery_channels" required:"true"`
	Expiration             string            `json:"expiration" required:"true"`
	AcknowledgmentRequired bool              `json:"acknowledgment_required,omitempty"`
	EscalationPolicy       *EscalationPolicy `json:"escalation_policy,omitempty"`
	AutomatedActions       []string          `json:"automated_actions,omitempty"`
}

// ChannelCounts per channel.
type ChannelCounts struct {
	Sent      int `json:"sent"`
	Delivered int `json:"delivered"`
	Failed    int `json:"failed"`
}

// VoiceCounts of voice calls.
type VoiceCounts struct {
	Initiated int `json:"initiated"`
	Answered  int `json:"answered"`
	Voicemail int `json:"voicemail"`
	Failed    int `json:"failed"`
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
	TotalRecipients      int       `json:"total_recipients"`
	SuccessfulDeliveries int       `json:"successful_deliveries"`
	FailedDeliveries     int       `json:"failed_deliveries"`
	PendingDeliveries    int       `json:"pending_deliveries"`
	DeliveryBreakdown    Breakdown `json:"delivery_breakdown"`
}

// AckStatus of an alert.
type AckStatus struct {
	Required                   bool    `json:"required"`
	Received                   int     `json:"received"`
	Pending                    int     `json:"pending"`
	AcknowledgmentRate         float64 `json:"acknowledgment_rate"`
	AverageResponseTimeSeconds float64 `json:"average_response_time_seconds"`
}

// ActionRecord is an automated action taken.
type ActionRecord struct {
	Action             string    `json:"action"`
	Status             string    `json:"status" enum:"completed,in_progress"`
	ExecutedAt         time.Time `json:"executed_at"`
	AffectedOperations *int      `json:"affected_operations,omitempty"`
	AffectedVehicles   *int      `json:"affected_vehicles,omitempty"`
	TrackingEnabledFor *int      `json:"tracking_enabled_for,omitempty"`
	ReroutingProgress  string    `json:"rerouting_progress,omitempty"`
}

// Escalation state.
type Escalation struct {
	Enabled             bool       `json:"enabled"`
	CurrentLevel        int        `json:"current_level"`
	NextEscalationAt    *time.Time `json:"next_escalation_at"`
	EscalationTriggered bool       `json:"escalation_triggered"`
}

// AreaAnalysis summarizes who is affected.
type AreaAnalysis struct {
	TotalVehiclesInArea       int     `json:"total_vehicles_in_area"`
	ActiveDriversNotified     int     `json:"active_drivers_notified"`
	FieldPersonnelNotified    int     `json:"field_personnel_notified"`
	EmergencyContactsNotified int     `json:"emergency_contacts_notified"`
	EstimatedImpactRadiusKm   float64 `json:"estimated_impact_radius_km"`
}

// Metrics of an alert.
type Metrics struct {
	CreationToFirstDeliveryMS   float64 `json:"creation_to_first_delivery_ms"`
	AverageDeliveryTimeMS       float64 `json:"average_delivery_time_ms"`
	NotificationReachPercentage float64 `json:"notification_reach_percentage"`
	EngagementRate              float64 `json:"engagement_rate"`
}

// Recipient is who an alert went to.
type Recipient struct {
	RecipientID    string     `json:"recipient_id"`
	RecipientType  string     `json:"recipient_type"`
	VehicleID      string     `json:"vehicle_id,omitempty"`
	Delivered      bool       `json:"delivered"`
	AcknowledgedAt *time.Time `json:"acknowledged_at,omitempty"`
	Note           string     `json:"note,omitempty"`
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
	AlertMetrics             Metrics        `json:"alert_metrics"`
	RelatedIncidents         []string       `json:"related_incidents"`
	ExpiresAt                time.Time      `json:"expires_at"`
	NextStatusCheck          time.Time      `json:"next_status_check"`
	Recipients               []Recipient    `json:"recipients"`
}

// AckBody acknowledges an alert.
type AckBody struct {
	RecipientID   string `json:"recipient_id" required:"true"`
	RecipientType string `json:"recipient_type,omitempty"`
	Note          string `json:"note,omitempty"`
}

// Notification is what the gateway receives per recipient and channel.
type Notification struct {
	AlertID   string `json:"alert_id"`
	Channel   string `json:"channel"`
	Recipient string `json:"recipient"`
	Title     string `json:"title"`
	Message   string `json:"message"`
	Severity  string `json:"severity"`
	Priority  string `json:"priority,omitempty"`
}

// Notifier sends notifications through an external gateway (SMS, e-mail,
// push, voice).
type Notifier interface {
	Notify(ctx context.Context, n Notification) error
}

// HTTPNotifier posts each notification as JSON to a gateway URL; a 2xx
// answer means delivered.
type HTTPNotifier struct {
	URL    string
	Client *http.Client
}

// Notify implements Notifier.
func (h *HTTPNotifier) Notify(ctx context.Context, n Notification) error {
	b, _ := json.Marshal(n)
	req, err := http.NewRequestWithContext(ctx, "POST", h.URL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("gateway answered %d", res.StatusCode)
	}
	return nil
}

// ErrNoGateway is a channel that needs a gateway none is configured for.
var ErrNoGateway = errors.New("emergency: no notification gateway configured (--notify-url)")

// Alerts serves emergency alerts.
type Alerts struct {
	st    store.Alerts
	trips interface {
		ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
	}
	notify Notifier // nil: only in-app alerts are delivered
	pub    interface {
		Publish(ctx context.Context, msgs ...hub.Message) error
	}
	now func() time.Time
}

// NewAlerts makes the alert handlers; notify and pub may be nil.
func NewAlerts(st store.Alerts, trips interface {
	ListTrips(ctx context.Context, f store.TripFilter) ([]store.Trip, error)
}, notify Notifier, pub interface {
	Publish(ctx context.Context, msgs ...hub.Message) error
}) *Alerts {
	return &Alerts{st: st, trips: trips, notify: notify, pub: pub, now: time.Now}
}

// Routes returns the alert routes.
func (a *Alerts) Routes() []*api.Route {
	id := []api.Param{{Name: "alert_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/v1/emergency/alerts", Tag: "emergency", Summary: "Broadcast an alert to an audience over several channels", Permission: "emergency:write",
			Request: AlertBody{}, Response: Alert{}, Status: 201, Handler: a.create},
		{Method: "GET", Path: "/v1/emergency/alerts/{alert_id}", Tag: "emergency", Summary: "An alert with live delivery and acknowledgment status", Permission: "emergency:read",
			Params: id, Response: Alert{}, Handler: a.get},
		{Method: "DELETE", Path: "/v1/emergency/alerts/{alert_id}", Tag: "emergency", Summary: "Cancel an alert", Permission: "emergency:write",
			Params: id, Response: Alert{}, Errors: []int{409}, Handler: a.cancel},
		{Method: "POST", Path: "/v1/emergency/alerts/{alert_id}/acknowledge", Tag: "emergency", Summary: "Acknowledge an alert as a recipient", Permission: "emergency:write",
			Params: id, Request: AckBody{}, Response: Alert{}, Errors: []int{409}, Handler: a.ack},
	}
}

func (b *AlertBody) validate(now time.Time) (time.Time, map[string]string) {
	bad := map[string]string{}
	if !slices.Contains(AlertTypes, b.AlertType) {
		bad["alert_type"] = "must be one of " + strings.Join(AlertTypes, ", ")
	}
	if !slices.Contains(Severities, b.Severity) {
		bad["severity"] = "must be low, moderate, high or critical"
	}
	if strings.TrimSpace(b.Title) == "" || len([]rune(b.Title)) > 100 {
		bad["title"] = "is required, at most 100 characters"
	}
	if strings.TrimSpace(b.Message) == "" || len([]rune(b.Message)) > 500 {
		bad["message"] = "is required, at most 500 characters"
	}
	if a := b.AffectedArea; a == nil {
		bad["affected_area"] = "is required"
	} else {
		switch a.Type {
		case "radius":
			if a.Center == nil || !(geofence.Point{Lat: a.Center.Latitude, Lon: a.Center.Longitude}).Valid() {
				bad["affected_area.center"] = "is required: latitude -90..90, longitude -180..180"
			}
			if a.RadiusKm == nil || !(*a.RadiusKm > 0 && *a.RadiusKm <= 20000) {
				bad["affected_area.radius_km"] = "must be above 0 and at most 20000"
			}
		case "polygon":
			ar := geofence.Area{}
			for _, p := range a.Polygon {
				ar.Polygon = append(ar.Polygon, geofence.Point{Lat: p.Latitude, Lon: p.Longitude})
			}
			if err := ar.Validate(); err != nil || len(a.Polygon) == 0 {
				bad["affected_area.polygon"] = "must be at least three valid vertices"
			}
		case "route":
			if a.RouteID == "" {
				bad["affected_area.route_id"] = "is required for type route"
			}
		case "city":
			if a.City == "" {
				bad["affected_area.city"] = "is required for type city"
			}
		case "state":
			if len(a.State) != 2 || strings.ToUpper(a.State) != a.State {
				bad["affected_area.state"] = "must be a two-letter state code"
			}
		default:
			bad["affected_area.type"] = "must be radius, polygon, route, city or state"
		}
	}
	if ta := b.TargetAudience; ta == nil {
		bad["target_audience"] = "is required"
	} else {
		for i, x := range append(append([]string{}, ta.Include...), ta.Exclude...) {
			if !slices.Contains(Audiences, x) {
				bad[fmt.Sprintf("target_audience.include_or_exclude[%d]", i)] = "must be one of " + strings.Join(Audiences, ", ")
			}
		}
	}
	if len(b.DeliveryChannels) == 0 {
		bad["delivery_channels"] = "at least one channel is required"
	}
	for i, c := range b.DeliveryChannels {
		if !slices.Contains(Channels, c.Channel) {
			bad[fmt.Sprintf("delivery_channels[%d].channel", i)] = "must be one of " + strings.Join(Channels, ", ")
		}
		if c.RepeatIntervalMinutes < 0 || c.MaxRepeats < 0 || c.MaxRepeats > 20 || c.DelayMinutes < 0 {
			bad[fmt.Sprintf("delivery_channels[%d]", i)] = "repeat_interval_minutes and delay_minutes must not be negative, max_repeats 0-20"
		}
	}
	exp, err := time.Parse(time.RFC3339Nano, b.Expiration)
	if err != nil {
		bad["expiration"] = "must be an ISO 8601 date-time"
	} else if !exp.After(now) {
		bad["expiration"] = "must be in the future"
	}
	for i, x := range b.AutomatedActions {
		if !slices.Contains(Actions, x) {
			bad[fmt.Sprintf("automated_actions[%d]", i)] = "must be one of " + strings.Join(Actions, ", ")
		}
	}
	if ep := b.EscalationPolicy; ep != nil {
		for i, l := range ep.EscalationLevels {
			if l.DelayMinutes <= 0 || l.Action == "" {
				bad[fmt.Sprintf("escalation_policy.escalation_levels[%d]", i)] = "delay_minutes above 0 and an action are required"
			}
		}
	}
	return exp.UTC(), bad
}

// recipients finds who an alert reaches: drivers of the organization's
// active trips whose last point is in the area (radius and polygon; for
// route, city and state areas, which need map data, every active driver),
// plus specific vehicles and drivers.
func (a *Alerts) recipients(ctx context.Context, sc store.Scope, b *AlertBody) ([]Recipient, int, error) {
	var out []Recipient
	seen := map[string]bool{}
	inArea := 0
	ta := b.TargetAudience
	wantDrivers := slices.Contains(ta.Include, "active_drivers") && !slices.Contains(ta.Exclude, "active_drivers")
	trips, err := a.trips.ListTrips(ctx, store.TripFilter{Scope: sc, Statuses: []string{store.TripActive, store.TripPaused}, Limit: 10_000, Sort: "start_time"})
	if err != nil {
		return nil, 0, err
	}
	var area *geofence.Area
	switch aa := b.AffectedArea; aa.Type {
	case "radius":
		area = &geofence.Area{Center: geofence.Point{Lat: aa.Center.Latitude, Lon: aa.Center.Longitude}, Radius: *aa.RadiusKm * 1000}
	case "polygon":
		area = &geofence.Area{}
		for _, p := range aa.Polygon {
			area.Polygon = append(area.Polygon, geofence.Point{Lat: p.Latitude, Lon: p.Longitude})
		}
	}
	for _, t := range trips {
		in := area == nil
		if area != nil {
			var st struct {
				Last *struct {
					Lat float64 `json:"lat"`
					Lon float64 `json:"lon"`
				} `json:"last"`
			}
			_ = json.Unmarshal(t.State, &st)
			if st.Last != nil {
				in = area.Contains(st.Last.Lat, st.Last.Lon)
			} else if t.StartLocation != nil {
				in = area.Contains(t.StartLocation.Latitude, t.StartLocation.Longitude)
			}
		}
		if !in {
			continue
		}
		inArea++
		if !wantDrivers {
			continue
		}
		id := t.DriverID
		if id == "" {
			id = "vehicle:" + t.VehicleID
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, Recipient{RecipientID: id, RecipientType: "driver", VehicleID: t.VehicleID})
		}
	}
	for _, v := range ta.SpecificVehicles {
		if id := "vehicle:" + v; !seen[id] {
			seen[id] = true
			out = append(out, Recipient{RecipientID: id, RecipientType: "vehicle", VehicleID: v})
		}
	}
	for _, d := range ta.SpecificDrivers {
		if !seen[d] {
			seen[d] = true
			out = append(out, Recipient{RecipientID: d, RecipientType: "driver"})
		}
	}
	return out, inArea, nil
}

func (a *Alerts) create(c *api.Ctx) error {
	var b AlertBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	now := a.now().UTC().Truncate(time.Millisecond)
	exp, bad := b.validate(now)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	recips, inArea, err := a.recipients(c.Context(), sc, &b)
	if err != nil {
		return err
	}
	var idb [10]byte
	_, _ = rand.Read(idb[:])
	al := Alert{AlertID: "alr_" + hex.EncodeToString(idb[:]), AlertType: b.AlertType, Severity: b.Severity, Title: b.Title, Message: b.Message,
		Status: "active", CreatedAt: now, ExpiresAt: exp, RelatedIncidents: []string{}, Recipients: recips, AutomatedActionsExecuted: []ActionRecord{}}
	// deliver: every recipient on every channel, concurrently, bounded
	type outcome struct {
		channel string
		ok      bool
		at      time.Duration
	}
	var mu sync.Mutex
	var outs []outcome
	sem := make(chan struct{}, 16)
	var wg sync.WaitGroup
	delivered := map[string]bool{}
	for _, ch := range b.DeliveryChannels {
		for _, r := range recips {
			wg.Add(1)
			sem <- struct{}{}
			go func(ch Channel, r Recipient) {
				defer wg.Done()
				defer func() { <-sem }()
				start := time.Now()
				var err error
				if ch.Channel == "in_app_alert" {
					err = a.publishAlert(c.Context(), org, env, &al, r, "emergency_alert")
				} else if a.notify == nil {
					err = ErrNoGateway
				} else {
					ctx, cancel := context.WithTimeout(c.Context(), 5*time.Second)
					err = a.notify.Notify(ctx, Notification{AlertID: al.AlertID, Channel: ch.Channel, Recipient: r.RecipientID, Title: b.Title, Message: b.Message,
						Severity: b.Severity, Priority: ch.Priority})
					cancel()
				}
				mu.Lock()
				outs = append(outs, outcome{ch.Channel, err == nil, time.Since(start)})
				if err == nil {
					delivered[r.RecipientID] = true
				}
				mu.Unlock()
			}(ch, r)
		}
	}
	wg.Wait()
	ds := DeliveryStatus{TotalRecipients: len(recips)}
	var total time.Duration
	first := time.Duration(math.MaxInt64)
	for _, o := range outs {
		counts := map[string]*ChannelCounts{"sms": &ds.DeliveryBreakdown.SMS, "push_notification": &ds.DeliveryBreakdown.Push,
			"email": &ds.DeliveryBreakdown.Email, "in_app_alert": &ds.DeliveryBreakdown.InApp}
		if o.channel == "voice_call" {
			ds.DeliveryBreakdown.Voice.Initiated++
			if o.ok {
				ds.DeliveryBreakdown.Voice.Answered++
			} else {
				ds.DeliveryBreakdown.Voice.Failed++
			}
		} else {
			cc := counts[o.channel]
			cc.Sent++
			if o.ok {
				cc.Delivered++
			} else {
				cc.Failed++
			}
		}
		if o.ok {
			ds.SuccessfulDeliveries++
			total += o.at
			first = min(first, o.at)
		} else {
			ds.FailedDeliveries++
		}
	}
	al.DeliveryStatus = ds
	for i := range al.Recipients {
		al.Recipients[i].Delivered = delivered[al.Recipients[i].RecipientID]
	}
	if ds.SuccessfulDeliveries > 0 {
		al.AlertMetrics.CreationToFirstDeliveryMS = round2(float64(first.Microseconds()) / 1000)
		al.AlertMetrics.AverageDeliveryTimeMS = round2(float64(total.Microseconds()) / 1000 / float64(ds.SuccessfulDeliveries))
	}
	if len(recips) > 0 {
		al.AlertMetrics.NotificationReachPercentage = round2(100 * float64(len(delivered)) / float64(len(recips)))
	}
	al.AffectedAreaAnalysis = AreaAnalysis{TotalVehiclesInArea: inArea, EstimatedImpactRadiusKm: impactRadius(b.AffectedArea)}
	for _, r := range recips {
		if r.RecipientType == "driver" && delivered[r.RecipientID] {
			al.AffectedAreaAnalysis.ActiveDriversNotified++
		}
	}
	al.AcknowledgmentStatus = AckStatus{Required: b.AcknowledgmentRequired, Pending: len(recips)}
	al.EscalationStatus = Escalation{Enabled: b.EscalationPolicy != nil && b.EscalationPolicy.Enabled}
	if al.EscalationStatus.Enabled && len(b.EscalationPolicy.EscalationLevels) > 0 {
		t := now.Add(time.Duration(b.EscalationPolicy.EscalationLevels[0].DelayMinutes) * time.Minute)
		al.EscalationStatus.NextEscalationAt = &t
	}
	// automated actions are instructions published to the fleet's event
	// streams (devices and consoles act on them)
	for _, act := range b.AutomatedActions {
		n := inArea
		rec := ActionRecord{Action: act, Status: "completed", ExecutedAt: now}
		switch act {
		case "suspend_outdoor_operations":
			rec.AffectedOperations = &n
		case "route_vehicles_to_shelter", "show_safe_route":
			rec.AffectedVehicles, rec.Status, rec.ReroutingProgress = &n, "in_progress", "0%"
		case "enable_emergency_tracking":
			rec.TrackingEnabledFor = &n
		}
		if err := a.publishAction(c.Context(), org, env, &al, act); err != nil {
			rec.Status = "in_progress"
		}
		al.AutomatedActionsExecuted = append(al.AutomatedActionsExecuted, rec)
	}
	al.NextStatusCheck = now.Add(5 * time.Minute)
	if err := a.save(c.Context(), sc, &al, 0, b.EscalationPolicy); err != nil {
		return err
	}
	return c.JSON(201, al)
}

func round2(v float64) float64 { return math.Round(v*100) / 100 }

func impactRadius(a *AffectedArea) float64 {
	switch a.Type {
	case "radius":
		return *a.RadiusKm
	case "polygon":
		var lat, lon float64
		for _, p := range a.Polygon {
			lat, lon = lat+p.Latitude, lon+p.Longitude
		}
		n := float64(len(a.Polygon))
		r := 0.0
		for _, p := range a.Polygon {
			r = math.Max(r, geofence.Distance(geofence.Point{Lat: lat / n, Lon: lon / n}, geofence.Point{Lat: p.Latitude, Lon: p.Longitude})/1000)
		}
		return round2(r)
	}
	return 0
}

type stored struct {
	Alert      Alert             `json:"alert"`
	Escalation *EscalationPolicy `json:"escalation_policy,omitempty"`
	Acks       []float64         `json:"ack_seconds,omitempty"`
}

func (a *Alerts) save(ctx context.Context, sc store.Scope, al *Alert, prev int64, esc *EscalationPolicy) error {
	doc, err := json.Marshal(stored{Alert: *al, Escalation: esc})
	if err != nil {
		return err
	}
	rec := store.Alert{ID: al.AlertID, Org: sc.Org, Env: sc.Env, Status: al.Status, Doc: doc, Version: prev + 1, CreatedAt: al.CreatedAt,
		UpdatedAt: a.now().UTC(), ExpiresAt: al.ExpiresAt}
	if prev == 0 {
		return a.st.CreateAlert(ctx, rec)
	}
	return a.st.UpdateAlert(ctx, rec, prev)
}

// load reads an alert and brings its state to now: expiry and escalation
// levels whose delay passed while acknowledgments are pending.
func (a *Alerts) load(ctx context.Context, sc store.Scope, id string) (*Alert, *EscalationPolicy, int64, bool, error) {
	rec, err := a.st.GetAlert(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, 0, false, api.Errf("alert_not_found", "alert not found")
	}
	if err != nil {
		return nil, nil, 0, false, err
	}
	var s stored
	if err := json.Unmarshal(rec.Doc, &s); err != nil {
		return nil, nil, 0, false, err
	}
	al := &s.Alert
	now := a.now().UTC()
	changed := false
	if al.Status == "active" && !now.Before(al.ExpiresAt) {
		al.Status, changed = "expired", true
	}
	if esc := s.Escalation; al.Status == "active" && esc != nil && esc.Enabled && al.AcknowledgmentStatus.Pending > 0 {
		for al.EscalationStatus.CurrentLevel < len(esc.EscalationLevels) && al.EscalationStatus.NextEscalationAt != nil && !now.Before(*al.EscalationStatus.NextEscalationAt) {
			lvl := esc.EscalationLevels[al.EscalationStatus.CurrentLevel]
			al.EscalationStatus.CurrentLevel++
			al.EscalationStatus.EscalationTriggered = true
			_ = a.publishAction(ctx, sc.Org, sc.Env, al, lvl.Action)
			if al.EscalationStatus.CurrentLevel < len(esc.EscalationLevels) {
				t := al.CreatedAt.Add(time.Duration(esc.EscalationLevels[al.EscalationStatus.CurrentLevel].DelayMinutes) * time.Minute)
				al.EscalationStatus.NextEscalationAt = &t
			} else {
				al.EscalationStatus.NextEscalationAt = nil
			}
			changed = true
		}
	}
	return al, s.Escalation, rec.Version, changed, nil
}

func (a *Alerts) get(c *api.Ctx) error {
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	al, esc, ver, changed, err := a.load(c.Context(), sc, c.PathParam("alert_id"))
	if err != nil {
		return err
	}
	if changed {
		if err := a.save(c.Context(), sc, al, ver, esc); err != nil && !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return c.JSON(200, al)
}

func (a *Alerts) cancel(c *api.Ctx) error {
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	al, esc, ver, _, err := a.load(c.Context(), sc, c.PathParam("alert_id"))
	if err != nil {
		return err
	}
	if al.Status != "active" {
		return api.Errf("invalid_state_transition", "an alert that is %s cannot be cancelled", al.Status).WithDetails(map[string]string{"status": al.Status})
	}
	al.Status = "cancelled"
	al.EscalationStatus.NextEscalationAt = nil
	if err := a.save(c.Context(), sc, al, ver, esc); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return api.Errf("invalid_state_transition", "the alert changed meanwhile; read it again")
		}
		return err
	}
	_ = a.publishAlert(c.Context(), org, env, al, Recipient{}, "emergency_alert_cancelled")
	return c.JSON(200, al)
}

func (a *Alerts) ack(c *api.Ctx) error {
	var b AckBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	if b.RecipientID == "" {
		return api.Validation("validation_failed", map[string]string{"recipient_id": "is required"})
	}
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	al, esc, ver, _, err := a.load(c.Context(), sc, c.PathParam("alert_id"))
	if err != nil {
		return err
	}
	if al.Status != "active" {
		return api.Errf("invalid_state_transition", "an alert that is %s cannot be acknowledged", al.Status).WithDetails(map[string]string{"status": al.Status})
	}
	i := slices.IndexFunc(al.Recipients, func(r Recipient) bool { return r.RecipientID == b.RecipientID })
	if i < 0 {
		return api.Validation("validation_failed", map[string]string{"recipient_id": "is not a recipient of this alert"})
	}
	now := a.now().UTC().Truncate(time.Millisecond)
	r := &al.Recipients[i]
	if r.AcknowledgedAt == nil {
		r.AcknowledgedAt, r.Note = &now, b.Note
		st := &al.AcknowledgmentStatus
		n := float64(st.Received)
		st.AverageResponseTimeSeconds = round2((st.AverageResponseTimeSeconds*n + now.Sub(al.CreatedAt).Seconds()) / (n + 1))
		st.Received++
		st.Pending = max(0, st.Pending-1)
		if len(al.Recipients) > 0 {
			st.AcknowledgmentRate = round2(float64(st.Received) / float64(len(al.Recipients)))
			al.AlertMetrics.EngagementRate = st.AcknowledgmentRate
		}
		if st.Pending == 0 {
			al.EscalationStatus.NextEscalationAt = nil
		}
	}
	if err := a.save(c.Context(), sc, al, ver, esc); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return api.Errf("invalid_state_transition", "the alert changed meanwhile; try again")
		}
		return err
	}
	return c.JSON(200, al)
}

func (a *Alerts) publishAlert(ctx context.Context, org, env string, al *Alert, r Recipient, typ string) error {
	if a.pub == nil {
		return ErrNoGateway
	}
	data := map[string]any{"alert_id": al.AlertID, "alert_type": al.AlertType, "title": al.Title, "message": al.Message}
	if r.RecipientID != "" {
		data["recipient_id"] = r.RecipientID
	}
	return a.publish(ctx, org, env, al, typ, r.VehicleID, data)
}

func (a *Alerts) publishAction(ctx context.Context, org, env string, al *Alert, action string) error {
	if a.pub == nil {
		return ErrNoGateway
	}
	return a.publish(ctx, org, env, al, "emergency_action", "", map[string]any{"alert_id": al.AlertID, "action": action})
}

func (a *Alerts) publish(ctx context.Context, org, env string, al *Alert, typ, vehicle string, data map[string]any) error {
	sev := map[string]string{"low": "low", "moderate": "medium", "high": "high", "critical": "critical"}[al.Severity]
	now := a.now().UTC()
	var idb [8]byte
	_, _ = rand.Read(idb[:])
	ev := &event.Event{EventID: "evt_" + hex.EncodeToString(idb[:]), EventType: typ, Category: event.CategoryEmergency, Timestamp: now, Severity: sev,
		Priority: "emergency", Source: event.Source{VehicleID: vehicle}, EventData: data,
		Metadata: event.Metadata{CorrelationID: al.AlertID, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.emergency"}}
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: now})
	if err != nil {
		return err
	}
	key := vehicle
	if key == "" {
		key = al.AlertID
	}
	return a.pub.Publish(ctx, hub.Message{Topic: hub.TopicEvents, Key: []byte(key), Value: b})
}
