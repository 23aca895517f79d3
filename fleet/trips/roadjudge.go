package trips

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/store"
)

// judgeRoads matches a job's points on its trip's trace, feeds the
// points whose road became final to the trip's speeding detector and
// stores the events it raised. The shard's worker only.
func (s *Service) judgeRoads(ctx context.Context, sh *roadShard, j roadJob) {
	if !j.end && !j.replay {
		wait := time.Since(j.at).Seconds()
		for range j.pts {
			s.roads.met.wait.Observe(wait)
		}
	}
	rt, _ := sh.tracks.Get(j.trip)
	if rt == nil && j.end {
		return // nothing of the trip was judged here (a restart): nothing to close
	}
	if rt == nil || j.replay {
		var observed int64
		if rt != nil {
			observed = rt.observed // a replay counts no speed twice
		}
		rt = &roadTrack{sc: j.sc, trace: s.roads.m.Trace(), det: detect.New(roadThresholds(j.thr)), thr: j.thr, savedAt: time.Now(), observed: observed}
		sh.tracks.Add(j.trip, rt)
		s.closeForgotten(ctx, sh)
	} else if j.thr != rt.thr {
		rt.thr = j.thr
		rt.det.SetThresholds(roadThresholds(j.thr))
	}
	if j.pauses != nil {
		rt.pauses = j.pauses
	}
	var evs []detect.Event
	for _, p := range j.pts {
		switch {
		case p.TS <= rt.lastTS && !j.replay:
			// not after what the trace has (an upload with an older
			// point replays the trip instead): nothing to judge
		case j.none:
			evs = s.decided(rt, rt.trace.Flush(), evs) // the trace is cut here
			rt.trace = s.roads.m.Trace()
			evs = rt.feed(detectPoint(p), p.TS, evs)
			rt.stats.Unjudged++
			rt.lastTS, rt.dirty = p.TS, true
			s.roads.met.lag.Observe(time.Since(j.at).Seconds())
		default:
			rt.pending = append(rt.pending, pendingPoint{p: p, at: j.at})
			evs = s.decided(rt, rt.trace.Add(matchPoint(p)), evs)
			rt.lastTS = p.TS
		}
	}
	if j.end {
		evs = s.decided(rt, rt.trace.Flush(), evs)
		evs = rt.det.Flush(evs)
		sh.tracks.Remove(j.trip)
		sh.forgotten = sh.forgotten[:0] // the one removed, closed here
	}
	held := rt.det.Summarized(nil)
	if len(evs) == 0 && len(held) == 0 && !j.end && !j.replay {
		if rt.dirty && s.carryRoads(j.trip, rt.stats) {
			rt.dirty, rt.savedAt = false, time.Now()
		}
		if !(rt.dirty && time.Since(rt.savedAt) >= roadsSaveEvery) {
			return
		}
	}
	if err := s.storeRoadEvents(ctx, j, rt.stats, evs, held); err != nil {
		s.log.Warn("storing the events judged on the roads failed", "trip_id", j.trip, "events", len(evs), "error", err)
		return
	}
	rt.dirty, rt.savedAt = false, time.Now()
}

// carryRoads hands a trip's road counts to its upload state in memory,
// for the trip's next write (an upload's, a pause's or the stop's) to
// store with everything else: a write of their own for each trip every
// few seconds was, at 10,000 trips, as many writes as the uploads made.
// It reports false when the trip is not in memory; the worker writes
// the counts itself then, at most every roadsSaveEvery.
func (s *Service) carryRoads(trip string, stats RoadStats) bool {
	tr, ok := s.tracks.Peek(trip)
	if !ok {
		return false
	}
	tr.roads.Store(&stats)
	return true
}

// closeForgotten decides the points in the window of the trips the
// shard let go of to make room, closes their speeding episodes and
// stores what that judged, as a stop would.
func (s *Service) closeForgotten(ctx context.Context, sh *roadShard) {
	for len(sh.forgotten) > 0 {
		f := sh.forgotten[0]
		sh.forgotten = sh.forgotten[1:]
		evs := s.decided(f.rt, f.rt.trace.Flush(), nil)
		evs = f.rt.det.Flush(evs)
		held := f.rt.det.Summarized(nil)
		if len(evs) == 0 && len(held) == 0 && !f.rt.dirty {
			continue
		}
		if err := s.storeRoadEvents(ctx, roadJob{sc: f.rt.sc, trip: f.trip}, f.rt.stats, evs, held); err != nil {
			s.log.Warn("storing the events judged on the roads failed", "trip_id", f.trip, "events", len(evs), "error", err)
		}
	}
	sh.forgotten = sh.forgotten[:0]
}

// decided feeds the points whose matches ms became final, on their
// roads, to the speeding detector and counts them.
func (s *Service) decided(rt *roadTrack, ms []mapmatch.Match, evs []detect.Event) []detect.Event {
	for _, m := range ms {
		if len(rt.pending) == 0 {
			break
		}
		pp := rt.pending[0]
		rt.pending = rt.pending[1:]
		r := road{}
		if m.Matched {
			r = road{limitKmh: m.LimitKmh, class: m.Class.String()}
			rt.stats.Matched++
		} else {
			rt.stats.Unmatched++
		}
		rt.dirty = true
		s.observeSpeed(rt, pp.p, m)
		evs = rt.feed(withRoad(pp.p, r), pp.p.TS, evs)
		s.roads.met.lag.Observe(time.Since(pp.at).Seconds())
	}
	return evs
}

// feed gives the speeding detector the point p taken at ts, after
// closing its episode when the trip was paused since the point fed
// before, as the upload's detector does.
func (rt *roadTrack) feed(p detect.Point, ts int64, evs []detect.Event) []detect.Event {
	if pausedBetween(rt.pauses, rt.fedTS, ts) {
		evs = rt.det.Break(evs)
	}
	rt.fedTS = ts
	return rt.det.Feed(p, evs)
}

// storeRoadEvents writes the speeding events judged on the roads and the
// trip's road counts, under the trip's tracker like an upload, and
// publishes the events new to the store; the episodes held for the
// device's daily summary are recorded first (record). A replayed trip's
// events already stored are not counted again.
func (s *Service) storeRoadEvents(ctx context.Context, j roadJob, stats RoadStats, evs, held []detect.Event) error {
	tr := s.tracker(j.trip)
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for attempt := 0; ; attempt++ {
		var t store.Trip
		var st state
		if tr.loaded && tr.trip.Org == j.sc.Org && tr.trip.Env == j.sc.Env {
			t, st = tr.trip, tr.st
		} else {
			var err error
			if t, st, err = s.get(ctx, j.sc, j.trip); err != nil {
				return err
			}
		}
		if err := s.record(ctx, t, st.DeviceID, held); err != nil {
			return err
		}
		known := map[string]bool{}
		if j.replay {
			prev, err := s.store.TripEvents(ctx, j.sc, j.trip)
			if err != nil {
				return err
			}
			for _, e := range prev {
				known[e.ID] = true
			}
		}
		var recs []store.TripEvent
		var added []detect.Event
		var ids []string
		for _, e := range evs {
			eid := eventID(t.ID, e)
			if known[eid] {
				continue
			}
			data, err := json.Marshal(storedEvent{Event: e, ID: eid})
			if err != nil {
				return fmt.Errorf("trips: event %s: %w", eid, err)
			}
			recs = append(recs, store.TripEvent{ID: eid, TripID: t.ID, Type: e.Type, Time: e.Start.UTC(), Data: data})
			added, ids = append(added, e), append(ids, eid)
			st.Running.AddEvent(e)
		}
		st.Roads = &stats
		tr.roads.Store(&stats) // the newest: no later write may put older ones back
		seqBase := st.Seq
		st.Seq += int64(len(added))
		prevVersion := t.Version
		t.Version = prevVersion + 1
		t.UpdatedAt = apitime.Of(s.now())
		t.Totals = totalsOf(s.analyticsOf(&st))
		var err error
		if t.State, err = encodeState(&st); err != nil {
			return err
		}
		err = s.store.AppendPoints(ctx, t, prevVersion, nil, recs, false)
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			tr.invalidate()
			continue
		}
		if err != nil {
			return err
		}
		if tr.loaded {
			tr.trip, tr.st = t, st
		}
		if len(added) > 0 {
			s.publishUpload(ctx, t, nil, added, ids, seqBase)
		}
		return nil
	}
}

// handOver gives the road matcher the points an upload stored; all is
// the whole trip when the upload replayed it. Tracker lock held.
func (s *Service) handOver(tr *tracker, sc store.Scope, acc, all []Point) {
	if s.roads == nil {
		return
	}
	j := roadJob{sc: sc, trip: tr.trip.ID, pts: acc, at: time.Now(), thr: tr.thr, pauses: slices.Clone(tr.st.Pauses)}
	if all != nil {
		j.pts, j.replay = all, true
	}
	s.roads.offer(j)
}

// Speeds observed on the roads: a point's own speed, else the distance
// from the point decided before it over the time between them (within
// speedGap); a vehicle standing (under stillKmh) counts while it has
// stood for at most stillFor (a light, a queue), not longer (a delivery,
// a parking).
const (
	speedGap = 30_000  // ms
	stillFor = 120_000 // ms
	stillKmh = 3
)

// observeSpeed counts, when the service keeps the speeds observed, the
// speed point p was driven at on the road m placed it on.
func (s *Service) observeSpeed(rt *roadTrack, p Point, m mapmatch.Match) {
	if s.speeds == nil {
		return
	}
	kmh := p.Speed
	if math.IsNaN(kmh) || kmh < 0 {
		kmh = math.NaN()
		if rt.hasPrev && p.TS > rt.prev.TS && p.TS-rt.prev.TS <= speedGap {
			kmh = geo.Distance(rt.prev.pos(), p.pos()) / (float64(p.TS-rt.prev.TS) / 1000) * 3.6
		}
	}
	rt.prev, rt.hasPrev = p, true
	if math.IsNaN(kmh) {
		return
	}
	if kmh < stillKmh {
		if rt.stillSince == 0 {
			rt.stillSince = p.TS
		}
		if p.TS-rt.stillSince > stillFor {
			return
		}
	} else {
		rt.stillSince = 0
	}
	if m.Matched && p.TS > rt.observed {
		s.speeds.Observe(rt.sc.Org, m.Edge, m.Backward, p.Time(), kmh)
		rt.observed = p.TS
	}
}
