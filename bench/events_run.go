package bench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"slices"
	"strconv"
	"time"
)

// eventRun is one run's names and streams.
type eventRun struct {
	cfg      EventsConfig
	id       string // in the run's vehicle names and event ids
	vehicles []string
	groups   int // vehicle-group streams of the mix
}

func newEventRun(cfg EventsConfig) *eventRun {
	r := &eventRun{cfg: cfg, id: strconv.FormatInt(time.Now().UnixNano()/1e6%1e9, 36)}
	for v := range cfg.Vehicles {
		r.vehicles = append(r.vehicles, "bv-"+r.id+"-"+strconv.Itoa(v))
	}
	r.groups = max(1, cfg.Streams*9/10)
	return r
}

// filter is the event_filters of stream i.
func (r *eventRun) filter(i int) map[string]any {
	if r.cfg.Filters == "all" {
		// every category the generator sends: not the hub's own
		// system_events (device_offline of an earlier run's vehicles)
		return map[string]any{"categories": eventCategories[:]}
	}
	if i >= r.groups {
		return map[string]any{"categories": []string{eventCategories[(i-r.groups)%len(eventCategories)]}}
	}
	var ids []string
	for v := i; v < len(r.vehicles); v += r.groups {
		ids = append(ids, r.vehicles[v])
	}
	return map[string]any{"vehicle_ids": ids}
}

// matches is how many streams take an event of vehicle v and category c.
func (r *eventRun) matches(v, c int) int64 {
	if r.cfg.Filters == "all" {
		return int64(r.cfg.Streams)
	}
	n := int64(0)
	if v%r.groups < r.cfg.Streams {
		n++
	}
	for j := r.groups; j < r.cfg.Streams; j++ {
		if (j-r.groups)%len(eventCategories) == c {
			n++
		}
	}
	return n
}

// start starts one events stream and returns its id.
func (r *eventRun) start(ctx context.Context, filter map[string]any, dedup, ordering bool) (string, error) {
	var st struct {
		StreamID string `json:"stream_id"`
	}
	body := map[string]any{"event_filters": filter, "processing_rules": map[string]any{"deduplication": dedup, "event_ordering": ordering}}
	if err := apiCall(ctx, "POST", r.cfg.URL+"/api/v1/streaming/events/start", r.cfg.Key, body, &st); err != nil {
		return "", fmt.Errorf("bench: start stream: %w", err)
	}
	return st.StreamID, nil
}

func (r *eventRun) stop(ids []string) {
	for _, id := range ids {
		if err := apiCall(context.Background(), "POST", r.cfg.URL+"/api/v1/streaming/events/stop", r.cfg.Key, map[string]any{"stream_id": id}, nil); err != nil {
			fmt.Fprintf(os.Stderr, "bench: stopping stream %s: %v\n", id, err)
		}
	}
}

// otherStreams counts the active events streams of the key's
// organization that are not the run's: their rules and matches would
// count in the figures.
func (r *eventRun) otherStreams(ctx context.Context, mine []string) (int, error) {
	offs, err := r.offsets(ctx, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for id := range offs {
		if !slices.Contains(mine, id) {
			n++
		}
	}
	return n, nil
}

// offsets reads lag.last_offset of the active events streams of the
// key's organization, of those in want when want is not nil.
func (r *eventRun) offsets(ctx context.Context, want map[string]bool) (map[string]int64, error) {
	out := map[string]int64{}
	cursor := ""
	for {
		u := r.cfg.URL + "/api/v1/streaming/streams?kind=events&status=active&limit=200"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Streams []struct {
				StreamID string `json:"stream_id"`
				Lag      struct {
					LastOffset int64 `json:"last_offset"`
				} `json:"lag"`
			} `json:"streams"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		}
		if err := apiCall(ctx, "GET", u, r.cfg.Key, nil, &page); err != nil {
			return nil, err
		}
		for _, s := range page.Streams {
			if want == nil || want[s.StreamID] {
				out[s.StreamID] = s.Lag.LastOffset
			}
		}
		if page.Pagination.NextCursor == nil || *page.Pagination.NextCursor == "" {
			return out, nil
		}
		cursor = *page.Pagination.NextCursor
	}
}
