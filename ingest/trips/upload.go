package trips

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/store"
)

// MaxBatch is the most points one batch may carry.
const MaxBatch = 1000

// tracker is the in-memory state of one trip's upload stream.
type tracker struct {
	mu     sync.Mutex // held for the whole of an upload or transition
	loaded bool
	trip   store.Trip
	st     state
	det    *detect.Detector
	seen   map[int64]struct{}
	thr    detect.Thresholds
}

func (tr *tracker) invalidate() { tr.loaded = false; tr.seen = nil; tr.det = nil }

func (s *Service) tracker(id string) *tracker {
	if tr, ok := s.tracks.Get(id); ok {
		return tr
	}
	s.newMu.Lock()
	defer s.newMu.Unlock()
	if tr, ok := s.tracks.Get(id); ok {
		return tr
	}
	tr := &tracker{}
	s.tracks.Add(id, tr)
	return tr
}

// load fills the tracker from the store: the trip, its stored points
// (timestamps and detector state) and its thresholds. Lock held.
func (s *Service) load(ctx context.Context, tr *tracker, sc store.Scope, id, deviceID string) error {
	t, st, err := s.get(ctx, sc, id)
	if err != nil {
		return err
	}
	thr, err := s.thresholds(ctx, sc, deviceID, st.DeviceID)
	if err != nil {
		return err
	}
	pts, err := s.points(ctx, sc, id)
	if err != nil {
		return err
	}
	tr.trip, tr.st, tr.thr = t, st, thr
	tr.det = detect.New(thr)
	tr.seen = make(map[int64]struct{}, MaxBatch)
	var sink []detect.Event
	bound := st.LastTS - s.cfg.ReorderWindow.Milliseconds()
	for _, p := range pts {
		if p.TS >= bound {
			tr.seen[p.TS] = struct{}{}
		}
		sink = tr.det.Feed(detectPoint(p), sink[:0])
	}
	tr.loaded = true
	return nil
}

func (s *Service) points(ctx context.Context, sc store.Scope, id string) ([]Point, error) {
	blocks, err := s.store.ReadPoints(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	var pts []Point
	for _, b := range blocks {
		if pts, err = DecodeBlock(b.Data, pts); err != nil {
			return nil, fmt.Errorf("trips: trip %s block %d: %w", id, b.Seq, err)
		}
	}
	sortPoints(pts)
	return pts, nil
}

func (s *Service) thresholds(ctx context.Context, sc store.Scope, deviceIDs ...string) (detect.Thresholds, error) {
	def := detect.Thresholds{SpeedLimitKmh: s.cfg.DefaultSpeedLimitKmh}
	if s.thr == nil {
		return def, nil
	}
	for _, d := range deviceIDs {
		if d == "" {
			continue
		}
		t, ok, err := s.thr.DetectThresholds(ctx, sc, d)
		if err != nil {
			return def, err
		}
		if ok {
			if t.SpeedLimitKmh == 0 {
				t.SpeedLimitKmh = s.cfg.DefaultSpeedLimitKmh
			}
			return t, nil
		}
	}
	return def, nil
}

func detectPoint(p Point) detect.Point {
	d := detect.Point{Time: time.UnixMilli(p.TS), Lat: p.Lat, Lon: p.Lon}
	if !math.IsNaN(p.Speed) {
		d.Speed, d.HasSpeed = p.Speed, true
	}
	if !math.IsNaN(p.Heading) {
		d.Heading, d.HasHeading = p.Heading, true
	}
	if !math.IsNaN(p.Accuracy) {
		d.Accuracy = p.Accuracy
	}
	return d
}

// LocationIn is a location point as uploaded.
type LocationIn struct {
	Latitude       *float64 `json:"latitude" required:"true"`
	Longitude      *float64 `json:"longitude" required:"true"`
	Timestamp      string   `json:"timestamp" required:"true" doc:"ISO 8601"`
	SpeedKmh       *float64 `json:"speed_kmh,omitempty"`
	Heading        *float64 `json:"heading,omitempty"`
	AccuracyMeters *float64 `json:"accuracy_meters,omitempty"`
	AltitudeMeters *float64 `json:"altitude_meters,omitempty"`
	BatteryLevel   *float64 `json:"battery_level,omitempty"`
	NetworkType    string   `json:"network_type,omitempty" enum:",wifi,cellular,offline"`
}

// DeviceInfo describes the uploading device.
type DeviceInfo struct {
	DeviceID        string   `json:"device_id,omitempty"`
	DeviceModel     string   `json:"device_model,omitempty"`
	OSVersion       string   `json:"os_version,omitempty"`
	AppVersion      string   `json:"app_version,omitempty"`
	SignalStrength  *float64 `json:"signal_strength,omitempty"`
	SatellitesCount *float64 `json:"satellites_count,omitempty"`
}

// BatchRequest is POST /v1/locations/batch.
type BatchRequest struct {
	TripID     string       `json:"trip_id" required:"true"`
	Locations  []LocationIn `json:"locations" required:"true"`
	DeviceInfo *DeviceInfo  `json:"device_info,omitempty"`
}

// SingleRequest is POST /v1/locations/single.
type SingleRequest struct {
	TripID string `json:"trip_id" required:"true"`
	LocationIn
	DeviceInfo *DeviceInfo `json:"device_info,omitempty"`
}

func num(v *float64) float64 {
	if v == nil {
		return math.NaN()
	}
	return *v
}

// parsePoint validates one uploaded point; prefix is the field path.
func parsePoint(l *LocationIn, prefix string, bad map[string]string) (Point, bool) {
	ok := true
	fail := func(f, m string) { bad[prefix+f] = m; ok = false }
	p := Point{Speed: num(l.SpeedKmh), Heading: num(l.Heading), Accuracy: num(l.AccuracyMeters), Altitude: num(l.AltitudeMeters), Battery: num(l.BatteryLevel)}
	switch {
	case l.Latitude == nil:
		fail("latitude", "is required")
	case math.IsNaN(*l.Latitude) || *l.Latitude < -90 || *l.Latitude > 90:
		fail("latitude", "must be between -90 and 90")
	default:
		p.Lat = *l.Latitude
	}
	switch {
	case l.Longitude == nil:
		fail("longitude", "is required")
	case math.IsNaN(*l.Longitude) || *l.Longitude < -180 || *l.Longitude > 180:
		fail("longitude", "must be between -180 and 180")
	default:
		p.Lon = *l.Longitude
	}
	if l.Timestamp == "" {
		fail("timestamp", "is required")
	} else if ts, err := parseTime(l.Timestamp); err != nil {
		fail("timestamp", "must be an ISO 8601 date-time such as 2026-11-23T10:00:00Z")
	} else {
		p.TS = ts.UnixMilli()
	}
	if l.SpeedKmh != nil && (*l.SpeedKmh < 0 || *l.SpeedKmh > 500 || math.IsNaN(*l.SpeedKmh)) {
		fail("speed_kmh", "must be between 0 and 500")
	}
	if l.Heading != nil && (*l.Heading < 0 || *l.Heading > 360 || math.IsNaN(*l.Heading)) {
		fail("heading", "must be between 0 and 360")
	}
	if l.AccuracyMeters != nil && (!(*l.AccuracyMeters > 0) || math.IsInf(*l.AccuracyMeters, 0)) {
		fail("accuracy_meters", "must be positive")
	}
	if l.AltitudeMeters != nil && (math.IsNaN(*l.AltitudeMeters) || math.Abs(*l.AltitudeMeters) > 20000) {
		fail("altitude_meters", "must be between -20000 and 20000")
	}
	if l.BatteryLevel != nil && (*l.BatteryLevel < 0 || *l.BatteryLevel > 100 || math.IsNaN(*l.BatteryLevel)) {
		fail("battery_level", "must be between 0 and 100")
	}
	if l.NetworkType != "" {
		if c, known := Networks[l.NetworkType]; known {
			p.Network = c
		} else {
			fail("network_type", "must be wifi, cellular or offline")
		}
	}
	return p, ok
}

// parseTime accepts RFC 3339 with or without fractional seconds and a
// timezone offset.
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return t, err
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return t, errors.New("out of range")
	}
	return t.UTC(), nil
}

// ingestResult is what one upload did.
type ingestResult struct {
	accepted   []Point
	rejections []Rejection
	newEvents  []detect.Event
	eventIDs   []string
	st         state
	trip       store.Trip
}

// UploadBatch stores and analyses a batch of points.
func (s *Service) UploadBatch(ctx context.Context, org, env string, r *BatchRequest) (BatchResult, error) {
	start := time.Now()
	bad := map[string]string{}
	if r.TripID == "" {
		bad["trip_id"] = "is required"
	}
	if r.Locations == nil {
		bad["locations"] = "is required"
	}
	if len(bad) > 0 {
		return BatchResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	pts := make([]Point, len(r.Locations))
	for i := range r.Locations {
		pts[i], _ = parsePoint(&r.Locations[i], "locations["+strconv.Itoa(i)+"].", bad)
	}
	if len(bad) > 0 {
		return BatchResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	device := ""
	if r.DeviceInfo != nil {
		device = r.DeviceInfo.DeviceID
	}
	res, err := s.ingest(ctx, scope(org, env), r.TripID, device, pts)
	if err != nil {
		return BatchResult{}, err
	}
	out := BatchResult{TripID: r.TripID, ProcessedCount: len(res.accepted), RejectedCount: len(res.rejections), Rejections: res.rejections,
		EventsDetected: make([]DetectedEvent, 0, len(res.newEvents))}
	for i, e := range res.newEvents {
		ts := e.Start.UTC()
		out.EventsDetected = append(out.EventsDetected, DetectedEvent{EventID: res.eventIDs[i], EventType: e.Type, Timestamp: &ts,
			Severity: e.Severity, Location: &Location{Latitude: e.Lat, Longitude: e.Lon}, Metrics: metricsOf(e)})
	}
	a := s.analyticsOf(&res.st)
	out.TripAnalytics = BatchAnalytics{CurrentDistanceKm: a.DistanceKm, CurrentDurationMinutes: a.DurationMinutes, CurrentSafetyScore: a.SafetyScore,
		LocationsCount: a.LocationsCount, AvgSpeedKmh: a.AvgSpeedKmh}
	if l := res.st.Last; l != nil {
		ll := &LastLocation{Latitude: l.Lat, Longitude: l.Lon, Timestamp: l.Time()}
		if !math.IsNaN(l.Speed) {
			sp := round(l.Speed, 2)
			ll.SpeedKmh = &sp
		}
		out.TripAnalytics.LastLocation = ll
	}
	out.ProcessingTimeMS = round(float64(time.Since(start).Microseconds())/1000, 3)
	return out, nil
}

// UploadSingle stores and analyses one point.
func (s *Service) UploadSingle(ctx context.Context, org, env string, r *SingleRequest) (SingleResult, error) {
	start := time.Now()
	bad := map[string]string{}
	if r.TripID == "" {
		bad["trip_id"] = "is required"
	}
	p, _ := parsePoint(&r.LocationIn, "", bad)
	if r.DeviceInfo != nil {
		if v := r.DeviceInfo.SignalStrength; v != nil && (math.IsNaN(*v) || *v < -200 || *v > 100) {
			bad["device_info.signal_strength"] = "must be a dBm value between -200 and 0 or a percentage 0-100"
		}
		if v := r.DeviceInfo.SatellitesCount; v != nil && (math.IsNaN(*v) || *v < 0 || *v > 200) {
			bad["device_info.satellites_count"] = "must be between 0 and 200"
		}
	}
	if len(bad) > 0 {
		return SingleResult{}, &ValidationError{Code: "invalid_location", Fields: bad}
	}
	device := ""
	if r.DeviceInfo != nil {
		device = r.DeviceInfo.DeviceID
	}
	prevLast := (*Point)(nil)
	res, err := s.ingestWith(ctx, scope(org, env), r.TripID, device, []Point{p}, func(st *state) {
		if st.Last != nil {
			c := *st.Last
			prevLast = &c
		}
	})
	if err != nil {
		return SingleResult{}, err
	}
	out := SingleResult{TripID: r.TripID, LocationID: fmt.Sprintf("loc_%s_%d", r.TripID, p.TS), ProcessedAt: time.Now().UTC(),
		Accepted: len(res.accepted) == 1, EventsDetected: make([]DetectedEvent, 0, len(res.newEvents))}
	if len(res.rejections) > 0 {
		out.RejectionReason = res.rejections[0].Reason
	}
	for i, e := range res.newEvents {
		c := e.Confidence
		out.EventsDetected = append(out.EventsDetected, DetectedEvent{EventID: res.eventIDs[i], EventType: e.Type, Severity: e.Severity,
			Confidence: &c, Metrics: metricsOf(e)})
	}
	a := s.analyticsOf(&res.st)
	out.TripAnalytics = SingleAnalytics{DistanceKm: a.DistanceKm, DurationMinutes: a.DurationMinutes, AvgSpeedKmh: a.AvgSpeedKmh,
		CurrentSafetyScore: a.SafetyScore, LocationsCount: a.LocationsCount, MaxSpeedKmh: a.MaxSpeedKmh, IdleTimeMinutes: a.IdleTimeMinutes}
	out.QualityAssessment = assessQuality(p, r.DeviceInfo, prevLast, res.st.Last)
	out.ProcessingTimeMS = round(float64(time.Since(start).Microseconds())/1000, 3)
	return out, nil
}

func (s *Service) ingest(ctx context.Context, sc store.Scope, id, device string, pts []Point) (ingestResult, error) {
	return s.ingestWith(ctx, sc, id, device, pts, nil)
}

// ingestWith runs an upload under the trip's tracker; before sees the
// state before the points are applied.
func (s *Service) ingestWith(ctx context.Context, sc store.Scope, id, device string, pts []Point, before func(*state)) (ingestResult, error) {
	tr := s.tracker(id)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for attempt := 0; ; attempt++ {
		if !tr.loaded || tr.trip.Org != sc.Org || tr.trip.Env != sc.Env {
			tr.invalidate()
			if err := s.load(ctx, tr, sc, id, device); err != nil {
				return ingestResult{}, err
			}
		}
		if before != nil && attempt == 0 {
			before(&tr.st)
		}
		res, err := s.apply(ctx, tr, sc, device, pts)
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			tr.invalidate()
			continue
		}
		if err != nil {
			tr.invalidate()
			return res, err
		}
		return res, nil
	}
}

// apply classifies, analyses and stores points; tracker lock held.
func (s *Service) apply(ctx context.Context, tr *tracker, sc store.Scope, device string, in []Point) (ingestResult, error) {
	t := tr.trip
	if t.Status != store.TripActive {
		return ingestResult{}, &TransitionError{TripID: t.ID, From: t.Status, Action: "upload locations to"}
	}
	now := s.now()
	maxTS := now.Add(s.cfg.MaxFuture).UnixMilli()
	startTS := t.StartTime.UnixMilli()
	st := tr.st
	lateBound := st.LastTS - s.cfg.ReorderWindow.Milliseconds()
	var res ingestResult
	batchSeen := make(map[int64]struct{}, len(in))
	idx := make([]int, 0, len(in))
	late := false
	for i, p := range in {
		reason := ""
		_, dup := tr.seen[p.TS]
		_, dupIn := batchSeen[p.TS]
		switch {
		case dup || dupIn:
			reason = "duplicate_timestamp"
		case p.TS < startTS:
			reason = "before_trip_start"
		case p.TS > maxTS:
			reason = "future_timestamp"
		case st.LastTS > 0 && p.TS < lateBound:
			reason = "too_late"
		case st.PausedAt == 0 && inPause(st.Pauses, p.TS):
			reason = "during_pause"
		}
		if reason != "" {
			res.rejections = append(res.rejections, Rejection{Index: i, Reason: reason})
			continue
		}
		batchSeen[p.TS] = struct{}{}
		if p.TS < st.LastTS {
			late = true
		}
		idx = append(idx, i)
	}
	acc := make([]Point, 0, len(idx))
	for _, i := range idx {
		acc = append(acc, in[i])
	}
	sortPoints(acc)
	res.accepted = acc
	if len(acc) == 0 {
		res.st, res.trip = st, t
		return res, nil
	}
	var events []detect.Event
	det := tr.det
	var replaceEvents bool
	if late {
		// a point arrived behind the newest stored one: analyse the whole
		// trip again in timestamp order
		all, err := s.points(ctx, sc, t.ID)
		if err != nil {
			return res, err
		}
		all = append(all, acc...)
		sortPoints(all)
		det = detect.New(tr.thr)
		st.Running = analytics.Running{}
		st.Harsh, st.Events = HarshEvents{}, 0
		pauses := st.Pauses
		pi := 0
		for _, p := range all {
			for pi < len(pauses) && pauses[pi][1] <= p.TS {
				st.Running.Pause(time.UnixMilli(pauses[pi][0]), time.UnixMilli(pauses[pi][1]))
				pi++
			}
			st.Running.Add(detectPoint(p))
			events = det.Feed(detectPoint(p), events)
		}
		for _, e := range events {
			st.Running.AddEvent(e)
		}
		st.FirstTS, st.LastTS = all[0].TS, all[len(all)-1].TS
		last := all[len(all)-1]
		st.Last = &last
		replaceEvents = true
	} else {
		for _, p := range acc {
			dp := detectPoint(p)
			st.Running.Add(dp)
			events = det.Feed(dp, events)
		}
		for _, e := range events {
			st.Running.AddEvent(e)
		}
		if st.FirstTS == 0 {
			st.FirstTS = acc[0].TS
		}
		st.LastTS = acc[len(acc)-1].TS
		last := acc[len(acc)-1]
		st.Last = &last
	}
	if device != "" {
		st.DeviceID = device
	}
	// event records; IDs are deterministic so a replay keeps them
	var known map[string]bool
	if replaceEvents {
		prev, err := s.store.TripEvents(ctx, sc, t.ID)
		if err != nil {
			return res, err
		}
		known = make(map[string]bool, len(prev))
		for _, e := range prev {
			known[e.ID] = true
		}
	}
	recs := make([]store.TripEvent, 0, len(events))
	for _, e := range events {
		eid := eventID(t.ID, e)
		data, err := json.Marshal(storedEvent{Event: e, ID: eid})
		if err != nil {
			return res, err
		}
		recs = append(recs, store.TripEvent{ID: eid, TripID: t.ID, Type: e.Type, Time: e.Start.UTC(), Data: data})
		if !known[eid] {
			res.newEvents = append(res.newEvents, e)
			res.eventIDs = append(res.eventIDs, eid)
		}
	}
	st.Blocks++
	block := store.PointBlock{TripID: t.ID, Seq: st.Blocks, FirstTS: acc[0].TS, LastTS: acc[len(acc)-1].TS, Count: len(acc), Data: EncodeBlock(acc)}
	prev := t.Version
	t.Version = prev + 1
	t.UpdatedAt = now.UTC().Truncate(time.Millisecond)
	a := s.analyticsOf(&st)
	t.Totals = totalsOf(a)
	seqBase := st.Seq
	st.Seq += int64(len(res.newEvents))
	var err error
	if t.State, err = json.Marshal(st); err != nil {
		return res, err
	}
	if err := s.store.AppendPoints(ctx, t, prev, []store.PointBlock{block}, recs, replaceEvents); err != nil {
		return res, err
	}
	// durable: commit to memory
	for _, p := range acc {
		tr.seen[p.TS] = struct{}{}
	}
	// timestamps older than the reorder window are rejected as too_late
	// before the duplicate check matters: forget them, so memory per trip
	// is bounded by the window, not the trip's length
	if len(tr.seen) > 4096 {
		bound := st.LastTS - s.cfg.ReorderWindow.Milliseconds()
		for ts := range tr.seen {
			if ts < bound {
				delete(tr.seen, ts)
			}
		}
	}
	tr.trip, tr.st, tr.det = t, st, det
	res.st, res.trip = st, t
	s.publishUpload(ctx, t, acc, res.newEvents, res.eventIDs, seqBase)
	return res, nil
}

func inPause(pauses [][2]int64, ts int64) bool {
	for _, p := range pauses {
		if ts > p[0] && ts < p[1] {
			return true
		}
	}
	return false
}

// storedEvent is the JSON of a stored trip event.
type storedEvent struct {
	ID string `json:"event_id"`
	detect.Event
}

func eventID(tripID string, e detect.Event) string {
	h := sha1.Sum([]byte(tripID + "|" + e.Type + "|" + strconv.FormatInt(e.Start.UnixMilli(), 10)))
	return "evt_" + hex.EncodeToString(h[:10])
}

func metricsOf(e detect.Event) map[string]any {
	m := e.Metrics
	out := map[string]any{"duration_seconds": round(m.DurationSeconds, 1)}
	switch e.Type {
	case detect.TypeSpeeding:
		out["speed_limit_kmh"] = round(m.SpeedLimitKmh, 1)
		out["actual_speed_kmh"] = round(m.ActualSpeedKmh, 1)
		out["excess_speed_kmh"] = round(m.ExcessSpeedKmh, 1)
	case detect.TypeIdle:
	default:
		out["acceleration_g"] = round(m.AccelerationG, 3)
		out["speed_change_kmh"] = round(m.SpeedChangeKmh, 1)
	}
	return out
}

var severityOf = map[string]string{detect.SeverityModerate: "medium", detect.SeverityHigh: "high", detect.SeverityCritical: "critical"}

// publishUpload publishes accepted points and new safety events. The
// points are already durable; a bus failure is logged, not returned.
func (s *Service) publishUpload(ctx context.Context, t store.Trip, pts []Point, events []detect.Event, ids []string, seqBase int64) {
	if s.pub == nil {
		return
	}
	now := time.Now().UTC()
	msgs := make([]hub.Message, 0, 1+len(events))
	key := []byte(t.VehicleID)
	eps := make([]event.Point, len(pts))
	for i, p := range pts {
		ep := &eps[i]
		*ep = event.Point{TripID: t.ID, VehicleID: t.VehicleID, DriverID: t.DriverID, Org: t.Org, Env: t.Env, Timestamp: p.Time(),
			Latitude: p.Lat, Longitude: p.Lon, SpeedKmh: nanPtr(p.Speed), Heading: nanPtr(p.Heading), Accuracy: nanPtr(p.Accuracy)}
	}
	if len(eps) > 0 {
		if b, err := event.Marshal(&event.Envelope{Org: t.Org, Env: t.Env, Kind: event.KindPoints, Points: eps, IngestedAt: now}); err == nil {
			msgs = append(msgs, hub.Message{Topic: s.cfg.LocationsTopic, Key: key, Value: b})
		}
	}
	for i, e := range events {
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
		ev := &event.Event{EventID: ids[i], EventType: e.Type, Category: cat, Timestamp: e.Start.UTC(), Severity: sev, Priority: pri,
			Source:   event.Source{VehicleID: t.VehicleID, DriverID: t.DriverID, TripID: t.ID},
			Location: &event.Location{Latitude: e.Lat, Longitude: e.Lon}, EventData: data,
			Metadata: event.Metadata{CorrelationID: t.ID, SequenceNumber: seqBase + int64(i) + 1, ProcessingTime: now.Format(time.RFC3339Nano), SourceSystem: "fleethub.trips"}}
		if cat == event.CategorySafety {
			ev.AutomaticActions = map[string]any{"alert_sent": sev != "medium", "incident_logged": true, "supervisor_notified": sev == "critical"}
		}
		b, err := event.Marshal(&event.Envelope{Org: t.Org, Env: t.Env, Kind: event.KindEvent, Event: ev, IngestedAt: now})
		if err == nil {
			msgs = append(msgs, hub.Message{Topic: s.cfg.EventsTopic, Key: key, Value: b})
		}
	}
	if err := s.pub.Publish(ctx, msgs...); err != nil {
		s.log.Warn("publishing upload to the bus failed", "trip_id", t.ID, "error", err)
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
		Metadata: event.Metadata{CorrelationID: t.ID, SequenceNumber: st.Seq, ProcessingTime: time.Now().UTC().Format(time.RFC3339Nano), SourceSystem: "fleethub.trips"}}
	if loc != nil {
		ev.Location = &event.Location{Latitude: loc.Latitude, Longitude: loc.Longitude, Address: loc.Address}
	}
	b, err := event.Marshal(&event.Envelope{Org: t.Org, Env: t.Env, Kind: event.KindEvent, Event: ev, IngestedAt: time.Now().UTC()})
	if err != nil {
		return
	}
	if err := s.pub.Publish(ctx, hub.Message{Topic: s.cfg.EventsTopic, Key: []byte(t.VehicleID), Value: b}); err != nil {
		s.log.Warn("publishing trip event failed", "trip_id", t.ID, "event", typ, "error", err)
	}
}

// assessQuality rates one point.
func assessQuality(p Point, d *DeviceInfo, prev, last *Point) Quality {
	q := Quality{AccuracyRating: "unknown", SignalQuality: "unknown", GPSFixType: "3d", HDOP: 0}
	if !math.IsNaN(p.Accuracy) {
		switch a := p.Accuracy; {
		case a <= 5:
			q.AccuracyRating = "excellent"
		case a <= 15:
			q.AccuracyRating = "good"
		case a <= 50:
			q.AccuracyRating = "fair"
		default:
			q.AccuracyRating = "poor"
		}
		// horizontal accuracy ≈ HDOP × user range error (≈5 m)
		q.HDOP = round(p.Accuracy/5, 1)
	}
	sats := -1.0
	if d != nil && d.SatellitesCount != nil {
		sats = *d.SatellitesCount
	}
	switch {
	case sats >= 0 && sats < 3:
		q.GPSFixType = "none"
	case sats >= 3 && sats < 4:
		q.GPSFixType = "2d"
	case sats < 0 && math.IsNaN(p.Altitude):
		q.GPSFixType = "2d"
	}
	if d != nil && d.SignalStrength != nil {
		v := *d.SignalStrength
		if v <= 0 { // dBm
			switch {
			case v >= -70:
				q.SignalQuality = "excellent"
			case v >= -85:
				q.SignalQuality = "good"
			case v >= -100:
				q.SignalQuality = "fair"
			default:
				q.SignalQuality = "poor"
			}
		} else {
			switch {
			case v >= 75:
				q.SignalQuality = "excellent"
			case v >= 50:
				q.SignalQuality = "good"
			case v >= 25:
				q.SignalQuality = "fair"
			default:
				q.SignalQuality = "poor"
			}
		}
	} else if sats >= 0 {
		switch {
		case sats >= 10:
			q.SignalQuality = "excellent"
		case sats >= 7:
			q.SignalQuality = "good"
		case sats >= 4:
			q.SignalQuality = "fair"
		default:
			q.SignalQuality = "poor"
		}
	}
	// deviation: distance of the point from the path the previous point
	// was heading along (0 without a previous point or heading)
	if prev != nil && last != nil && last.TS == p.TS && !math.IsNaN(prev.Heading) {
		q.DeviationFromRoute = round(geo.CrossTrack(prev.pos(), prev.Heading, p.pos()), 1)
	}
	return q
}
