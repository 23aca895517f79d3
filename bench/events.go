package bench

import (
	"fmt"
	"strings"
	"time"
)

// The events generator measures what the processing rules of events
// streams (deduplication, event_ordering) cost the whole hub. It starts
// Streams events streams with the rules asked for, and Conns senders post
// events (POST /v1/events, Batch a request) of Vehicles vehicles at Rate
// events a second: every event a new event_id, each vehicle's
// metadata.sequence_number counting up from 1 in the order the hub
// accepts them (a vehicle belongs to one sender, which waits for each
// answer before its next request), so an ordering stream never waits for
// a gap. The vehicles' names are new in every run: the hub's reorder
// buffers know the numbers of earlier runs' vehicles.
//
// Throughput: the generator reads the streams' log offsets (lag.last_offset
// in GET /api/v1/streaming/streams, one request every PollEvery) while it
// sends and until every accepted event is in the logs of every stream
// that matches it, so it measures what the pipeline appended, not what
// ingest accepted; no websocket client adds its own cost.
//
// Latency (Latency set): two streams with the same filter, one with the
// rules asked for and one without, each followed by a websocket client;
// per event, the difference of its arrival times on the two is what the
// rules added.

// EventsConfig drives `fleethub-bench events`.
type EventsConfig struct {
	URL string
	Key string
	// Streams started (default 100). Filters "mix" (default): 9 in 10
	// follow a group of vehicles (vehicle v is in group v%groups), the
	// rest one category each (the events take five categories in turn):
	// with 100 streams each event matches 3, its group's and two
	// category streams. "all": every stream matches every event (its
	// filter lists the five categories, so the hub's own device_offline
	// events about an earlier run's vehicles match none).
	Streams int
	Filters string
	// Rules of every stream (of the first stream with Latency): a comma
	// list of deduplication (dedup) and event_ordering (ordering), or
	// none.
	Rules    string
	Rate     int           // events per second offered in total; 0: as fast as the senders go
	Duration time.Duration // sending time, default 10s
	Batch    int           // events per request, default 500 (at most 1,000)
	Vehicles int           // default 1000
	Conns    int           // senders, each with one request in flight, default 8
	// Drain bounds the wait for the pipeline after the last request
	// (default 60s; 10s with Latency).
	Drain     time.Duration
	PollEvery time.Duration // default 250ms
	Latency   bool          // set by EventsLatency
	// Meter, when set, counts the ingest requests and their errors as
	// they happen.
	Meter *Meter
}

// eventCategories are the categories the generator's events take in turn.
var eventCategories = [...]string{"safety_events", "operational_events", "driver_events", "vehicle_events", "maintenance_events"}

func (cfg *EventsConfig) defaults() error {
	if cfg.Streams <= 0 {
		cfg.Streams = 100
	}
	if cfg.Filters == "" {
		cfg.Filters = "mix"
	}
	if cfg.Filters != "mix" && cfg.Filters != "all" {
		return fmt.Errorf("bench: --filters %q: mix or all", cfg.Filters)
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	cfg.Batch = min(cfg.Batch, 1000)
	if cfg.Vehicles <= 0 {
		cfg.Vehicles = 1000
	}
	if cfg.Conns <= 0 {
		cfg.Conns = 8
	}
	cfg.Conns = min(cfg.Conns, cfg.Vehicles)
	if cfg.Drain <= 0 {
		cfg.Drain = 60 * time.Second
		if cfg.Latency {
			cfg.Drain = 10 * time.Second
		}
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 250 * time.Millisecond
	}
	_, _, err := parseRules(cfg.Rules)
	return err
}

// parseRules reads a --rules list.
func parseRules(s string) (dedup, ordering bool, err error) {
	for r := range strings.SplitSeq(s, ",") {
		switch strings.TrimSpace(r) {
		case "", "none":
		case "dedup", "deduplication":
			dedup = true
		case "ordering", "event_ordering":
			ordering = true
		default:
			return false, false, fmt.Errorf("bench: --rules: unknown rule %q (deduplication, event_ordering, none)", r)
		}
	}
	return dedup, ordering, nil
}

func rulesName(dedup, ordering bool) string {
	var rs []string
	if dedup {
		rs = append(rs, "deduplication")
	}
	if ordering {
		rs = append(rs, "event_ordering")
	}
	if len(rs) == 0 {
		return "none"
	}
	return strings.Join(rs, ",")
}
