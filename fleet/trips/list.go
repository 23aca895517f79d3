package trips

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
)

// ListQuery is GET /v1/trips after parsing.
type ListQuery struct {
	OrganizationID   string
	VehicleID        string
	DriverID         string
	Status           string
	StartDate        *time.Time
	EndDate          *time.Time
	Limit            int
	Cursor           string
	Sort             string
	Order            string
	IncludeAnalytics bool
}

// Pagination of a listing.
type Pagination struct {
	TotalCount int     `json:"total_count"`
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor"`
	PrevCursor *string `json:"prev_cursor"`
}

// FiltersApplied echoes the listing's filters.
type FiltersApplied struct {
	OrganizationID   string     `json:"organization_id"`
	VehicleID        *string    `json:"vehicle_id"`
	DriverID         *string    `json:"driver_id"`
	Status           *string    `json:"status"`
	StartDate        *time.Time `json:"start_date"`
	EndDate          *time.Time `json:"end_date"`
	Sort             string     `json:"sort"`
	Order            string     `json:"order"`
	IncludeAnalytics bool       `json:"include_analytics"`
}

// SummaryStats aggregates every trip matching the filters.
type SummaryStats struct {
	TotalDistanceKm    float64  `json:"total_distance_km" source:"computed"`
	TotalDurationHours float64  `json:"total_duration_hours" source:"computed"`
	AvgSafetyScore     *float64 `json:"avg_safety_score" source:"computed" doc:"the mean safety_score of the matching trips with at least one location (a trip without any has no score yet); null when none has"`
	AvgEcoScore        *float64 `json:"avg_eco_score" source:"computed" doc:"the mean eco_score of the matching trips with at least one location; null when none has"`
	ActiveTrips        int      `json:"active_trips" source:"computed"`
	CompletedTrips     int      `json:"completed_trips" source:"computed"`
}

// ListResult is the answer of GET /v1/trips.
type ListResult struct {
	Trips          []ListItem     `json:"trips"`
	Pagination     Pagination     `json:"pagination"`
	FiltersApplied FiltersApplied `json:"filters_applied"`
	SummaryStats   SummaryStats   `json:"summary_stats"`
}

// ErrBadCursor is a cursor that this listing did not issue.
var ErrBadCursor = errors.New("trips: invalid cursor")

// cursor is a position in the listing: a trip's sort value and id, read
// forwards (the next page) or Back (the previous one), the position itself
// included when In (the page next to an empty one). It is sealed with the
// hash of the listing's filters, so that it continues only the listing it
// came from.
type cursor struct {
	V    float64 `json:"v"`
	ID   string  `json:"i"`
	Back bool    `json:"b,omitempty"`
	In   bool    `json:"n,omitempty"`
}

func (c cursor) encode(filters string) (*string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return nil, fmt.Errorf("trips: list cursor: %w", err)
	}
	s := pagecursor.Seal(string(b), filters)
	return &s, nil
}

func decodeCursor(s, filters string) (cursor, error) {
	var c cursor
	pos, ok := pagecursor.Open(s, filters)
	if !ok || json.Unmarshal([]byte(pos), &c) != nil || c.ID == "" {
		return c, ErrBadCursor
	}
	return c, nil
}

// filtersHash is the hash of a listing's filters its cursors carry:
// everything that selects or orders the trips (not limit, nor
// include_analytics, which only shape a page).
func filtersHash(org string, q ListQuery, desc bool) string {
	date := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	return pagecursor.Hash("trips", org, q.OrganizationID, q.VehicleID, q.DriverID, q.Status, date(q.StartDate), date(q.EndDate), q.Sort, strconv.FormatBool(desc))
}

func sortValue(t store.Trip, key string) float64 {
	switch key {
	case "end_time":
		return float64(msOrZero(t.EndTime))
	case "distance":
		return t.Totals.DistanceKm
	case "duration":
		return t.Totals.DurationMinutes
	case "safety_score":
		if t.Totals.LocationsCount == 0 {
			return store.NoScore
		}
		return t.Totals.SafetyScore
	default:
		return float64(t.StartTime.UnixMilli())
	}
}

func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// List lists trips of the caller's scope.
func (s *Service) List(ctx context.Context, org, env string, q ListQuery) (ListResult, error) {
	f := store.TripFilter{Scope: scope(org, env), VehicleID: q.VehicleID, DriverID: q.DriverID, Sort: q.Sort, Desc: q.Order != "asc", Limit: q.Limit + 1}
	if q.Status != "" {
		f.Statuses = []string{q.Status}
	}
	// both ends are in the range, as the incident listing's are; the
	// store's bounds are strict, and its times in milliseconds
	if q.StartDate != nil {
		f.StartAfter = q.StartDate.Add(-time.Millisecond)
	}
	if q.EndDate != nil {
		f.StartBefore = q.EndDate.Add(time.Millisecond)
	}
	res := ListResult{Trips: []ListItem{}, Pagination: Pagination{Limit: q.Limit},
		FiltersApplied: FiltersApplied{OrganizationID: org, StartDate: q.StartDate, EndDate: q.EndDate, Sort: q.Sort, Order: q.Order, IncludeAnalytics: q.IncludeAnalytics}}
	if q.VehicleID != "" {
		res.FiltersApplied.VehicleID = &q.VehicleID
	}
	if q.DriverID != "" {
		res.FiltersApplied.DriverID = &q.DriverID
	}
	if q.Status != "" {
		res.FiltersApplied.Status = &q.Status
	}
	if q.OrganizationID != "" && q.OrganizationID != org {
		// another organization's trips are indistinguishable from none
		res.FiltersApplied.OrganizationID = q.OrganizationID
		return res, nil
	}
	back := false
	hash := filtersHash(org, q, f.Desc)
	var at cursor
	if q.Cursor != "" {
		c, err := decodeCursor(q.Cursor, hash)
		if err != nil {
			return res, ErrBadCursor
		}
		at = c
		ks := &store.Keyset{Value: c.V, ID: c.ID, Inclusive: c.In}
		if c.Back {
			f.Before, back = ks, true
		} else {
			f.After = ks
		}
	}
	trips, err := s.store.ListTrips(ctx, f)
	if err != nil {
		return res, err
	}
	more := len(trips) > q.Limit
	if more {
		if back {
			trips = trips[1:]
		} else {
			trips = trips[:q.Limit]
		}
	}
	for _, t := range trips {
		res.Trips = append(res.Trips, s.listItem(t, q.IncludeAnalytics))
	}
	if len(trips) > 0 {
		first, last := trips[0], trips[len(trips)-1]
		hasNext := more || back
		hasPrev := (q.Cursor != "" && !back) || (back && more)
		var err error
		if hasNext {
			if res.Pagination.NextCursor, err = (cursor{V: sortValue(last, q.Sort), ID: last.ID}).encode(hash); err != nil {
				return res, err
			}
		}
		if hasPrev {
			if res.Pagination.PrevCursor, err = (cursor{V: sortValue(first, q.Sort), ID: first.ID, Back: true}).encode(hash); err != nil {
				return res, err
			}
		}
		res.Pagination.HasMore = hasNext
	} else if q.Cursor != "" {
		// an empty page after a cursor (the trips past it have gone):
		// the way back (or on) is the cursor's own position, taken in
		if back {
			res.Pagination.NextCursor, err = (cursor{V: at.V, ID: at.ID, In: true}).encode(hash)
		} else {
			res.Pagination.PrevCursor, err = (cursor{V: at.V, ID: at.ID, Back: true, In: true}).encode(hash)
		}
		if err != nil {
			return res, err
		}
		res.Pagination.HasMore = back
	}
	sf := f
	sf.After, sf.Before = nil, nil
	sum, err := s.store.SummarizeTrips(ctx, sf)
	if err != nil {
		return res, err
	}
	res.Pagination.TotalCount = sum.Count
	res.SummaryStats = SummaryStats{TotalDistanceKm: round(sum.TotalDistanceKm, 3), TotalDurationHours: round(sum.TotalDurationMin/60, 3),
		ActiveTrips: sum.Active, CompletedTrips: sum.Completed}
	if sum.Scored > 0 {
		safety, eco := round(sum.AvgSafetyScore, 1), round(sum.AvgEcoScore, 1)
		res.SummaryStats.AvgSafetyScore, res.SummaryStats.AvgEcoScore = &safety, &eco
	}
	return res, nil
}

func (s *Service) listItem(t store.Trip, withAnalytics bool) ListItem {
	it := ListItem{TripID: t.ID, OrganizationID: t.Org, VehicleID: t.VehicleID, DriverID: optional(t.DriverID), Status: t.Status, StartTime: t.StartTime,
		EndTime: timePtr(t.EndTime), StartLocation: locPtr(t.StartLocation), EndLocation: locPtr(t.EndLocation), Metadata: s.metadataMap(t.ID, t.Metadata),
		CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if withAnalytics {
		x := t.Totals
		it.Analytics = &ListAnalytics{DistanceKm: x.DistanceKm, DurationMinutes: x.DurationMinutes, AvgSpeedKmh: avgSpeedOf(x.LocationsCount, x.DurationMinutes, x.AvgSpeedKmh),
			MaxSpeedKmh: listedMaxSpeed(x.LocationsCount, x.MaxSpeedKmh), SafetyScore: scoreOf(x.LocationsCount, x.SafetyScore), EcoScore: scoreOf(x.LocationsCount, x.EcoScore),
			EventsCount: x.EventsCount}
	}
	return it
}

// HistoryTrip is a trip in the organization history shape.
type HistoryTrip struct {
	ID              string     `json:"id"`
	OrgID           string     `json:"org_id"`
	VehicleID       string     `json:"vehicle_id"`
	UserID          *string    `json:"user_id" doc:"the trip's driver_id; null when the trip was started without a driver"`
	Status          string     `json:"status" enum:"completed,cancelled,interrupted,recording,paused" doc:"recording: an active trip"`
	Purpose         *string    `json:"purpose" doc:"the trip's metadata.purpose; null when it has none"`
	StartTime       time.Time  `json:"start_time"`
	EndTime         *time.Time `json:"end_time"`
	CreatedAt       time.Time  `json:"created_at"`
	DurationSeconds int64      `json:"duration_seconds" source:"computed"`
	DistanceMeters  float64    `json:"distance_meters" source:"computed"`
}

// HistoryData is the data of the organization history answer.
type HistoryData struct {
	Trips  []HistoryTrip `json:"trips"`
	Count  int           `json:"count"`
	Filter string        `json:"filter"`
}

// HistoryStatuses maps the history filter to stored statuses: the
// interface's completed, cancelled, recording (active trips) and paused,
// and interrupted, without which an interrupted trip could not be found
// in the history at all.
var HistoryStatuses = map[string]string{"completed": store.TripCompleted, "cancelled": store.TripCancelled, "interrupted": store.TripInterrupted,
	"recording": store.TripActive, "paused": store.TripPaused}

// MaxHistory is the most trips the history returns.
const MaxHistory = 100

// History lists up to 100 trips of the organization, newest first.
func (s *Service) History(ctx context.Context, org, env, orgParam, filter string) (HistoryData, error) {
	out := HistoryData{Trips: []HistoryTrip{}, Filter: filter}
	if orgParam != org {
		return out, nil
	}
	trips, err := s.store.ListTrips(ctx, store.TripFilter{Scope: scope(org, env), Statuses: []string{HistoryStatuses[filter]}, Sort: "start_time", Desc: true, Limit: MaxHistory})
	if err != nil {
		return out, err
	}
	for _, t := range trips {
		status := t.Status
		if status == store.TripActive {
			status = "recording"
		}
		purpose, _ := s.metadataMap(t.ID, t.Metadata)["purpose"].(string)
		out.Trips = append(out.Trips, HistoryTrip{ID: t.ID, OrgID: t.Org, VehicleID: t.VehicleID, UserID: optional(t.DriverID), Status: status, Purpose: optional(purpose),
			StartTime: t.StartTime, EndTime: timePtr(t.EndTime), CreatedAt: t.CreatedAt, DurationSeconds: int64(t.Totals.DurationMinutes*60 + 0.5),
			DistanceMeters: round(t.Totals.DistanceKm*1000, 1)})
	}
	out.Count = len(out.Trips)
	return out, nil
}
