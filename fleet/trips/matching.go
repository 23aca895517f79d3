package trips

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/store"
	lru "github.com/hashicorp/golang-lru/v2"
)

// DefaultActiveTrips is the default of Config.Trackers and
// Config.MatchTrips: the trips in progress whose state stays in memory.
// A trip's upload state holds at most 4,096 recent timestamps, its road
// trace a window of at most 20 points: about 27 KB for both together
// on a trip a few minutes old (docs/trips.md).
const DefaultActiveTrips = 16_384

// Defaults of the road matcher beside the upload path.
const (
	defaultMatchQueue = 50_000          // points waiting per shard before more are judged without a road
	roadsSaveEvery    = 5 * time.Second // a trip's road counts are written at most this often without an event
)

// roadJob is what an upload, or a stop, hands the road matcher: the
// points it stored, in timestamp order.
type roadJob struct {
	sc     store.Scope
	trip   string
	pts    []Point
	at     time.Time // when the points were durably stored
	thr    detect.Thresholds
	none   bool       // over the queue's bound: judged without a road
	replay bool       // a late point came: pts is the whole trip, matched again from its start
	end    bool       // the trip stopped: decide the rest and close its speeding episode
	pauses [][2]int64 // the trip's closed pauses (a copy): no speeding episode runs across one
}

// roadShard is one worker's queue and the road state of its trips.
type roadShard struct {
	mu     sync.Mutex // guards jobs, points and busy
	jobs   []roadJob
	points int           // points waiting in jobs not judged without a road
	busy   bool          // the worker is judging a job it took
	wake   chan struct{} // capacity 1: work was queued
	// tracks is the worker goroutine's alone: the trips it judged
	// lately, the least recently judged forgotten past Config.MatchTrips
	// and put in forgotten until the worker closes them
	tracks    *lru.Cache[string, *roadTrack]
	forgotten []forgottenTrack
}

// forgottenTrack is a trip the worker's tracks let go of to make room.
type forgottenTrack struct {
	trip string
	rt   *roadTrack
}

// roadTrack is a trip's road matching: its trace on the roads, the
// points waiting for their road to be final, and the detector that
// judges speeding against the road.
type roadTrack struct {
	sc      store.Scope
	trace   *mapmatch.Trace
	pending []pendingPoint // the points in the trace's window, oldest first
	det     *detect.Detector
	thr     detect.Thresholds
	lastTS  int64      // the newest point handed to the trace
	fedTS   int64      // the newest point fed to det
	pauses  [][2]int64 // the trip's closed pauses, as of its latest upload
	stats   RoadStats
	dirty   bool // stats changed since savedAt
	savedAt time.Time
	// the last point decided, and since when (unix ms) the vehicle has
	// stood, 0 while it moves: for the speeds observed on the roads
	prev       Point
	hasPrev    bool
	stillSince int64
	observed   int64 // the newest point whose speed was counted
}

type pendingPoint struct {
	p  Point
	at time.Time
}

// RoadStats counts a trip's points by what the road matcher made of
// them.
type RoadStats struct {
	Matched   int `json:"matched" source:"computed" doc:"points on a road, judged by its limit"`
	Unmatched int `json:"unmatched" source:"computed" doc:"points with no road within their radius, judged by the configured limit"`
	Unjudged  int `json:"unjudged" source:"measured" doc:"points that came while the matcher's queue was full, judged without a road (match none): a reading of the service's load, 0 while it keeps up"`
}

// roadMatcher runs map matching beside the upload path: uploads hand it
// their stored points without waiting, and its workers match them and
// judge speeding against the matched roads.
type roadMatcher struct {
	m      *mapmatch.Matcher
	bound  int
	shards []*roadShard
	met    *roadMetrics
}

func newRoadMatcher(m *mapmatch.Matcher, shards, bound, trips int, met *roadMetrics) (*roadMatcher, error) {
	r := &roadMatcher{m: m, bound: bound, met: met, shards: make([]*roadShard, shards)}
	for i := range r.shards {
		sh := &roadShard{wake: make(chan struct{}, 1)}
		c, err := lru.NewWithEvict(max(trips/shards, 16), func(trip string, rt *roadTrack) {
			sh.forgotten = append(sh.forgotten, forgottenTrack{trip: trip, rt: rt})
		})
		if err != nil {
			return nil, fmt.Errorf("trips: road tracks: %w", err)
		}
		sh.tracks = c
		r.shards[i] = sh
	}
	return r, nil
}

func (r *roadMatcher) shard(trip string) *roadShard {
	h := fnv.New32a()
	h.Write([]byte(trip))
	return r.shards[h.Sum32()%uint32(len(r.shards))]
}

// offer queues a job and never blocks: past the shard's bound the
// points are queued to be judged without a road.
func (r *roadMatcher) offer(j roadJob) {
	sh := r.shard(j.trip)
	sh.mu.Lock()
	if !j.end && !j.replay && sh.points+len(j.pts) > r.bound {
		j.none = true
		r.met.overflow.Add(float64(len(j.pts)))
	}
	if !j.none {
		sh.points += len(j.pts)
		r.met.queued.Add(float64(len(j.pts)))
	}
	sh.jobs = append(sh.jobs, j)
	sh.mu.Unlock()
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

// take is the shard's oldest job; false when none waits.
func (sh *roadShard) take(met *roadMetrics) (roadJob, bool) {
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.busy = false // the previous job, if any, is done
	if len(sh.jobs) == 0 {
		return roadJob{}, false
	}
	j := sh.jobs[0]
	sh.busy = true
	sh.jobs[0] = roadJob{}
	sh.jobs = sh.jobs[1:]
	if !j.none {
		sh.points -= len(j.pts)
		met.queued.Sub(float64(len(j.pts)))
	}
	return j, true
}

// pending is the number of jobs waiting or being judged in every shard.
func (r *roadMatcher) pending() int {
	n := 0
	for _, sh := range r.shards {
		sh.mu.Lock()
		n += len(sh.jobs)
		if sh.busy {
			n++
		}
		sh.mu.Unlock()
	}
	return n
}

// RunRoads runs the road matcher's workers until ctx ends; without a
// road network it returns at once. Jobs still queued then are left:
// their points are stored, their speeding is not judged.
func (s *Service) RunRoads(ctx context.Context) error {
	if s.roads == nil {
		return nil
	}
	var wg sync.WaitGroup
	for _, sh := range s.roads.shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.runShard(ctx, sh)
		}()
	}
	wg.Wait()
	return nil
}

func (s *Service) runShard(ctx context.Context, sh *roadShard) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.wake:
		}
		for ctx.Err() == nil {
			j, ok := sh.take(s.roads.met)
			if !ok {
				break
			}
			s.judgeRoads(ctx, sh, j)
		}
	}
}

// RoadsIdle reports whether the road matcher has no job waiting or
// being judged (or there is no road matcher).
func (s *Service) RoadsIdle() bool { return s.roads == nil || s.roads.pending() == 0 }

// roadThresholds are the thresholds of the detector that judges
// speeding only; uploadThresholds those of the upload's, which judges
// the rest when a road matcher judges speeding.
func roadThresholds(t detect.Thresholds) detect.Thresholds {
	t.HarshDisabled, t.IdleDisabled = true, true
	return t
}

func (s *Service) uploadThresholds(t detect.Thresholds) detect.Thresholds {
	if s.roads != nil {
		t.SpeedingDisabled = true
	}
	return t
}
