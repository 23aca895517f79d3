package api

import (
	"sync/atomic"
	"time"
)

// Stats keeps request counts, errors and latency over the last minute in
// one-second buckets, for the health endpoint. Observe takes no lock: a
// bucket is claimed for its second with a compare-and-swap and reset by
// the claimer (a request racing the reset may be counted in the previous
// second, which the one-minute window does not notice).
type Stats struct {
	now func() time.Time
	b   [60]bucket
}

type bucket struct {
	sec    atomic.Int64
	n      atomic.Int64
	errs   atomic.Int64
	totalD atomic.Int64 // nanoseconds
}

// NewStats makes a Stats on clock now.
func NewStats(now func() time.Time) *Stats { return &Stats{now: now} }

// Observe records one request.
func (s *Stats) Observe(d time.Duration, isErr bool) {
	sec := s.now().Unix()
	b := &s.b[sec%60]
	if old := b.sec.Load(); old != sec && b.sec.CompareAndSwap(old, sec) {
		b.n.Store(0)
		b.errs.Store(0)
		b.totalD.Store(0)
	}
	b.n.Add(1)
	b.totalD.Add(int64(d))
	if isErr {
		b.errs.Add(1)
	}
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
	var total int64
	for i := range s.b {
		b := &s.b[i]
		if sec := b.sec.Load(); now-sec < 60 && sec <= now {
			w.Requests += b.n.Load()
			w.Errors += b.errs.Load()
			total += b.totalD.Load()
		}
	}
	if w.Requests > 0 {
		w.AvgLatency = time.Duration(total / w.Requests)
		w.ErrorRatePct = float64(w.Errors) * 100 / float64(w.Requests)
	}
	w.RequestsPerMin = w.Requests
	return w
}
