package ws_test

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// histLog is an in-memory hub.Log whose history a test can lose: lose
// starts every stream's offsets again at 1 under a new epoch, as a wiped
// data directory or a flushed Redis would. It retains the newest max
// entries of a stream.
type histLog struct {
	max int
	// waited, when set (before use), gets the offset each Wait waits
	// from, if it has room: a test waits there until a pump has taken
	// what it read and waits for what comes after.
	waited chan int64

	mu      sync.Mutex // guards the fields below
	gen     int
	streams map[string]*histStream
}

type histStream struct {
	base    int64 // offset of entries[0]
	entries []hub.Entry
	notify  chan struct{} // closed by an append or a loss
}

var _ hub.Log = (*histLog)(nil)

func newHistLog(max int) *histLog {
	return &histLog{max: max, gen: 1, streams: map[string]*histStream{}}
}

// stream returns the stream id; mu held.
func (l *histLog) stream(id string) *histStream {
	s := l.streams[id]
	if s == nil {
		s = &histStream{base: 1, notify: make(chan struct{})}
		l.streams[id] = s
	}
	return s
}

func (s *histStream) last() int64 { return s.base + int64(len(s.entries)) - 1 }

func (l *histLog) Append(_ context.Context, id string, data [][]byte) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stream(id)
	for _, d := range data {
		s.entries = append(s.entries, hub.Entry{Offset: s.last() + 1, Time: time.Now(), Data: d})
	}
	if over := len(s.entries) - l.max; over > 0 {
		s.entries = append([]hub.Entry(nil), s.entries[over:]...)
		s.base += int64(over)
	}
	close(s.notify)
	s.notify = make(chan struct{})
	return s.last(), nil
}

func (l *histLog) Read(_ context.Context, id string, from int64, n int) ([]hub.Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := l.stream(id)
	i := int(max(0, from-s.base))
	if i >= len(s.entries) {
		return nil, nil
	}
	return append([]hub.Entry(nil), s.entries[i:min(len(s.entries), i+n)]...), nil
}

func (l *histLog) Last(_ context.Context, id string) (int64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stream(id).last(), nil
}

func (l *histLog) Wait(id string, from int64) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	select {
	case l.waited <- from:
	default: // nobody waits (or no channel)
	}
	s := l.stream(id)
	if from <= s.last() {
		c := make(chan struct{})
		close(c)
		return c
	}
	return s.notify
}

func (l *histLog) Epoch(context.Context, string) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.epoch(), nil
}

// epoch is the current history's name; mu held.
func (l *histLog) epoch() string { return "hist-" + strconv.Itoa(l.gen) }

// lose drops every stream's entries and starts a new epoch; waiters wake.
// It returns the old epoch and the new one.
func (l *histLog) lose() (old, cur string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	old = l.epoch()
	l.gen++
	for id, s := range l.streams {
		close(s.notify)
		delete(l.streams, id)
	}
	return old, l.epoch()
}
