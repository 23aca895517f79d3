// Package digest sends the daily speeding summaries of the devices whose
// speeding alerts are a daily summary (alert_frequency daily_summary):
// the trips record each speeding episode of such a device (Record)
// instead of raising it as an event, and after a UTC day ends one
// speeding_daily_summary event per device that sped that day goes on the
// bus, like any event the trips raise.
//
// Once per cluster: every node runs the loop (Run) on the shared store.
// A summary (a device's, of a day) is claimed in the store before it is
// published and marked sent, with the episodes it took, once the bus
// accepted it. A claim not marked sent within Lease (the node stopped
// between the two) is taken again by any node, which publishes the
// summary again under the same event_id (summaryID): at least once on
// the bus, once on a stream with deduplication.
//
// Late episodes: an episode recorded after its day's summary was sent
// (a very late upload) goes into the summary of the day the loop found
// it on, sent after that day ends; that summary counts it in
// late_episodes, and its times show its own day.
//
// Retention: the episodes a summary took and the claims of sent
// summaries are deleted once their day is Retention old (Run prunes every
// PruneEvery); a claim that a late episode still waits for stays until
// the episode moved on. An episode of a day already past Retention when
// it is recorded goes straight into today's summary, as a late one: its
// day's claim may be gone, and a second summary of that day is never
// sent. An episode recorded again after its row was pruned (a retried
// upload of points older than Retention) is taken as a new one.
//
// A Summaries is safe for concurrent use; it holds no state but its
// configuration.
package digest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// EventType is the type of the summary event.
const EventType = "speeding_daily_summary"

// Defaults of Config.
const (
	DefaultPoll  = time.Minute
	DefaultGrace = 5 * time.Minute
	DefaultLease = 2 * time.Minute
	DefaultBatch = 500
	// DefaultRetention outlasts the 365 days a device may hold its points
	// (offline_storage_days), so an episode recorded again by a late
	// upload is still known.
	DefaultRetention  = 400 * 24 * time.Hour
	DefaultPruneEvery = time.Hour
	pruneBatch        = 1000
)

// Publisher puts events on the bus (a *publish.Publisher): all of a call
// or none and an error.
type Publisher interface {
	Publish(ctx context.Context, org, env string, evs ...*event.Event) error
}

// Config of the summaries; zero fields take the defaults.
type Config struct {
	// Node owns the claims this node takes (the node's id).
	Node string
	// Poll is how often Run looks for summaries to send.
	Poll time.Duration
	// Grace is how long after midnight UTC a day's summaries wait, so
	// that the uploads of its last points are in.
	Grace time.Duration
	// Lease is how long a claim stays this node's before another node
	// may take it again.
	Lease time.Duration
	// Batch is how many summaries one look lists at a time.
	Batch int
	// Retention is how long the rows of a day's summary are kept after
	// that day; Run deletes older ones every PruneEvery.
	Retention  time.Duration
	PruneEvery time.Duration
	// Ticks, when set, tells Run when to look again after its first
	// look, instead of every Poll (a test says when). Run takes a tick
	// only between looks.
	Ticks <-chan time.Time
	Now   func() time.Time
	Log   *slog.Logger
}

// Summaries records speeding episodes and sends their daily summaries.
type Summaries struct {
	cfg Config
	st  store.SpeedingSummaries
	pub Publisher
}

// New makes the summaries over st, publishing with pub.
func New(cfg Config, st store.SpeedingSummaries, pub Publisher) *Summaries {
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.Batch <= 0 {
		cfg.Batch = DefaultBatch
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.PruneEvery <= 0 {
		cfg.PruneEvery = DefaultPruneEvery
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	return &Summaries{cfg: cfg, st: st, pub: pub}
}

// Day is the UTC day of t, YYYY-MM-DD.
func Day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Record stores speeding episodes for their days' summaries (each one's
// Day is set from its start); an episode recorded before is left alone.
// An episode of a day past Retention goes into today's summary.
func (s *Summaries) Record(ctx context.Context, eps []store.SpeedingEpisode) error {
	now := s.cfg.Now()
	horizon, today := s.horizon(now), Day(now)
	for i := range eps {
		eps[i].Day = Day(eps[i].Start)
		eps[i].SummaryDay = ""
		if eps[i].Day < horizon {
			eps[i].SummaryDay = today
		}
	}
	return s.st.RecordSpeedingEpisodes(ctx, eps)
}

// horizon is the first day whose rows are kept at now.
func (s *Summaries) horizon(now time.Time) string { return Day(now.Add(-s.cfg.Retention)) }

// Prune deletes the rows of the summaries sent for days past Retention
// (by the configured clock) and answers how many it deleted.
func (s *Summaries) Prune(ctx context.Context) (int64, error) {
	before := s.horizon(s.cfg.Now())
	var total int64
	for {
		n, err := s.st.PruneSpeedingSummaries(ctx, before, pruneBatch)
		total += n
		if err != nil {
			return total, fmt.Errorf("digest: prune the summaries of the days before %s: %w", before, err)
		}
		if n < pruneBatch {
			return total, nil
		}
	}
}

// Run sends the summaries due, looking every Poll, and prunes the rows
// past Retention at its first look and every PruneEvery after, until ctx
// ends; it answers nil then.
func (s *Summaries) Run(ctx context.Context) error {
	ticks := s.cfg.Ticks
	if ticks == nil {
		t := time.NewTicker(s.cfg.Poll)
		defer t.Stop()
		ticks = t.C
	}
	var pruned time.Time
	for {
		if _, err := s.Tick(ctx); err != nil && ctx.Err() == nil {
			// the summaries stay unsent: the next look tries again
			s.cfg.Log.Warn("digest: daily speeding summaries", "error", err)
		}
		if now := s.cfg.Now(); pruned.IsZero() || now.Sub(pruned) >= s.cfg.PruneEvery {
			pruned = now
			if _, err := s.Prune(ctx); err != nil && ctx.Err() == nil {
				// the rows stay: the next prune tries again
				s.cfg.Log.Warn("digest: daily speeding summaries", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticks:
		}
	}
}

// Tick sends every summary due now (by the configured clock): each
// device's of each day that ended Grace ago or more with episodes no
// summary took. Episodes found for a day whose summary was sent move to
// today's summary. It answers how many summaries it sent.
func (s *Summaries) Tick(ctx context.Context) (int, error) {
	sent := 0
	for {
		now := s.cfg.Now().UTC()
		keys, err := s.st.PendingSpeedingSummaries(ctx, Day(now.Add(-s.cfg.Grace)), s.cfg.Batch)
		if err != nil {
			return sent, err
		}
		progress := false
		for _, k := range keys {
			done, err := s.send(ctx, k, now)
			if err != nil {
				return sent, err
			}
			if done {
				sent++
				progress = true
			}
		}
		if len(keys) < s.cfg.Batch || !progress {
			return sent, nil
		}
	}
}

// send claims, publishes and marks sent one summary; it reports whether
// it published it. A summary another node holds is left to it.
func (s *Summaries) send(ctx context.Context, k store.SpeedingSummaryKey, now time.Time) (bool, error) {
	claimed, wasSent, err := s.st.ClaimSpeedingSummary(ctx, k, s.cfg.Node, now, now.Add(s.cfg.Lease))
	if err != nil {
		return false, err
	}
	if wasSent {
		n, err := s.st.MoveLateSpeedingEpisodes(ctx, k, Day(now))
		if n > 0 {
			s.cfg.Log.Info("digest: speeding episodes recorded after their day's summary was sent go into today's",
				"org", k.Org, "env", k.Env, "device_id", k.DeviceID, "day", k.Day, "episodes", n)
		}
		return false, err
	}
	if !claimed {
		return false, nil
	}
	eps, err := s.st.SpeedingSummaryEpisodes(ctx, k)
	if err != nil {
		return false, err
	}
	ids := make([]string, len(eps))
	for i, e := range eps {
		ids[i] = e.ID
	}
	published := len(eps) > 0
	if published {
		ev, err := Event(k, eps, now)
		if err != nil {
			return false, err
		}
		if err := s.pub.Publish(ctx, k.Org, k.Env, ev); err != nil {
			return false, err // the claim lapses, or this node takes it again at the next look
		}
	}
	err = s.st.FinishSpeedingSummary(ctx, k, s.cfg.Node, ids, s.cfg.Now().UTC())
	if errors.Is(err, store.ErrConflict) {
		// the lease ran out and another node took the summary over: it
		// publishes it again under the same event_id
		err = nil
	}
	return published, err
}

// SummaryID is the event_id of a device's summary of a day: the same
// whichever node sends it and however often.
func SummaryID(k store.SpeedingSummaryKey) string {
	h := sha256.Sum256([]byte(k.Org + "\x00" + k.Env + "\x00" + k.DeviceID + "\x00" + k.Day))
	return "evt_" + hex.EncodeToString(h[:10])
}

// severity maps the detector's speeding severity onto the event's, as a
// speeding event's.
var severity = map[string]string{detect.SeverityModerate: "medium", detect.SeverityHigh: "high", detect.SeverityCritical: "critical"}

// riskBand is the collision risk of a detector severity, as a speeding
// event's.
var riskBand = map[string]string{detect.SeverityModerate: "low", detect.SeverityHigh: "medium", detect.SeverityCritical: "high"}

// Event is the summary of k's episodes eps (at least one, earliest
// first), made at now. A key whose day is not a date is an error.
func Event(k store.SpeedingSummaryKey, eps []store.SpeedingEpisode, now time.Time) (*event.Event, error) {
	total, maxSpeed, maxOver := 0.0, 0.0, math.Inf(-1)
	late := 0
	trips := []string{}
	seen := map[string]bool{}
	driver := eps[0].DriverID
	for _, e := range eps {
		total += e.DurationSeconds
		maxSpeed = math.Max(maxSpeed, e.MaxSpeedKmh)
		maxOver = math.Max(maxOver, e.MaxSpeedKmh-e.LimitKmh)
		if !seen[e.TripID] {
			seen[e.TripID] = true
			trips = append(trips, e.TripID)
		}
		if e.DriverID != driver {
			driver = ""
		}
		if e.Day != k.Day {
			late++
		}
	}
	last := eps[len(eps)-1]
	day, err := time.Parse(time.DateOnly, k.Day)
	if err != nil {
		return nil, fmt.Errorf("digest: summary of %s: day: %w", k.DeviceID, err)
	}
	band := detect.SpeedingSeverity(maxOver)
	return &event.Event{EventID: SummaryID(k), EventType: EventType, Category: event.CategorySafety, Timestamp: day.Add(24 * time.Hour),
		Severity: severity[band], Priority: "normal",
		Source: event.Source{VehicleID: last.VehicleID, DriverID: driver},
		EventData: map[string]any{
			"date": k.Day, "device_id": k.DeviceID, "episodes": len(eps), "late_episodes": late,
			"total_duration_seconds": round1(total), "max_speed_kmh": round1(maxSpeed), "max_over_limit_kmh": round1(maxOver),
			"trips":            trips,
			"first_episode_at": apitime.Format(eps[0].Start), "last_episode_at": apitime.Format(last.Start),
		},
		Metadata: event.Metadata{CorrelationID: k.DeviceID, ProcessingTime: apitime.Format(now), SourceSystem: "fleethub.digest"},
		// the hub acts on no summary by itself, as on no detected event
		AutomaticActions: map[string]any{"alert_sent": false, "incident_logged": false, "supervisor_notified": false},
		RiskAssessment: map[string]any{"collision_risk": riskBand[band], "passenger_impact": nil,
			"recommended_actions": []string{"review the speeding with the driver", "keep to the speed limit"}},
	}, nil
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
