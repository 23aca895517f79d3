package emergency

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
)

// ErrBadCursor is a cursor that is not one of the alert listing.
var ErrBadCursor = errors.New("emergency: invalid cursor")

// AlertStatuses are the statuses an alert listing filters on.
var AlertStatuses = []string{"active", "expired", "cancelled"}

// AlertQuery selects a page of alerts.
type AlertQuery struct {
	Status string // "" or one of AlertStatuses
	Cursor string // next_cursor of the previous page
	Limit  int    // 1-200
}

// AlertList is a page of alerts, newest first.
type AlertList struct {
	Success    bool           `json:"success"`
	Alerts     []Alert        `json:"alerts"`
	Pagination AlertListPages `json:"pagination"`
}

// AlertListPages continues an alert listing.
type AlertListPages struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
}

// List answers a page of the scope's alerts, newest first, each as Get
// answers it (expiry and escalation brought to now, deliveries from the
// gateway queue).
func (a *Alerts) List(ctx context.Context, sc store.Scope, q AlertQuery) (AlertList, error) {
	f := store.AlertFilter{Scope: sc, Status: q.Status, Now: a.now().UTC(), Limit: q.Limit + 1}
	hash := pagecursor.Hash("alerts", sc.Org, sc.Env, q.Status)
	if q.Cursor != "" {
		t, id, err := decodeAlertCursor(q.Cursor, hash)
		if err != nil {
			return AlertList{}, err
		}
		f.BeforeTime, f.BeforeID = t, id
	}
	recs, err := a.st.ListAlerts(ctx, f)
	if err != nil {
		return AlertList{}, err
	}
	out := AlertList{Success: true, Alerts: []Alert{}, Pagination: AlertListPages{Limit: q.Limit}}
	for i, rec := range recs {
		if i == q.Limit {
			last := recs[i-1]
			c := encodeAlertCursor(last.CreatedAt, last.ID, hash)
			out.Pagination.NextCursor, out.Pagination.HasMore = &c, true
			break
		}
		al, esc, ver, changed, err := a.fromRecord(ctx, sc, rec)
		if err != nil {
			return AlertList{}, err
		}
		if changed {
			if err := a.save(ctx, sc, al, ver, esc); err != nil && !errors.Is(err, store.ErrConflict) {
				return AlertList{}, err
			}
		}
		if err := a.overlay(ctx, sc, al); err != nil {
			return AlertList{}, err
		}
		out.Alerts = append(out.Alerts, *al)
	}
	return out, nil
}

// encodeAlertCursor answers the cursor of the page after the alert created
// at t with id, under the listing's filters (pagecursor.Hash).
func encodeAlertCursor(t time.Time, id, filters string) string {
	return pagecursor.Seal(strconv.FormatInt(t.UnixMilli(), 10)+":"+id, filters)
}

// decodeAlertCursor answers the position of a cursor of the listing with
// these filters; ErrBadCursor when s is not one (or was made with others).
func decodeAlertCursor(s, filters string) (time.Time, string, error) {
	pos, ok := pagecursor.Open(s, filters)
	if !ok {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(pos, ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "alr_") {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}
