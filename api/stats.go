package api

import (
	"sync"
	"time"
)

// Stats keeps request counts, errors and latency over the last minute in
// one-second buckets, for the health endpoint.
type Stats struct {
	now func() time.Time
	mu  sync.Mutex // guards the buckets
	b   [60]bucket
}

type bucket struct {
	sec    int64
	n      int64
	errs   int64
	totalD time.Duration
}

// NewStats makes a Stats on clock now.
func NewStats(now func() time.Time) *Stats { return &Stats{now: now} }

// Observe records one request.
func (s *Stats) Observe(d time.Duration, isErr bool) {
	sec := s.now().Unix()
	s.mu.Lock()
	b := &s.b[sec%60]
	if b.sec != sec {
		*b = bucket{sec: sec}
	}
	b.n++
	b.totalD += d
	if isErr {
		b.errs++
	}
	s.mu.Unlock()
}

// Window is the summary of the last minute.
type Window struct {
	Requests       int64
	Errors         int64
	AvgLatency     time.Duration
	ErrorRatePct   float64
	RequestsPerMin int64
}

// Last returns the last 60 seconds.
func (s *Stats) Last() Window {
	now := s.now().Unix()
	var w Window
	var total time.Duration
	s.mu.Lock()
	for i := range s.b {
		if b := s.b[i]; now-b.sec < 60 && b.sec <= now {
			w.Requests += b.n
			w.Errors += b.errs
			total += b.totalD
		}
	}
	s.mu.Unlock()
	if w.Requests > 0 {
		w.AvgLatency = total / time.Duration(w.Requests)
		w.ErrorRatePct = float64(w.Errors) * 100 / float64(w.Requests)
	}
	w.RequestsPerMin = w.Requests
	return w
}
