package trips

import (
	"context"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/store"
)

// tracker is the in-memory state of one trip's upload stream.
type tracker struct {
	mu     sync.Mutex // held for the whole of an upload or transition
	loaded bool
	trip   store.Trip
	st     state
	det    *detect.Detector
	seen   map[int64]struct{}
	thr    detect.Thresholds
	thrAt  time.Time // when thr was read: it is read again after ThresholdsRefresh
	// roads is the road matcher's latest counts of the trip, set by its
	// worker without the lock, for the trip's next write to store (the
	// counts only grow: the latest is the one to keep)
	roads atomic.Pointer[RoadStats]
}

// withRoads puts the road matcher's latest counts into st, a state about
// to be written. Lock held.
func (tr *tracker) withRoads(st *state) {
	if r := tr.roads.Load(); r != nil {
		st.Roads = r
	}
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
	tr.trip, tr.st, tr.thr, tr.thrAt = t, st, thr, s.now()
	tr.det = detect.New(s.uploadThresholds(thr))
	bound := st.LastTS - s.cfg.ReorderWindow.Milliseconds()
	recent := 0
	for _, p := range pts {
		if p.TS >= bound {
			recent++
		}
	}
	// sized for what it holds: sized for a whole batch, every trip in
	// memory held tens of kilobytes of empty map
	tr.seen = make(map[int64]struct{}, recent)
	var sink []detect.Event
	prev := int64(0)
	for _, p := range pts {
		if p.TS >= bound {
			tr.seen[p.TS] = struct{}{}
		}
		if pausedBetween(st.Pauses, prev, p.TS) {
			sink = tr.det.Break(sink[:0])
		}
		prev = p.TS
		sink = tr.det.Feed(detectPoint(p), sink[:0])
	}
	tr.det.Summarized(nil) // recorded when their points were uploaded
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

// refreshThresholds reads a loaded trip's thresholds again once
// ThresholdsRefresh has passed since they were read, so that new device
// settings reach a trip in progress: its detector judges the next points
// by them. Lock held.
func (s *Service) refreshThresholds(ctx context.Context, tr *tracker, sc store.Scope, deviceID string) error {
	now := s.now()
	if now.Sub(tr.thrAt) < s.cfg.ThresholdsRefresh {
		return nil
	}
	thr, err := s.thresholds(ctx, sc, deviceID, tr.st.DeviceID)
	if err != nil {
		return err
	}
	tr.thrAt = now
	if thr != tr.thr {
		tr.thr = thr
		tr.det.SetThresholds(s.uploadThresholds(thr))
	}
	return nil
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
