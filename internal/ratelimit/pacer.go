package ratelimit

import "time"

// Pacer is one token bucket that spaces out its owner's requests instead
// of denying them: Reserve always takes a token, going into debt when the
// bucket is empty, and says how long to wait before using it, so callers
// that reserve one after another are served in turn at the Limit's rate.
// It is Memory's GCRA bucket for a single key, in Unix nanoseconds, with
// no lock: the owner's lock must be held around Reserve.
//
// A Pacer is a value: copying a new one gives another full bucket. The
// zero value never waits.
type Pacer struct {
	g   gcra  // zero interval: unlimited
	tat int64 // theoretical arrival time, Unix nanoseconds
}

// NewPacer returns a full bucket under lim, or an error wrapping
// ErrInvalid for a Limit that cannot be enforced.
func NewPacer(lim Limit) (Pacer, error) {
	g, err := lim.gcra(time.Nanosecond)
	if err != nil {
		return Pacer{}, err
	}
	return Pacer{g: g}, nil
}

// Reserve takes one token at now and returns how long to wait until it
// is due: zero while the bucket still holds one, else the time the debt
// takes to refill. A clock that steps back makes the wait longer, never
// shorter.
func (p *Pacer) Reserve(now time.Time) time.Duration {
	if p.g.interval == 0 {
		return 0
	}
	t := now.UnixNano()
	p.tat = max(p.tat, t) + p.g.interval
	return time.Duration(max(0, p.tat-t-p.g.tolerance))
}
