package ratelimit

import (
	"errors"
	"fmt"
	"time"
)

// Errors returned by every limiter in this package.
var (
	// ErrRevoked is returned by Allow for a key that has been revoked.
	ErrRevoked = errors.New("ratelimit: key revoked")
	// ErrInvalid is wrapped by the error returned for an empty key or a
	// Limit that cannot be enforced (Rate <= 0, negative Burst or Window,
	// more than one token per time unit, a full refill beyond ~146 years).
	// It is a caller bug, never a backend fault: Failover passes it through.
	ErrInvalid = errors.New("ratelimit: invalid argument")
)

// DefaultWindow is the refill window of a Limit whose Window is zero.
const DefaultWindow = time.Minute

// maxSpan bounds a bucket's full-refill time so that now+span never
// overflows an int64 of nanoseconds and stays an exact integer (< 2^53) as
// a Lua double of microseconds in the Redis script.
const maxSpan = time.Duration(1 << 62)

// Limit is a token bucket: Rate tokens refill per Window, and the bucket
// holds at most Burst tokens. A new (or idle) bucket is full.
type Limit struct {
	Rate   int           // tokens per Window; must be positive
	Burst  int           // capacity; 0 means 2*Rate
	Window time.Duration // 0 means DefaultWindow (one minute)
}

// Result is the outcome of one Allow call, shaped for the X-RateLimit-*
// and Retry-After response headers.
type Result struct {
	Allowed    bool
	Limit      int           // the Rate, for X-RateLimit-Limit
	Remaining  int           // whole tokens left after this request (>= 0)
	Reset      int64         // epoch seconds when the bucket is full again, rounded up
	RetryAfter time.Duration // when !Allowed: time until one token is available; callers round up to whole seconds
}

// gcra is a Limit resolved into the integer parameters of the generic cell
// rate algorithm, in one time unit (nanoseconds in Memory, microseconds in
// Redis, whose TIME has microsecond resolution).
type gcra struct {
	rate      int   // Limit.Rate, echoed in Result.Limit
	interval  int64 // emission interval: time for one token to refill
	tolerance int64 // interval*burst: time for an empty bucket to refill fully
}

// gcra validates l and resolves it in unit. It does not allocate unless l
// is invalid.
func (l Limit) gcra(unit time.Duration) (gcra, error) {
	window := l.Window
	if window == 0 {
		window = DefaultWindow
	}
	burst := int64(l.Burst)
	if burst == 0 {
		burst = 2 * int64(l.Rate)
	}
	switch {
	case l.Rate <= 0:
		return gcra{}, fmt.Errorf("%w: rate %d, want > 0", ErrInvalid, l.Rate)
	case l.Burst < 0:
		return gcra{}, fmt.Errorf("%w: burst %d, want >= 0", ErrInvalid, l.Burst)
	case window < 0:
		return gcra{}, fmt.Errorf("%w: window %v, want >= 0", ErrInvalid, window)
	}
	interval := int64(window/unit) / int64(l.Rate)
	if interval <= 0 {
		return gcra{}, fmt.Errorf("%w: rate %d per %v is more than one token per %v", ErrInvalid, l.Rate, window, unit)
	}
	if burst > int64(maxSpan/unit)/interval {
		return gcra{}, fmt.Errorf("%w: burst %d of one token per %v takes too long to refill", ErrInvalid, burst, time.Duration(interval)*unit)
	}
	return gcra{rate: l.Rate, interval: interval, tolerance: interval * burst}, nil
}

// admit applies one request at now to a bucket whose theoretical arrival
// time is tat (zero for a new bucket). It returns the bucket's new tat and
// whether the request conforms; a denied request leaves the bucket as it was.
//
// tat-now is the time the bucket needs to become full again, so the bucket
// holds (tolerance-(tat-now))/interval tokens. A clock that steps back only
// makes tat-now larger: the bucket looks emptier, never fuller.
func (g gcra) admit(tat, now int64) (int64, bool) {
	if tat < now {
		tat = now
	}
	next := tat + g.interval
	if next-now > g.tolerance {
		return tat, false
	}
	return next, true
}

// result describes the bucket state tat at now (both in unit) after a
// request that was allowed or not.
func (g gcra) result(allowed bool, tat, now int64, unit time.Duration) Result {
	if tat < now {
		tat = now
	}
	r := Result{Allowed: allowed, Limit: g.rate}
	if room := g.tolerance - (tat - now); room > 0 {
		r.Remaining = int(room / g.interval)
	}
	perSecond := int64(time.Second / unit)
	r.Reset = tat / perSecond
	if tat%perSecond > 0 {
		r.Reset++
	}
	if !allowed {
		r.RetryAfter = time.Duration(tat+g.interval-now-g.tolerance) * unit
	}
	return r
}
