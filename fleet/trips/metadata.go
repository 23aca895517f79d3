package trips

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// MaxMetadataBytes is the largest metadata object accepted: the size
// as JSON of its keys but the service-managed ones (clientBytes), as a
// geofence's metadata is measured.
const MaxMetadataBytes = 64 << 10

// ErrMetadataTooLarge is returned for metadata over MaxMetadataBytes.
var ErrMetadataTooLarge = errors.New("trips: metadata over 64 KB")

// service-managed metadata keys.
var managedKeys = map[string]bool{"created_by": true, "created_at": true, "updated_by": true, "updated_at": true}

// clientBytes is the size as JSON of m's keys but the managed ones: the
// metadata a client gives, which MaxMetadataBytes bounds. The keys the
// service adds (created_by, created_at, updated_by, updated_at) do not
// count against it.
func clientBytes(m map[string]any) (int, error) {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !managedKeys[k] {
			out[k] = v
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return 0, fmt.Errorf("not encodable: %w", err)
	}
	return len(b), nil
}

// metadataJSON builds a new stored metadata object from user keys.
func metadataJSON(m map[string]any, actor string, now time.Time, _ []byte) ([]byte, error) {
	out := map[string]any{}
	for k, v := range m {
		if !managedKeys[k] && v != nil {
			out[k] = v
		}
	}
	if n, err := clientBytes(out); err != nil {
		return nil, err
	} else if n > MaxMetadataBytes {
		return nil, ErrMetadataTooLarge
	}
	ts := apitime.Format(now)
	out["created_by"], out["created_at"], out["updated_by"], out["updated_at"] = actor, ts, actor, ts
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("not encodable: %w", err)
	}
	return b, nil
}

// typedKeys are the metadata keys the interface gives a type: each must
// be a string, tags an array of strings (null removes a key on update).
var typedKeys = map[string]string{"purpose": "a string", "route_name": "a string", "customer_id": "a string", "work_order_id": "a string",
	"priority": "a string", "driver_notes": "a string", "cost_center": "a string", "external_id": "a string", "tags": "an array of strings"}

// checkMetadata adds to bad each typed key of m whose value has another
// type, named metadata.<key>.
func checkMetadata(bad map[string]string, m map[string]any) {
	for k, want := range typedKeys {
		v, ok := m[k]
		if !ok || v == nil {
			continue
		}
		var good bool
		if k == "tags" {
			a, isArr := v.([]any)
			good = isArr
			for _, e := range a {
				if _, isStr := e.(string); !isStr {
					good = false
				}
			}
		} else {
			_, good = v.(string)
		}
		if !good {
			bad["metadata."+k] = "must be " + want
		}
	}
}

// MetadataRequest is PUT /v1/trips/{trip_id}/metadata.
type MetadataRequest struct {
	Metadata        map[string]any `json:"metadata" required:"true" doc:"at most 64 KB; no key is the empty string, at any depth"`
	ReplaceMetadata bool           `json:"replace_metadata,omitempty"`
}

// Changes lists changed keys.
type Changes struct {
	Added    []string `json:"added"`
	Modified []string `json:"modified"`
	Removed  []string `json:"removed"`
}

// HistoryEntry is one metadata change.
type HistoryEntry struct {
	Timestamp time.Time `json:"timestamp"`
	ChangedBy string    `json:"changed_by"`
	Changes   Changes   `json:"changes"`
}

// MetadataResult is the answer of a metadata update.
type MetadataResult struct {
	TripID          string         `json:"trip_id"`
	Metadata        map[string]any `json:"metadata"`
	UpdatedAt       time.Time      `json:"updated_at"`
	MetadataHistory []HistoryEntry `json:"metadata_history"`
}

// UpdateMetadata merges (or replaces) a trip's metadata; allowed in every
// status.
func (s *Service) UpdateMetadata(ctx context.Context, org, env, id, actor string, r MetadataRequest) (MetadataResult, error) {
	if r.Metadata == nil {
		return MetadataResult{}, &ValidationError{Code: "validation_failed", Fields: map[string]string{"metadata": "is required and must be an object"}}
	}
	bad := map[string]string{}
	if checkMetadata(bad, r.Metadata); len(bad) > 0 {
		return MetadataResult{}, &ValidationError{Code: "validation_failed", Fields: bad}
	}
	var hist []HistoryEntry
	var md map[string]any
	var unchanged time.Time // the trip's last update, when this one changes nothing
	t, _, err := s.update(ctx, scope(org, env), id, func(t *store.Trip, st *state, now time.Time) error {
		old := s.metadataMap(t.ID, t.Metadata)
		next := map[string]any{}
		if !r.ReplaceMetadata {
			for k, v := range old {
				next[k] = v
			}
		} else {
			for k := range managedKeys {
				if v, ok := old[k]; ok {
					next[k] = v
				}
			}
		}
		for k, v := range r.Metadata {
			if managedKeys[k] {
				continue
			}
			if v == nil {
				delete(next, k)
				continue
			}
			next[k] = v
		}
		var ch Changes
		for k, v := range next {
			if managedKeys[k] {
				continue
			}
			ov, had := old[k]
			if !had {
				ch.Added = append(ch.Added, k)
			} else if !sameJSON(ov, v) {
				ch.Modified = append(ch.Modified, k)
			}
		}
		for k := range old {
			if _, still := next[k]; !still && !managedKeys[k] {
				ch.Removed = append(ch.Removed, k)
			}
		}
		sort.Strings(ch.Added)
		sort.Strings(ch.Modified)
		sort.Strings(ch.Removed)
		if ch.Added == nil {
			ch.Added = []string{}
		}
		if ch.Modified == nil {
			ch.Modified = []string{}
		}
		if ch.Removed == nil {
			ch.Removed = []string{}
		}
		if len(ch.Added)+len(ch.Modified)+len(ch.Removed) == 0 {
			// nothing changes: nothing is written, no history entry
			md, hist, unchanged = old, []HistoryEntry{}, t.UpdatedAt
			if len(t.MetadataHistory) > 0 && json.Unmarshal(t.MetadataHistory, &hist) != nil {
				hist = []HistoryEntry{}
			}
			return errUnchanged
		}
		ts := apitime.Format(now)
		if _, ok := next["created_at"]; !ok {
			next["created_at"], next["created_by"] = ts, actor
		}
		next["updated_at"], next["updated_by"] = ts, actor
		n, err := clientBytes(next)
		if err != nil {
			return &ValidationError{Code: "validation_failed", Fields: map[string]string{"metadata": "is not encodable"}}
		}
		if n > MaxMetadataBytes {
			return ErrMetadataTooLarge
		}
		b, err := json.Marshal(next)
		if err != nil {
			return &ValidationError{Code: "validation_failed", Fields: map[string]string{"metadata": "is not encodable"}}
		}
		if len(t.MetadataHistory) > 0 {
			if err := json.Unmarshal(t.MetadataHistory, &hist); err != nil {
				s.log.Warn("trip metadata history unreadable; it starts anew", "trip_id", t.ID, "error", err)
				hist = nil
			}
		}
		hist = append(hist, HistoryEntry{Timestamp: now, ChangedBy: actor, Changes: ch})
		if len(hist) > 100 {
			hist = hist[len(hist)-100:]
		}
		hb, err := json.Marshal(hist)
		if err != nil {
			return err
		}
		t.Metadata, t.MetadataHistory = b, hb
		md = next
		return nil
	})
	if errors.Is(err, errUnchanged) {
		return MetadataResult{TripID: t.ID, Metadata: md, UpdatedAt: unchanged, MetadataHistory: hist}, nil
	}
	if err != nil {
		return MetadataResult{}, err
	}
	return MetadataResult{TripID: t.ID, Metadata: md, UpdatedAt: t.UpdatedAt, MetadataHistory: hist}, nil
}

// errUnchanged ends a metadata update that changes nothing, unwritten.
var errUnchanged = errors.New("trips: metadata unchanged")

// sameJSON reports whether a and b encode alike; values that do not
// encode are not the same.
func sameJSON(a, b any) bool {
	x, errA := json.Marshal(a)
	y, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(x) == string(y)
}
