package webhook

import "time"

// Circuit states, as EndpointState reports them.
const (
	CircuitClosed   = "closed"
	CircuitOpen     = "open"
	CircuitHalfOpen = "half_open"
)

// breaker is an endpoint's circuit breaker. Closed, it counts consecutive
// failures (no answer, or any answer but a 2xx); at threshold it opens:
// nothing is sent for cooldown. Then it is half-open: one request goes as
// a probe while the others wait; the probe's success closes the circuit,
// its failure opens it again for another cooldown. The owner's lock
// guards it.
type breaker struct {
	threshold int
	cooldown  time.Duration

	open     bool
	failures int
	reopenAt time.Time // when an open circuit turns half-open
	probing  bool      // a half-open probe is in flight
}

// state returns the circuit state at now.
func (b *breaker) state(now time.Time) string {
	switch {
	case !b.open:
		return CircuitClosed
	case now.Before(b.reopenAt):
		return CircuitOpen
	default:
		return CircuitHalfOpen
	}
}

// result records the outcome of a request (probe: it was the half-open
// probe) and reports whether the circuit opened because of it.
func (b *breaker) result(failure bool, probe bool, now time.Time) (opened bool) {
	if probe {
		b.probing = false
	}
	if !failure {
		b.open, b.failures = false, 0
		return false
	}
	b.failures++
	if (b.open && probe) || (!b.open && b.failures >= b.threshold) {
		b.open, b.reopenAt = true, now.Add(b.cooldown)
		return true
	}
	return false
}

// reset closes the circuit (a new URL, an enabled endpoint).
func (b *breaker) reset() { b.open, b.failures, b.probing = false, 0, false }
