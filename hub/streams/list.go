package streams

import (
	"cmp"
	"context"
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// ErrBadCursor is a cursor that is not one of the stream listing.
var ErrBadCursor = errors.New("streams: invalid cursor")

// List returns every stream of a scope the registry knows, newest first
// (by creation time, then id): active, paused, and stopped ones within
// the retention period. It reads the store's changes first, so a stream
// started on another node is listed at once.
func (r *Registry) List(ctx context.Context, org, env string) ([]*Entry, error) {
	if err := r.refresh(ctx); err != nil {
		return nil, err
	}
	now := r.now()
	r.mu.RLock()
	out := []*Entry{}
	for _, e := range r.streams {
		if e.Rec.Org != org || e.Rec.Env != env {
			continue
		}
		if e.Rec.State == hub.StateStopped && now.Sub(e.Rec.StoppedAt) > r.cfg.StoppedRetention {
			continue
		}
		out = append(out, e)
	}
	r.mu.RUnlock()
	slices.SortFunc(out, func(a, b *Entry) int {
		if c := cmp.Compare(b.Rec.CreatedAt.UnixMilli(), a.Rec.CreatedAt.UnixMilli()); c != 0 {
			return c
		}
		return cmp.Compare(b.Rec.ID, a.Rec.ID)
	})
	return out, nil
}

// ListQuery selects a page of streams.
type ListQuery struct {
	Kind   string // "", hub.KindTelemetry or hub.KindEvents
	Status string // "", hub.StateActive, hub.StatePaused or hub.StateStopped
	Cursor string // the NextCursor of the previous page
	Limit  int
}

// ListPage is a page of stream statuses; NextCursor is empty on the last.
type ListPage struct {
	Streams    []Status
	NextCursor string
}

// List answers a page of the scope's streams, newest first, each with
// its status.
func (s *Service) List(ctx context.Context, org, env string, q ListQuery) (ListPage, error) {
	var afterT time.Time
	var afterID string
	if q.Cursor != "" {
		t, id, err := decodeCursor(q.Cursor)
		if err != nil {
			return ListPage{}, err
		}
		afterT, afterID = t, id
	}
	ents, err := s.reg.List(ctx, org, env)
	if err != nil {
		return ListPage{}, err
	}
	out := ListPage{Streams: []Status{}}
	for _, e := range ents {
		if (q.Kind != "" && e.Rec.Kind != q.Kind) || (q.Status != "" && e.Rec.State != q.Status) {
			continue
		}
		if afterID != "" {
			// newest first: continue with what sorts after the cursor
			ms := e.Rec.CreatedAt.UnixMilli()
			if ms > afterT.UnixMilli() || (ms == afterT.UnixMilli() && e.Rec.ID >= afterID) {
				continue
			}
		}
		if len(out.Streams) == q.Limit {
			last := out.Streams[len(out.Streams)-1].Entry.Rec
			out.NextCursor = encodeCursor(last.CreatedAt, last.ID)
			break
		}
		st, err := s.status(ctx, e)
		if err != nil {
			return ListPage{}, err
		}
		out.Streams = append(out.Streams, st)
	}
	return out, nil
}

func encodeCursor(t time.Time, id string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(t.UnixMilli(), 10) + ":" + id))
}

func decodeCursor(s string) (time.Time, string, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(string(raw), ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}
