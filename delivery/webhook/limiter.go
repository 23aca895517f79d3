package webhook

import (
	"fmt"
	"math"
	"time"

	"github.com/fleethub/fleethub/internal/ratelimit"
)

// pacer resolves Rate and Burst into the token bucket every endpoint
// starts from (a copy of it is a full bucket): one token per 1/Rate
// seconds, at most Burst banked. Reservations may go into debt, so an
// endpoint's concurrent workers queue up fairly. A negative Rate, or one
// beyond a request per nanosecond, is unlimited: the zero Pacer.
func (c *Config) pacer() (ratelimit.Pacer, error) {
	if c.Rate < 0 {
		return ratelimit.Pacer{}, nil
	}
	every := float64(time.Second) / c.Rate
	if every < 1 {
		return ratelimit.Pacer{}, nil
	}
	if !(every <= math.MaxInt64/2) { // also NaN
		return ratelimit.Pacer{}, fmt.Errorf("webhook: rate %v per second is too slow to enforce", c.Rate)
	}
	p, err := ratelimit.NewPacer(ratelimit.Limit{Rate: 1, Burst: c.Burst, Window: time.Duration(every)})
	if err != nil {
		return ratelimit.Pacer{}, fmt.Errorf("webhook: rate %v per second, burst %d: %w", c.Rate, c.Burst, err)
	}
	return p, nil
}
