// Package embedlog is the stream log of a single node: per stream the
// matched messages under offsets that start at 1 and grow by one. It is
// a hub/seglog log keyed by stream id: with a directory (the embedded
// default, under --data) every append is durable before it returns and
// offsets continue across restarts; without one (tests) it lives in
// memory. Either way the newest messages of each stream are served from
// memory, bounded by bytes, and readers share the entries' bytes:
// nothing is copied on fan-out.
//
// A Log is safe for concurrent use: its appends, from any goroutine, are
// queued to the one writer goroutine of its hub/seglog log, which writes
// whatever queued up in one round (one fsync with a directory), and a
// read holds that log's mutex only to find its entries, never while it
// reads a segment file. The entries read, and the data given to Append,
// are shared with the log and every other reader: never modify them.
package embedlog

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/seglog"
)

// Config of the log.
type Config struct {
	// Dir keeps the log durable there; "" keeps it in memory.
	Dir string
	// Retention and MaxBytes bound what is kept (defaults: 24 h, and
	// seglog.DefaultMaxBytes on disk); MemBytes and StreamMemBytes
	// bound the memory of all streams and of one (defaults: 256 MiB
	// and 8 MiB).
	Retention      time.Duration
	MaxBytes       int64
	MemBytes       int64
	StreamMemBytes int64
	// SegmentBytes is the size of a segment file (default 64 MiB).
	SegmentBytes int64
	// DeferSync appends without an fsync each (seglog.Config.DeferSync):
	// an append returns once written, and Sync makes everything
	// appended before it durable. For a log fed by a durable bus whose
	// consumer offsets are recorded only after a Sync (cmd/fleethub on
	// the embedded bus): what a crash of the machine takes from the log
	// the bus hands again, under a new epoch.
	DeferSync bool
	Logger    *slog.Logger
}

// Default memory bounds.
const (
	DefaultMemBytes       = 256 << 20
	DefaultStreamMemBytes = 8 << 20
)

// Log is the single-node hub.Log.
type Log struct {
	sl *seglog.Log
}

var _ hub.Log = (*Log)(nil)

// New makes a log in memory.
func New(cfg Config) *Log {
	cfg.Dir = ""
	l, err := Open(cfg)
	if err != nil {
		panic(err) // a log without a directory opens no file
	}
	return l
}

// Open opens a log; with cfg.Dir it is durable there.
func Open(cfg Config) (*Log, error) {
	if cfg.MemBytes <= 0 {
		cfg.MemBytes = DefaultMemBytes
	}
	if cfg.StreamMemBytes <= 0 {
		cfg.StreamMemBytes = DefaultStreamMemBytes
	}
	sl, err := seglog.Open(seglog.Config{Dir: cfg.Dir, Retention: cfg.Retention, MaxBytes: cfg.MaxBytes,
		MemBytes: cfg.MemBytes, KeyMemBytes: cfg.StreamMemBytes, SegmentBytes: cfg.SegmentBytes, DeferSync: cfg.DeferSync, Logger: cfg.Logger})
	if err != nil {
		return nil, fmt.Errorf("stream log: %w", err)
	}
	return &Log{sl: sl}, nil
}

// Sync returns once everything appended before it is durable (with
// Config.DeferSync; otherwise every append already was).
func (l *Log) Sync(ctx context.Context) error {
	if err := l.sl.Sync(ctx); err != nil {
		return fmt.Errorf("stream log: %w", err)
	}
	return nil
}

// Append adds entries and returns the offset of the last one once they
// are durable (once written, with Config.DeferSync).
func (l *Log) Append(ctx context.Context, id string, data [][]byte) (int64, error) {
	if len(data) == 0 {
		return l.Last(ctx, id)
	}
	recs := make([]seglog.Record, len(data))
	for i, d := range data {
		recs[i] = seglog.Record{Key: id, Data: d}
	}
	if err := l.sl.Append(ctx, recs); err != nil {
		return 0, fmt.Errorf("stream log: %w", err)
	}
	return recs[len(recs)-1].Offset, nil
}

// AppendMany appends to several streams with one durable write and
// returns the last offset of each.
func (l *Log) AppendMany(ctx context.Context, ids []string, data [][][]byte) ([]int64, error) {
	n := 0
	for _, d := range data {
		n += len(d)
	}
	recs := make([]seglog.Record, 0, n)
	for i, id := range ids {
		for _, d := range data[i] {
			recs = append(recs, seglog.Record{Key: id, Data: d})
		}
	}
	if err := l.sl.Append(ctx, recs); err != nil {
		return nil, fmt.Errorf("stream log: %w", err)
	}
	last := make([]int64, len(ids))
	j := 0
	for i := range ids {
		j += len(data[i])
		if j > 0 && len(data[i]) > 0 {
			last[i] = recs[j-1].Offset
		}
	}
	return last, nil
}

// Read returns retained entries from offset from.
func (l *Log) Read(ctx context.Context, id string, from int64, max int) ([]hub.Entry, error) {
	return l.sl.Read(ctx, id, from, max)
}

// Last returns the newest offset.
func (l *Log) Last(_ context.Context, id string) (int64, error) {
	_, last := l.sl.Bounds(id)
	return last, nil
}

// First returns the oldest retained offset (Last+1 when none is).
func (l *Log) First(id string) int64 {
	first, _ := l.sl.Bounds(id)
	return first
}

// Delete drops a stream's log: its reads return nothing from now on,
// across restarts too, and its memory is freed. On disk its records stay
// in the shared segments until retention deletes them (see seglog's
// Drop).
func (l *Log) Delete(_ context.Context, id string) error {
	if err := l.sl.Drop(id); err != nil {
		return fmt.Errorf("stream log: delete %s: %w", id, err)
	}
	return nil
}

// Wait returns a channel closed when offset from exists.
func (l *Log) Wait(id string, from int64) <-chan struct{} { return l.sl.Wait(id, from) }

// Epoch names the log's history: kept in the directory, so it changes
// only with a new directory (in memory: with every process).
func (l *Log) Epoch(context.Context, string) (string, error) { return l.sl.Epoch(), nil }

// Stats returns the sizes of the log.
func (l *Log) Stats() seglog.Stats { return l.sl.Stats() }

// Close writes what is queued and closes the files.
func (l *Log) Close() error { return l.sl.Close() }
