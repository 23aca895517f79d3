package store

import (
	"context"
	"time"
)

// SpeedingEpisode is a speeding episode of a device whose speeding
// alerts are a daily summary: recorded instead of raised as an event,
// and sent in the summary of SummaryDay.
type SpeedingEpisode struct {
	Org, Env string
	// ID is the id its event would have had (the trip's and its start's):
	// recording it again leaves the one stored alone.
	ID              string
	DeviceID        string
	VehicleID       string
	DriverID        string // "" when the trip has none
	TripID          string
	Start           time.Time
	DurationSeconds float64
	MaxSpeedKmh     float64
	LimitKmh        float64 // the limit it was judged by
	// Day is the UTC day of Start (YYYY-MM-DD). SummaryDay is the day
	// whose summary takes it: Day, or a later one for an episode
	// recorded after Day's summary was sent.
	Day        string
	SummaryDay string
	SentAt     time.Time // when a summary took it; zero before
}

// SpeedingSummaryKey names one daily summary: a device's, of a day.
type SpeedingSummaryKey struct {
	Org, Env, DeviceID string
	Day                string // YYYY-MM-DD, UTC
}

// SpeedingSummaries keeps the episodes of the daily speeding summaries
// and the claims that send each summary once: a summary is claimed by
// one node for a lease, sent, and marked sent; a claim not marked sent
// when its lease ends may be taken again.
type SpeedingSummaries interface {
	// RecordSpeedingEpisodes stores episodes, each for the summary of
	// its SummaryDay, or of its Day when SummaryDay is empty; an episode
	// already stored (same Org, Env and ID) is left alone.
	RecordSpeedingEpisodes(ctx context.Context, eps []SpeedingEpisode) error
	// PendingSpeedingSummaries answers at most limit summaries with
	// episodes no summary took, of days before before (YYYY-MM-DD),
	// earliest first.
	PendingSpeedingSummaries(ctx context.Context, before string, limit int) ([]SpeedingSummaryKey, error)
	// ClaimSpeedingSummary claims k for owner until until: a summary
	// never claimed, or one not sent whose claim ended at now or before
	// or that owner holds (a retry after a failed publish).
	// claimed is false when another holds a live claim or it was sent;
	// sent tells the latter.
	ClaimSpeedingSummary(ctx context.Context, k SpeedingSummaryKey, owner string, now, until time.Time) (claimed, sent bool, err error)
	// SpeedingSummaryEpisodes answers the episodes of k's summary that
	// no summary took, earliest first.
	SpeedingSummaryEpisodes(ctx context.Context, k SpeedingSummaryKey) ([]SpeedingEpisode, error)
	// FinishSpeedingSummary marks k sent at at, with the episodes ids, if
	// owner still holds its claim; ErrConflict when it does not.
	FinishSpeedingSummary(ctx context.Context, k SpeedingSummaryKey, owner string, ids []string, at time.Time) error
	// MoveLateSpeedingEpisodes gives the episodes of k that no summary
	// took, when k was sent, to the summary of day to; it answers how
	// many moved.
	MoveLateSpeedingEpisodes(ctx context.Context, k SpeedingSummaryKey, to string) (int, error)
	// PruneSpeedingSummaries deletes at most limit episodes that a
	// summary of a day before before (YYYY-MM-DD) took, and at most limit
	// claims of sent summaries of days before before for which no episode
	// waits (a late episode keeps its day's claim until it moved on); it
	// answers how many rows it deleted. Episodes no summary took and
	// claims not sent are kept.
	PruneSpeedingSummaries(ctx context.Context, before string, limit int) (int64, error)
}
