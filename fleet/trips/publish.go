package trips

import (
	"context"
	"encoding/json"
	"math"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

func metricsOf(e detect.Event) map[string]any {
	m := e.Metrics
	out := map[string]any{"duration_seconds": round(m.DurationSeconds, 1)}
	switch e.Type {
	case detect.TypeSpeeding:
		out["speed_limit_kmh"] = round(m.SpeedLimitKmh, 1)
		out["actual_speed_kmh"] = round(m.ActualSpeedKmh, 1)
		out["excess_speed_kmh"] = round(m.ExcessSpeedKmh, 1)
		out["match"] = "none" // judged by the configured limit
		if e.RoadLimitKmh > 0 {
			out["match"] = "road" // judged by the matched road's limit
		}
	case detect.TypeIdle:
	default:
		out["acceleration_g"] = round(m.AccelerationG, 3)
		out["speed_change_kmh"] = round(m.SpeedChangeKmh, 1)
	}
	return out
}

var severityOf = map[string]string{detect.SeverityModerate: "medium", detect.SeverityHigh: "high", detect.SeverityCritical: "critical"}

// publishUpload publishes accepted points and new safety events. The
// points are already durable; a bus or encoding failure is logged, not
// returned.
func (s *Service) publishUpload(ctx context.Context, t store.Trip, pts []Point, events []detect.Event, ids []string, seqBase int64) {
	if s.pub == nil {
		return
	}
	now := apitime.Of(s.now())
	eps := make([]event.Point, len(pts))
	for i, p := range pts {
		ep := &eps[i]
		*ep = event.Point{TripID: t.ID, VehicleID: t.VehicleID, DriverID: t.DriverID, Org: t.Org, Env: t.Env, Timestamp: p.Time(),
			Latitude: p.Lat, Longitude: p.Lon, SpeedKmh: nanPtr(p.Speed), Heading: nanPtr(p.Heading), Accuracy: nanPtr(p.Accuracy)}
	}
	evs := make([]*event.Event, len(events))
	for i, e := range events {
		evs[i] = safetyEvent(t, e, ids[i], seqBase+int64(i)+1, now)
	}
	s.published(s.pub.PublishPoints(ctx, t.Org, t.Env, eps, evs...), "trip_id", t.ID, "points", len(eps), "events", len(evs))
}

// safetyEvent is the event a detected episode raises.
func safetyEvent(t store.Trip, e detect.Event, id string, seq int64, now time.Time) *event.Event {
	data := map[string]any{"duration_seconds": round(e.Metrics.DurationSeconds, 1), "confidence": e.Confidence, "detector_severity": e.Severity}
	for k, v := range metricsOf(e) {
		data[k] = v
	}
	if e.Type == detect.TypeHarshBraking {
		data["deceleration_g"] = round(math.Abs(e.Metrics.AccelerationG), 3)
	}
	cat := event.CategorySafety
	sev := severityOf[e.Severity]
	pri := "normal"
	if e.Type == detect.TypeIdle {
		cat, sev = event.CategoryVehicle, "low"
	}
	if sev == "critical" {
		pri = "urgent"
	}
	ev := &event.Event{EventID: id, EventType: e.Type, Category: cat, Timestamp: e.Start.UTC(), Severity: sev, Priority: pri,
		Source:   event.Source{VehicleID: t.VehicleID, DriverID: t.DriverID, TripID: t.ID},
		Location: &event.Location{Latitude: e.Lat, Longitude: e.Lon}, EventData: data,
		Metadata: event.Metadata{CorrelationID: t.ID, SequenceNumber: seq, ProcessingTime: apitime.Format(now), SourceSystem: "fleethub.trips"}}
	if e.RoadLimitKmh > 0 { // the road the episode started on
		limit := round(e.RoadLimitKmh, 1)
		ev.Location.SpeedLimit, ev.Location.RoadType = &limit, e.RoadType
	}
	if cat == event.CategorySafety {
		// the hub acts on no detected event by itself: whoever consumes
		// the stream decides (an alert, an incident) and says so
		ev.AutomaticActions = map[string]any{"alert_sent": false, "incident_logged": false, "supervisor_notified": false}
		ev.RiskAssessment = riskOf(e)
	}
	return ev
}

// riskBand is the risk of a detector severity band.
var riskBand = map[string]string{detect.SeverityModerate: "low", detect.SeverityHigh: "medium", detect.SeverityCritical: "high"}

// recommendedActions are the advice for each type of safety event.
var recommendedActions = map[string][]string{
	detect.TypeHarshBraking:      {"review the event with the driver", "keep a longer following distance and anticipate stops"},
	detect.TypeHarshAcceleration: {"review the event with the driver", "accelerate gradually"},
	detect.TypeHarshCornering:    {"review the event with the driver", "slow down before turns"},
	detect.TypeSpeeding:          {"review the event with the driver", "keep to the speed limit"},
}

// riskOf is a safety event's risk_assessment (docs/analytics.md, Risk
// assessment): collision_risk is the band of the detector's severity,
// which grades the measured peak g of a harsh event and the excess speed
// of speeding; passenger_impact is that band for harsh events, whose peak
// g is what the occupants feel, and null for speeding, which puts no
// measured force on them; recommended_actions follow the event's type.
func riskOf(e detect.Event) map[string]any {
	var risk, impact any // null for a severity without a band
	if band, ok := riskBand[e.Severity]; ok {
		risk = band
		if e.Type != detect.TypeSpeeding {
			impact = band
		}
	}
	acts := recommendedActions[e.Type]
	if acts == nil {
		acts = []string{}
	}
	return map[string]any{"collision_risk": risk, "passenger_impact": impact, "recommended_actions": acts}
}

// published logs the first failed publish of an outage and the first
// success after it; the points and transitions are stored either way.
func (s *Service) published(err error, attrs ...any) {
	switch {
	case err != nil && !s.pubFailing.Swap(true):
		s.log.Warn("publishing to the bus failed; what is stored stays stored, and further failures are not logged until a publish succeeds",
			append(attrs, "error", err)...)
	case err == nil && s.pubFailing.Load() && s.pubFailing.Swap(false):
		s.log.Info("publishing to the bus again")
	}
}

// lifecycleEvent publishes a trip_lifecycle event with the sequence number
// the transition stored (st.Seq).
func (s *Service) lifecycleEvent(ctx context.Context, t store.Trip, st *state, typ string, at time.Time, loc *Location, data map[string]any) {
	if s.pub == nil {
		return
	}
	ev := &event.Event{EventID: newID("evt_"), EventType: typ, Category: event.CategoryTripLifecycle, Timestamp: at, Severity: "low", Priority: "normal",
		Source: event.Source{VehicleID: t.VehicleID, DriverID: t.DriverID, TripID: t.ID}, EventData: data,
		Metadata: event.Metadata{CorrelationID: t.ID, SequenceNumber: st.Seq, ProcessingTime: apitime.Format(s.now()), SourceSystem: "fleethub.trips"}}
	if loc != nil {
		ev.Location = &event.Location{Latitude: loc.Latitude, Longitude: loc.Longitude, Address: loc.addressOf()}
	}
	s.published(s.pub.Publish(ctx, t.Org, t.Env, ev), "trip_id", t.ID, "event", typ)
}

// Health is the state of the location upload path, as the last uploads
// found it: unhealthy while points cannot be stored (the store is
// unavailable), degraded while stored points cannot be published to the
// streams (the bus refuses them), healthy otherwise.
func (s *Service) Health(context.Context) string {
	switch {
	case s.storeFailing.Load():
		return "unhealthy"
	case s.pubFailing.Load():
		return "degraded"
	}
	return "healthy"
}

// plainNumbers is v, a value decoded from a request (numbers as
// json.Number), with its numbers as int64 (integers that fit) or float64,
// in maps and arrays at any depth: the bus carries a json.Number as the
// string it is, and the event would give a number back as a string.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return x.String()
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = plainNumbers(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plainNumbers(e)
		}
		return out
	}
	return v
}
