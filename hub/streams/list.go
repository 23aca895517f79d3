package streams

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/pagecursor"
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
	hash := pagecursor.Hash("streams", org, env, q.Kind, q.Status)
	if q.Cursor != "" {
		t, id, err := decodeCursor(q.Cursor, hash)
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
			out.NextCursor = encodeCursor(last.CreatedAt, last.ID, hash)
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

// encodeCursor answers the cursor of the page after the stream created at
// t with id, under the listing's filters (pagecursor.Hash).
func encodeCursor(t time.Time, id, filters string) string {
	return pagecursor.Seal(strconv.FormatInt(t.UnixMilli(), 10)+":"+id, filters)
}

// decodeCursor answers the position of a cursor of the listing with these
// filters; ErrBadCursor when s is not one (or was made with others).
func decodeCursor(s, filters string) (time.Time, string, error) {
	pos, ok := pagecursor.Open(s, filters)
	if !ok {
		return time.Time{}, "", ErrBadCursor
	}
	ms, id, ok := strings.Cut(pos, ":")
	n, err := strconv.ParseInt(ms, 10, 64)
	if !ok || err != nil || id == "" {
		return time.Time{}, "", ErrBadCursor
	}
	return time.UnixMilli(n).UTC(), id, nil
}
