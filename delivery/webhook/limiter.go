package webhook

import "time"

// bucket is a token bucket: rate tokens a second, at most burst banked.
// reserve takes a token and says how long to wait for it (reservations
// may go into debt, so concurrent callers queue up fairly). The owner's
// lock guards it.
type bucket struct {
	rate   float64 // negative: unlimited
	burst  float64
	tokens float64
	last   time.Time
}

func newBucket(rate float64, burst int) bucket {
	return bucket{rate: rate, burst: float64(burst), tokens: float64(burst)}
}

func (b *bucket) reserve(now time.Time) time.Duration {
	if b.rate < 0 {
		return 0
	}
	if !b.last.IsZero() {
		b.tokens = min(b.burst, b.tokens+now.Sub(b.last).Seconds()*b.rate)
	}
	b.last = now
	b.tokens--
	if b.tokens >= 0 {
		return 0
	}
	return time.Duration(-b.tokens / b.rate * float64(time.Second))
}
