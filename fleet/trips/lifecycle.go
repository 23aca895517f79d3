package trips

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/store"
)

// StartRequest starts a trip.
type StartRequest struct {
	VehicleID     string         `json:"vehicle_id" required:"true" doc:"1 to 200 characters, no control character (a vehicle profile's id)"`
	DriverID      string         `json:"driver_id,omitempty" doc:"1 to 200 characters, no control character"`
	StartLocation *PlaceIn       `json:"start_location,omitempty"`
	StartTime     *time.Time     `json:"start_time,omitempty" doc:"default now; after 1970-01-01T00:00:00Z and at most 5 minutes ahead of the server's clock"`
	Metadata      map[string]any `json:"metadata,omitempty" doc:"free-form, at most 64 KB; no key is the empty string, at any depth"`
}

// Start creates an active trip.
func (s *Service) Start(ctx context.Context, org, env, actor string, r StartRequest) (Trip, error) {
	bad := map[string]string{}
	if r.VehicleID == "" {
		bad["vehicle_id"] = "is required"
	} else if !vehicles.ValidID(r.VehicleID) {
		bad["vehicle_id"] = vehicles.IDRefusal // the id a profile takes (PUT /v1/vehicles/{vehicle_id})
	}
	if r.DriverID != "" && !vehicles.ValidID(r.DriverID) {
		bad["driver_id"] = vehicles.IDRefusal
	}
	checkPlace(bad, "start_location", r.StartLocation)
	now := apitime.Of(s.now())
	start := now
	if r.StartTime != nil {
		start = apitime.Of(*r.StartTime)
		switch {
		case start.After(now.Add(s.cfg.MaxFuture)):
			bad["start_time"] = "must not be in the future"
		case !start.After(time.Unix(0, 0)):
			// the store keeps times as milliseconds since the epoch, 0
			// for none; uploaded points are refused before 1970 too
			bad["start_time"] = "must be after 1970-01-01T00:00:00Z"
		}
	}
	checkMetadata(bad, r.Metadata)
	md, err := metadataJSON(r.Metadata, actor, now, nil)
	if err != nil && !errors.Is(err, ErrMetadataTooLarge) {
		bad["metadata"] = "is not encodable"
	}
	if len(bad) > 0 {
		return Trip{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	if err != nil {
		return Trip{}, err // over 64 KB: payload_too_large, as on update
	}
	sc := scope(org, env)
	st := state{Running: analytics.Running{}}
	if st.Profile, err = s.profileOf(ctx, sc, r.VehicleID); err != nil {
		return Trip{}, err
	}
	prev := s.previous(ctx, sc, r.VehicleID, start)
	st.Seq = prev.Seq + 1 // trip_started
	st.StartOdometer, st.StartFuelLevel = prev.Odometer, prev.FuelLevel
	t := store.Trip{ID: newID("trip_"), Org: org, Env: env, VehicleID: r.VehicleID, DriverID: r.DriverID, Status: store.TripActive,
		StartTime: start, StartLocation: placePtr(r.StartLocation.location()), Metadata: md, MetadataHistory: []byte("[]"),
		Version: 1, CreatedAt: now, UpdatedAt: now}
	a := s.analyticsOf(&st)
	t.Totals = totalsOf(a)
	if t.State, err = encodeState(&st); err != nil {
		return Trip{}, err
	}
	if err := s.store.CreateTrip(ctx, t); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return Trip{}, s.alreadyActive(ctx, sc, r.VehicleID)
		}
		return Trip{}, err
	}
	s.lifecycleEvent(ctx, t, &st, "trip_started", now, r.StartLocation.location(), map[string]any{"start_time": start})
	return s.view(t, &st), nil
}

// alreadyActive is the refusal of a start for a vehicle with an open
// trip: the AlreadyActiveError naming that trip, or ErrAlreadyActive
// alone when it cannot be read (it was stopped meanwhile, or the store
// failed).
func (s *Service) alreadyActive(ctx context.Context, sc store.Scope, vehicleID string) error {
	open, err := s.store.ListTrips(ctx, store.TripFilter{Scope: sc, VehicleID: vehicleID,
		Statuses: []string{store.TripActive, store.TripPaused}, Limit: 1})
	if err != nil || len(open) == 0 {
		return ErrAlreadyActive
	}
	return &AlreadyActiveError{VehicleID: vehicleID, TripID: open[0].ID, Status: open[0].Status}
}

// carried is what a trip takes from the vehicle's previous trip.
type carried struct {
	Seq       int64
	Odometer  *int64
	FuelLevel *float64
}

// previous is what a new trip of a vehicle starting at start takes from
// the vehicle's previous trip: the per-vehicle event sequence it
// continues, and the odometer and fuel readings the previous trip was
// stopped with when it ended by start (the readings this one starts
// with: the start body carries none). A previous trip that cannot be
// read gives nothing, and is logged.
func (s *Service) previous(ctx context.Context, sc store.Scope, vehicle string, start time.Time) (out carried) {
	prev, err := s.store.ListTrips(ctx, store.TripFilter{Scope: sc, VehicleID: vehicle, Sort: "start_time", Desc: true, Limit: 1})
	if err == nil && len(prev) == 0 {
		return out
	}
	var st state
	if err == nil {
		st, err = decodeState(prev[0].State)
	}
	if err != nil {
		s.log.Warn("the vehicle's previous trip is unreadable: its sequence and readings are not continued", "vehicle_id", vehicle, "error", err)
		return out
	}
	out.Seq = st.Seq
	if p := prev[0]; !p.EndTime.IsZero() && !p.EndTime.After(start) {
		out.Odometer, out.FuelLevel = st.Odometer, st.FuelLevel
	}
	return out
}

// Get returns one trip.
func (s *Service) Get(ctx context.Context, org, env, id string) (Trip, error) {
	t, st, err := s.get(ctx, scope(org, env), id)
	if err != nil {
		return Trip{}, err
	}
	return s.view(t, &st), nil
}

// PauseRequest pauses a trip.
type PauseRequest struct {
	Reason   string   `json:"reason,omitempty" doc:"at most 500 characters"`
	Location *PlaceIn `json:"location,omitempty" doc:"defaults to the last uploaded point when absent"`
}

// Pause moves an active trip to paused.
func (s *Service) Pause(ctx context.Context, org, env, id string, r PauseRequest) (PauseResult, error) {
	bad := map[string]string{}
	checkPlace(bad, "location", r.Location)
	if utf8.RuneCountInString(r.Reason) > 500 {
		bad["reason"] = "must be at most 500 characters"
	}
	if len(bad) > 0 {
		return PauseResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	var now time.Time
	t, st, err := s.update(ctx, scope(org, env), id, func(t *store.Trip, st *state, at time.Time) error {
		now = at
		if t.Status != store.TripActive {
			return &TransitionError{TripID: t.ID, From: t.Status, Action: "pause"}
		}
		t.Status = store.TripPaused
		st.PausedAt = now.UnixMilli()
		st.PauseLoc = r.Location.location()
		if st.PauseLoc == nil && st.Last != nil {
			st.PauseLoc = &Location{Latitude: st.Last.Lat, Longitude: st.Last.Lon}
		}
		st.PauseCount++
		st.Seq++ // trip_paused
		return nil
	})
	if err != nil {
		return PauseResult{}, err
	}
	s.lifecycleEvent(ctx, t, &st, "trip_paused", now, st.PauseLoc, withReason(map[string]any{"pause_count": st.PauseCount}, r.Reason))
	return PauseResult{Success: true, TripID: t.ID, Status: t.Status, PausedAt: now, PauseCount: st.PauseCount, Reason: r.Reason,
		Location: st.PauseLoc, Message: "Trip paused; tracking and analytics are suspended until it is resumed"}, nil
}

// closePause ends the open pause at end; lock held.
func closePause(st *state, end time.Time) {
	if st.PausedAt == 0 {
		return
	}
	from := st.PausedAt
	to := end.UnixMilli()
	if to < from {
		to = from
	}
	st.TotalPauseMS += to - from
	st.Pauses = append(st.Pauses, [2]int64{from, to})
	st.Running.Pause(time.UnixMilli(from), time.UnixMilli(to))
	st.PausedAt = 0
}

// ResumeRequest resumes a paused trip.
type ResumeRequest struct {
	Location *PlaceIn       `json:"location,omitempty" doc:"defaults to the pause location when absent"`
	Reason   string         `json:"reason,omitempty" doc:"at most 500 characters"`
	Metadata map[string]any `json:"metadata,omitempty" doc:"custom data about the resume, carried by the trip_resumed event; at most 64 KB; no key is the empty string, at any depth"`
}

// Resume moves a paused trip back to active.
func (s *Service) Resume(ctx context.Context, org, env, id string, r ResumeRequest) (ResumeResult, error) {
	bad := map[string]string{}
	checkPlace(bad, "location", r.Location)
	if utf8.RuneCountInString(r.Reason) > 500 {
		bad["reason"] = "must be at most 500 characters"
	}
	var mdSize int
	if len(r.Metadata) > 0 {
		b, err := json.Marshal(r.Metadata)
		if err != nil {
			bad["metadata"] = "is not encodable"
		}
		mdSize = len(b)
	}
	if len(bad) > 0 {
		return ResumeResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	if mdSize > MaxMetadataBytes { // the limit of a trip's metadata, as at the start and on update
		return ResumeResult{}, ErrMetadataTooLarge
	}
	var now time.Time
	var fromPause *float64 // null unless both places are known
	var resumeLoc *Location
	t, st, err := s.update(ctx, scope(org, env), id, func(t *store.Trip, st *state, at time.Time) error {
		now = at
		if t.Status != store.TripPaused {
			return &TransitionError{TripID: t.ID, From: t.Status, Action: "resume"}
		}
		resumeLoc, fromPause = r.Location.location(), nil
		if resumeLoc == nil {
			resumeLoc = st.PauseLoc
		}
		if resumeLoc != nil && st.PauseLoc != nil {
			km := round(geo.Distance(geo.Point{Lat: st.PauseLoc.Latitude, Lon: st.PauseLoc.Longitude}, geo.Point{Lat: resumeLoc.Latitude, Lon: resumeLoc.Longitude})/1000, 3)
			fromPause = &km
		}
		closePause(st, now)
		st.PauseLoc = nil
		t.Status = store.TripActive
		st.Seq++ // trip_resumed
		return nil
	})
	if err != nil {
		return ResumeResult{}, err
	}
	data := withReason(map[string]any{"pause_count": st.PauseCount, "total_pause_duration": float64(st.TotalPauseMS) / 1000}, r.Reason)
	if len(r.Metadata) > 0 {
		data["metadata"] = plainNumbers(r.Metadata)
	}
	s.lifecycleEvent(ctx, t, &st, "trip_resumed", now, resumeLoc, data)
	return ResumeResult{Success: true, TripID: t.ID, Status: t.Status, ResumedAt: now, TotalPauseDuration: round(float64(st.TotalPauseMS)/1000, 1),
		PauseCount: st.PauseCount, ResumeLocation: resumeLoc, DistanceFromPause: fromPause,
		Message: fmt.Sprintf("Trip resumed after %d pause(s); tracking and analytics restarted", st.PauseCount)}, nil
}

// StopRequest stops a trip.
type StopRequest struct {
	EndLocation      *PlaceIn `json:"end_location,omitempty" doc:"defaults to the last uploaded point when absent"`
	OdometerReading  *int64   `json:"odometer_reading,omitempty"`
	FuelLevelPercent *float64 `json:"fuel_level_percent,omitempty"`
	CompletionStatus *string  `json:"completion_status,omitempty" enum:"completed,cancelled,interrupted" doc:"default completed (absent or null); an empty string is no value of the set and is refused"`
}

// Stop ends a trip, finalizing its analytics.
func (s *Service) Stop(ctx context.Context, org, env, id string, r StopRequest) (StopResult, error) {
	bad := map[string]string{}
	checkPlace(bad, "end_location", r.EndLocation)
	status := store.TripCompleted
	if r.CompletionStatus != nil {
		// an empty string is a value outside the set, not the default:
		// only an absent (or null) completion_status takes completed
		switch status = *r.CompletionStatus; status {
		case store.TripCompleted, store.TripCancelled, store.TripInterrupted:
		default:
			bad["completion_status"] = enum.Refusal(store.TripCompleted, store.TripCancelled, store.TripInterrupted)
		}
	}
	if r.FuelLevelPercent != nil && (*r.FuelLevelPercent < 0 || *r.FuelLevelPercent > 100 || math.IsNaN(*r.FuelLevelPercent)) {
		bad["fuel_level_percent"] = "must be between 0 and 100"
	}
	if r.OdometerReading != nil && *r.OdometerReading < 0 {
		bad["odometer_reading"] = "must not be negative"
	}
	if len(bad) > 0 {
		return StopResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	var now time.Time
	sc := scope(org, env)
	var flushed []detect.Event
	var flushedIDs []string
	var seqBase int64
	var thr detect.Thresholds
	t, st, err := s.updateWith(ctx, sc, id, func(t *store.Trip, st *state, tr *tracker, at time.Time) ([]store.TripEvent, error) {
		now = at
		flushed, flushedIDs = nil, nil
		if t.Status != store.TripActive && t.Status != store.TripPaused {
			return nil, &TransitionError{TripID: t.ID, From: t.Status, Action: "stop"}
		}
		// close the episodes still open (a speeding or idle stretch
		// running at the end of the trip)
		if !tr.loaded {
			if err := s.load(ctx, tr, sc, t.ID, ""); err != nil {
				return nil, err
			}
		}
		var recs []store.TripEvent
		seqBase = st.Seq
		thr = tr.thr
		closing := tr.det.Flush(nil)
		if err := s.summarize(ctx, tr.det, *t, st.DeviceID); err != nil {
			return nil, err
		}
		s.placeOnRoads(closing)
		for _, e := range closing {
			st.Running.AddEvent(e)
			eid := eventID(t.ID, e)
			flushed, flushedIDs = append(flushed, e), append(flushedIDs, eid)
			st.Seq++
			data, err := json.Marshal(storedEvent{Event: e, ID: eid})
			if err != nil {
				return nil, err
			}
			recs = append(recs, store.TripEvent{ID: eid, TripID: t.ID, Type: e.Type, Time: e.Start.UTC(), Data: data})
		}
		closePause(st, now)
		st.Odometer, st.FuelLevel = r.OdometerReading, r.FuelLevelPercent
		prof, err := s.profileOf(ctx, sc, t.VehicleID) // the profile as it stands at the stop
		if err != nil {
			return nil, err
		}
		st.Profile = prof
		t.Status = status
		// the trip ends now, and never before it started or before its
		// newest point (both may lie ahead of this clock by the allowed
		// skew, cfg.MaxFuture)
		t.EndTime = now
		if t.StartTime.After(t.EndTime) {
			t.EndTime = t.StartTime
		}
		if st.Last != nil && st.Last.Time().After(t.EndTime) {
			t.EndTime = st.Last.Time()
		}
		if r.EndLocation != nil {
			t.EndLocation = placePtr(r.EndLocation.location())
		} else if st.Last != nil {
			t.EndLocation = &store.Place{Latitude: st.Last.Lat, Longitude: st.Last.Lon}
		}
		st.Seq++ // trip_completed, _cancelled or _interrupted
		return recs, nil
	})
	if err != nil {
		return StopResult{}, err
	}
	if len(flushed) > 0 {
		s.publishUpload(ctx, t, nil, flushed, flushedIDs, seqBase)
	}
	if s.roads != nil { // the road matcher decides the last points and closes their speeding
		s.roads.offer(roadJob{sc: sc, trip: t.ID, at: time.Now(), thr: thr, end: true})
	}
	a := s.analyticsOf(&st)
	typ := "trip_completed"
	if status != store.TripCompleted {
		typ = "trip_" + status
	}
	s.lifecycleEvent(ctx, t, &st, typ, now, locPtr(t.EndLocation), map[string]any{"completion_status": status, "distance_km": a.DistanceKm,
		"duration_minutes": a.DurationMinutes, "safety_score": a.SafetyScore, "eco_score": a.EcoScore})
	return StopResult{TripID: t.ID, OrganizationID: t.Org, VehicleID: t.VehicleID, DriverID: optional(t.DriverID), Status: t.Status,
		StartTime: t.StartTime, EndTime: t.EndTime, StartLocation: locPtr(t.StartLocation), EndLocation: locPtr(t.EndLocation),
		Analytics: a, OdometerKm: r.OdometerReading, FuelLevel: r.FuelLevelPercent, UpdatedAt: t.UpdatedAt,
		StartOdometerReading: st.StartOdometer, StartFuelLevelPercent: st.StartFuelLevel}, nil
}

// PlaceIn is a place as a request gives it (start_location, the
// location of a pause or a resume, end_location). Both coordinates are
// required: a missing one is refused, never taken as 0.
type PlaceIn struct {
	Latitude  *float64 `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude *float64 `json:"longitude" required:"true" doc:"-180 to 180"`
	Address   string   `json:"address,omitempty" doc:"at most 500 characters"`
}

// location is p as a Location; nil when p is. p has passed checkPlace.
func (p *PlaceIn) location() *Location {
	if p == nil {
		return nil
	}
	return &Location{Latitude: num(p.Latitude), Longitude: num(p.Longitude), Address: optional(p.Address)}
}

// checkPlace adds to bad each field of l, named field.<name>, that is
// missing or out of range; l may be nil (the place was not given).
func checkPlace(bad map[string]string, field string, l *PlaceIn) {
	if l == nil {
		return
	}
	switch {
	case l.Latitude == nil:
		bad[field+".latitude"] = "is required"
	case math.IsNaN(*l.Latitude) || *l.Latitude < -90 || *l.Latitude > 90:
		bad[field+".latitude"] = "must be between -90 and 90"
	}
	switch {
	case l.Longitude == nil:
		bad[field+".longitude"] = "is required"
	case math.IsNaN(*l.Longitude) || *l.Longitude < -180 || *l.Longitude > 180:
		bad[field+".longitude"] = "must be between -180 and 180"
	}
	if utf8.RuneCountInString(l.Address) > 500 {
		bad[field+".address"] = "must be at most 500 characters"
	}
}

// withReason adds the reason a client gave for a pause or a resume to
// its event's data; a request without one gives none, rather than an
// empty reason the client never stated.
func withReason(data map[string]any, reason string) map[string]any {
	if reason != "" {
		data["reason"] = reason
	}
	return data
}
