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
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/store"
)

// MaxBatch is the most points one batch may carry.
const MaxBatch = 1000

// LocationIn is a location point as uploaded.
type LocationIn struct {
	Latitude       *float64 `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude      *float64 `json:"longitude" required:"true" doc:"-180 to 180"`
	Timestamp      string   `json:"timestamp" required:"true" doc:"ISO 8601 date-time with offset (RFC 3339), years 1970 to 9999"`
	SpeedKmh       *float64 `json:"speed_kmh,omitempty" doc:"0 to 500"`
	Heading        *float64 `json:"heading,omitempty" doc:"0 to 360, 0 is North"`
	AccuracyMeters *float64 `json:"accuracy_meters,omitempty" doc:"positive"`
	AltitudeMeters *float64 `json:"altitude_meters,omitempty" doc:"-20000 to 20000"`
	BatteryLevel   *float64 `json:"battery_level,omitempty" doc:"0 to 100"`
	NetworkType    *string  `json:"network_type,omitempty" enum:"wifi,cellular,offline" doc:"leave it out when unknown; an empty string is no value of the set and is refused"`
}

// DeviceRecord is what a trip keeps of the device that uploads its
// points: the latest model, OS and app versions it reported.
type DeviceRecord struct {
	DeviceID    string `json:"device_id,omitempty"`
	DeviceModel string `json:"device_model,omitempty"`
	OSVersion   string `json:"os_version,omitempty"`
	AppVersion  string `json:"app_version,omitempty"`
}

// keep returns before extended to record d's description on the trip's
// state (the trip keeps the latest); d may be nil.
func (d *DeviceInfo) keep(before func(*state)) func(*state) {
	if d == nil || d.DeviceModel == "" && d.OSVersion == "" && d.AppVersion == "" {
		return before
	}
	rec := &DeviceRecord{DeviceID: d.DeviceID, DeviceModel: d.DeviceModel, OSVersion: d.OSVersion, AppVersion: d.AppVersion}
	return func(st *state) {
		st.Device = rec
		if before != nil {
			before(st)
		}
	}
}

// checkDevice checks the free-text fields of a device description.
func checkDevice(bad map[string]string, d *DeviceInfo) {
	if d == nil {
		return
	}
	for f, v := range map[string]string{"device_info.device_model": d.DeviceModel, "device_info.os_version": d.OSVersion,
		"device_info.app_version": d.AppVersion} {
		if utf8.RuneCountInString(v) > 100 {
			bad[f] = "must be at most 100 characters"
		}
	}
	// the id of PUT /v1/devices/{device_id}/settings, whose settings it picks
	switch {
	case utf8.RuneCountInString(d.DeviceID) > maxDeviceID:
		bad["device_info.device_id"] = "must be at most 200 characters"
	case jsonpath.HasControl(d.DeviceID):
		bad["device_info.device_id"] = jsonpath.ControlRefusal
	}
}

// maxDeviceID is the longest device_id an upload names, in characters:
// that of a device's settings ({device_id} of /v1/devices).
const maxDeviceID = 200

// checkTripID checks the trip_id of an upload: required, and an id
// without a control character.
func checkTripID(bad map[string]string, id string) {
	switch {
	case id == "":
		bad["trip_id"] = "is required"
	case jsonpath.HasControl(id):
		bad["trip_id"] = jsonpath.ControlRefusal
	}
}

// DeviceInfo describes the device of a single upload.
type DeviceInfo struct {
	DeviceID        string   `json:"device_id,omitempty" doc:"at most 200 characters (a device's id in /v1/devices/{device_id}/settings), no control character"`
	DeviceModel     string   `json:"device_model,omitempty" doc:"at most 100 characters"`
	OSVersion       string   `json:"os_version,omitempty" doc:"at most 100 characters"`
	AppVersion      string   `json:"app_version,omitempty" doc:"at most 100 characters"`
	SignalStrength  *float64 `json:"signal_strength,omitempty" doc:"dBm from -200 to 0, or a percentage from 0 (exclusive) to 100"`
	SatellitesCount *float64 `json:"satellites_count,omitempty" doc:"a whole number from 0 to 200"`
}

// BatchDeviceInfo describes the device of a batch upload: the fields the
// interface gives it. A batch has no quality assessment, which the
// signal strength and satellites of a single upload feed, so it takes
// neither.
type BatchDeviceInfo struct {
	DeviceID    string `json:"device_id,omitempty" doc:"at most 200 characters (a device's id in /v1/devices/{device_id}/settings), no control character"`
	DeviceModel string `json:"device_model,omitempty" doc:"at most 100 characters"`
	OSVersion   string `json:"os_version,omitempty" doc:"at most 100 characters"`
	AppVersion  string `json:"app_version,omitempty" doc:"at most 100 characters"`
}

// info is d as a DeviceInfo; nil when d is.
func (d *BatchDeviceInfo) info() *DeviceInfo {
	if d == nil {
		return nil
	}
	return &DeviceInfo{DeviceID: d.DeviceID, DeviceModel: d.DeviceModel, OSVersion: d.OSVersion, AppVersion: d.AppVersion}
}

// BatchRequest is POST /v1/locations/batch.
type BatchRequest struct {
	TripID     string           `json:"trip_id" required:"true" doc:"an active trip; no control character"`
	Locations  []LocationIn     `json:"locations" required:"true"`
	DeviceInfo *BatchDeviceInfo `json:"device_info,omitempty"`
}

// SingleRequest is POST /v1/locations/single.
type SingleRequest struct {
	TripID string `json:"trip_id" required:"true" doc:"an active trip; no control character"`
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
	if l.NetworkType != nil { // "" is no network: refused as any value outside the set
		if c, known := Networks[*l.NetworkType]; known {
			p.Network = c
		} else {
			fail("network_type", enum.Refusal("wifi", "cellular", "offline"))
		}
	}
	return p, ok
}

// parseTime accepts RFC 3339 with or without fractional seconds and a
// timezone offset.
func parseTime(s string) (time.Time, error) {
	t, err := apitime.Parse(s)
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
	checkTripID(bad, r.TripID)
	if len(r.Locations) == 0 {
		bad["locations"] = "is required: 1 to 1000 points"
	}
	if len(bad) > 0 {
		return BatchResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	pts := make([]Point, len(r.Locations))
	for i := range r.Locations {
		pts[i], _ = parsePoint(&r.Locations[i], "locations["+strconv.Itoa(i)+"].", bad)
	}
	dev := r.DeviceInfo.info()
	checkDevice(bad, dev)
	if len(bad) > 0 {
		return BatchResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	device := ""
	if dev != nil {
		device = dev.DeviceID
	}
	res, err := s.ingestWith(ctx, scope(org, env), r.TripID, device, pts, dev.keep(nil))
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
		if !math.IsNaN(l.Battery) {
			b := l.Battery
			ll.BatteryLevel = &b
		}
		for name, n := range Networks {
			if n == l.Network && n != 0 {
				ll.NetworkType = name
			}
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
	checkTripID(bad, r.TripID)
	p, _ := parsePoint(&r.LocationIn, "", bad)
	checkDevice(bad, r.DeviceInfo)
	if r.DeviceInfo != nil {
		if v := r.DeviceInfo.SignalStrength; v != nil && (math.IsNaN(*v) || *v < -200 || *v > 100) {
			bad["device_info.signal_strength"] = "must be a dBm value between -200 and 0 or a percentage 0-100"
		}
		if v := r.DeviceInfo.SatellitesCount; v != nil && (math.IsNaN(*v) || *v < 0 || *v > 200 || *v != math.Trunc(*v)) {
			bad["device_info.satellites_count"] = "must be a whole number from 0 to 200"
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
	res, err := s.ingestWith(ctx, scope(org, env), r.TripID, device, []Point{p}, r.DeviceInfo.keep(func(st *state) {
		if st.Last != nil {
			c := *st.Last
			prevLast = &c
		}
	}))
	if err != nil {
		return SingleResult{}, err
	}
	out := SingleResult{TripID: r.TripID, ProcessedAt: apitime.Of(s.now()), Accepted: len(res.accepted) == 1,
		EventsDetected: make([]DetectedEvent, 0, len(res.newEvents))}
	if out.Accepted {
		id := fmt.Sprintf("loc_%s_%d", r.TripID, p.TS)
		out.LocationID = &id
	}
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
		} else if err := s.refreshThresholds(ctx, tr, sc, device); err != nil {
			return ingestResult{}, err
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
	st := tr.st
	var res ingestResult
	acc, late := s.admit(tr, now, in, &res)
	res.accepted = acc
	if len(acc) == 0 {
		res.st, res.trip = st, t
		return res, nil
	}
	var events []detect.Event
	det := tr.det
	var all []Point // the whole trip, when replayed
	if late {
		// a point arrived behind the newest stored one: analyse the whole
		// trip again in timestamp order
		var err error
		if det, events, all, err = s.replay(ctx, tr, sc, &st, acc); err != nil {
			return res, err
		}
		if events, err = s.keepRoadEvents(ctx, sc, t.ID, &st, events); err != nil {
			return res, err
		}
	} else {
		events = advance(det, &st, acc)
	}
	s.placeOnRoads(events)
	if device != "" {
		st.DeviceID = device
	}
	if err := s.summarize(ctx, det, t, st.DeviceID); err != nil {
		return res, err
	}
	recs, err := s.eventRecords(ctx, sc, t.ID, events, late, &res)
	if err != nil {
		return res, err
	}
	st.Blocks++
	block := store.PointBlock{TripID: t.ID, Seq: st.Blocks, FirstTS: acc[0].TS, LastTS: acc[len(acc)-1].TS, Count: len(acc), Data: EncodeBlock(acc)}
	prev := t.Version
	t.Version = prev + 1
	t.UpdatedAt = apitime.Of(now)
	a := s.analyticsOf(&st)
	t.Totals = totalsOf(a)
	seqBase := st.Seq
	st.Seq += int64(len(res.newEvents))
	tr.withRoads(&st)
	if t.State, err = encodeState(&st); err != nil {
		return res, err
	}
	if err := s.store.AppendPoints(ctx, t, prev, []store.PointBlock{block}, recs, late); err != nil {
		if errors.Is(err, store.ErrUnavailable) {
			s.storeFailing.Store(true)
		}
		return res, err
	}
	s.storeFailing.Store(false)
	// durable: commit to memory
	s.remember(tr, acc, st.LastTS)
	tr.trip, tr.st, tr.det = t, st, det
	res.st, res.trip = st, t
	s.publishUpload(ctx, t, acc, res.newEvents, res.eventIDs, seqBase)
	s.handOver(tr, sc, acc, all)
	return res, nil
}

// admit sorts an upload's points into accepted ones, returned in
// timestamp order, and rejections, added to res; late is true when an
// accepted point is older than the newest stored one. Tracker lock held.
func (s *Service) admit(tr *tracker, now time.Time, in []Point, res *ingestResult) (acc []Point, late bool) {
	st := &tr.st
	maxTS := now.Add(s.cfg.MaxFuture).UnixMilli()
	startTS := tr.trip.StartTime.UnixMilli()
	lateBound := st.LastTS - s.cfg.ReorderWindow.Milliseconds()
	batchSeen := make(map[int64]struct{}, len(in))
	idx := make([]int, 0, len(in))
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
	acc = make([]Point, 0, len(idx))
	for _, i := range idx {
		acc = append(acc, in[i])
	}
	sortPoints(acc)
	return acc, late
}

// advance feeds points newer than every stored one to the detector and
// the running analytics of st, and returns the events they complete.
func advance(det *detect.Detector, st *state, acc []Point) []detect.Event {
	var events []detect.Event
	prev := st.LastTS
	for _, p := range acc {
		if pausedBetween(st.Pauses, prev, p.TS) {
			events = det.Break(events)
		}
		prev = p.TS
		dp := detectPoint(p)
		st.Running.Add(dp)
		events = det.Feed(dp, events)
	}
	for _, e := range events {
		st.Running.AddEvent(e)
	}
	st.LastTS = acc[len(acc)-1].TS
	last := acc[len(acc)-1]
	st.Last = &last
	return events
}

// replay analyses the stored points and acc again from the start of the
// trip, in timestamp order, with a fresh detector and running analytics
// in st; it returns the detector, every event of the trip and all its
// points in order.
func (s *Service) replay(ctx context.Context, tr *tracker, sc store.Scope, st *state, acc []Point) (*detect.Detector, []detect.Event, []Point, error) {
	all, err := s.points(ctx, sc, tr.trip.ID)
	if err != nil {
		return nil, nil, nil, err
	}
	all = append(all, acc...)
	sortPoints(all)
	det := detect.New(s.uploadThresholds(tr.thr))
	st.Running = analytics.Running{}
	var events []detect.Event
	pauses := st.Pauses
	pi := 0
	for _, p := range all {
		crossed := false
		for pi < len(pauses) && pauses[pi][1] <= p.TS {
			st.Running.Pause(time.UnixMilli(pauses[pi][0]), time.UnixMilli(pauses[pi][1]))
			pi++
			crossed = true
		}
		if crossed { // no episode runs across a pause
			events = det.Break(events)
		}
		st.Running.Add(detectPoint(p))
		events = det.Feed(detectPoint(p), events)
	}
	for _, e := range events {
		st.Running.AddEvent(e)
	}
	st.LastTS = all[len(all)-1].TS
	last := all[len(all)-1]
	st.Last = &last
	return det, events, all, nil
}

// eventRecords makes the stored records of events. IDs are deterministic
// so a replay keeps them: after a replay only the events not stored
// before are new. New events and their IDs are added to res.
func (s *Service) eventRecords(ctx context.Context, sc store.Scope, tripID string, events []detect.Event, replayed bool, res *ingestResult) ([]store.TripEvent, error) {
	var known map[string]bool
	if replayed {
		prev, err := s.store.TripEvents(ctx, sc, tripID)
		if err != nil {
			return nil, err
		}
		known = make(map[string]bool, len(prev))
		for _, e := range prev {
			known[e.ID] = true
		}
	}
	recs := make([]store.TripEvent, 0, len(events))
	for _, e := range events {
		eid := eventID(tripID, e)
		data, err := json.Marshal(storedEvent{Event: e, ID: eid})
		if err != nil {
			return nil, err
		}
		recs = append(recs, store.TripEvent{ID: eid, TripID: tripID, Type: e.Type, Time: e.Start.UTC(), Data: data})
		if !known[eid] {
			res.newEvents = append(res.newEvents, e)
			res.eventIDs = append(res.eventIDs, eid)
		}
	}
	return recs, nil
}

// remember records the stored timestamps of acc for the duplicate check.
// Timestamps older than the reorder window are rejected as too_late
// before the duplicate check matters: they are forgotten, so memory per
// trip is bounded by the window, not the trip's length.
func (s *Service) remember(tr *tracker, acc []Point, lastTS int64) {
	for _, p := range acc {
		tr.seen[p.TS] = struct{}{}
	}
	if len(tr.seen) > 4096 {
		bound := lastTS - s.cfg.ReorderWindow.Milliseconds()
		for ts := range tr.seen {
			if ts < bound {
				delete(tr.seen, ts)
			}
		}
	}
}

// pausedBetween reports whether a closed pause of pauses began between
// the point at prev (0: none) and the one at ts: the detector's episodes
// end there, as the trip's time and distance do.
func pausedBetween(pauses [][2]int64, prev, ts int64) bool {
	if prev == 0 {
		return false
	}
	for _, p := range pauses {
		if p[0] >= prev && p[0] < ts {
			return true
		}
	}
	return false
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

// storedEvents reads a trip's detected events.
func (s *Service) storedEvents(ctx context.Context, sc store.Scope, id string) ([]storedEvent, error) {
	recs, err := s.store.TripEvents(ctx, sc, id)
	if err != nil {
		return nil, err
	}
	out := make([]storedEvent, 0, len(recs))
	for _, r := range recs {
		var e storedEvent
		if err := json.Unmarshal(r.Data, &e); err != nil {
			return nil, fmt.Errorf("trips: event %s: %w", r.ID, err)
		}
		out = append(out, e)
	}
	return out, nil
}
