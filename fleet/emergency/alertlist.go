package emergency

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"time"

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
	if q.Cursor != "" {
		t, id, err := decodeAlertCursor(q.Cursor)
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
			c := encodeAlertCursor(last.CreatedAt, last.ID)
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

func encodeAlertCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMilli(), 10) + ":" + id))
}

func decodeAlertCursor(s string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || !strings.HasPrefix(id, "alr_") {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}
