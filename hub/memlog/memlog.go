// Package memlog is the in-process stream log: per stream an append-only
// slice of entries with monotonic offsets, trimmed by age (default 24 h)
// and count (default 100,000 per stream). Readers share the entries'
// bytes; nothing is copied on fan-out.
package memlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Config of the log.
type Config struct {
	Retention  time.Duration // default 24h
	MaxEntries int           // per stream, default 100,000
}

// Log is the in-process hub.Log.
type Log struct {
	cfg Config
	now func() time.Time

	epoch string

	mu      sync.RWMutex // guards streams
	streams map[string]*stream
}

var _ hub.Log = (*Log)(nil)

type stream struct {
	mu      sync.RWMutex // guards the fields below
	base    int64        // offset of entries[0]
	next    int64        // offset the next append gets
	entries []hub.Entry
	notify  chan struct{} // closed on append
}

// New makes a log.
func New(cfg Config) *Log {
	if cfg.Retention <= 0 {
		cfg.Retention = 24 * time.Hour
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 100_000
	}
	return &Log{cfg: cfg, now: time.Now, epoch: newEpoch(), streams: map[string]*stream{}}
}

func (l *Log) stream(id string) *stream {
	l.mu.RLock()
	s := l.streams[id]
	l.mu.RUnlock()
	if s != nil {
		return s
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if s = l.streams[id]; s == nil {
		s = &stream{base: 1, next: 1, notify: make(chan struct{})}
		l.streams[id] = s
	}
	return s
}

// Append adds entries.
func (l *Log) Append(_ context.Context, id string, data [][]byte) (int64, error) {
	s := l.stream(id)
	now := l.now()
	s.mu.Lock()
	for _, d := range data {
		s.entries = append(s.entries, hub.Entry{Offset: s.next, Time: now, Data: d})
		s.next++
	}
	l.trim(s, now)
	last := s.next - 1
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
	return last, nil
}

// trim drops entries past retention; lock held.
func (l *Log) trim(s *stream, now time.Time) {
	drop := 0
	if over := len(s.entries) - l.cfg.MaxEntries; over > 0 {
		drop = over
	}
	for drop < len(s.entries) && now.Sub(s.entries[drop].Time) > l.cfg.Retention {
		drop++
	}
	if drop == 0 {
		return
	}
	if drop > len(s.entries)/2 {
		s.entries = append([]hub.Entry(nil), s.entries[drop:]...)
	} else {
		s.entries = s.entries[drop:]
	}
	s.base += int64(drop)
}

// Read returns retained entries from offset from.
func (l *Log) Read(_ context.Context, id string, from int64, max int) ([]hub.Entry, error) {
	s := l.stream(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if from < s.base {
		from = s.base
	}
	i := int(from - s.base)
	if i >= len(s.entries) || max <= 0 {
		return nil, nil
	}
	end := min(len(s.entries), i+max)
	// the returned slice aliases the log; entries are never modified in
	// place and trimming reallocates, so readers keep a consistent view
	return s.entries[i:end:end], nil
}

// Last returns the newest offset.
func (l *Log) Last(_ context.Context, id string) (int64, error) {
	s := l.stream(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.next - 1, nil
}

// Wait returns a channel closed when offset from exists.
func (l *Log) Wait(id string, from int64) <-chan struct{} {
	s := l.stream(id)
	s.mu.RLock()
	defer s.mu.RUnlock()
	if from < s.next {
		c := make(chan struct{})
		close(c)
		return c
	}
	return s.notify
}

// Drop forgets a stream (after it stopped and its retention ended).
func (l *Log) Drop(id string) {
	l.mu.Lock()
	delete(l.streams, id)
	l.mu.Unlock()
}

// Epoch names the log's history: a log in memory starts a new one with
// every process.
func (l *Log) Epoch(context.Context, string) (string, error) { return l.epoch, nil }

func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
