package webhook

import (
	"time"
)

// DefaultSchedule is the retry schedule: attempt n+1 waits a random time
// between zero and the n-th step (full jitter); past the last step every
// wait uses the last one, until RetryFor has passed since the delivery was
// queued. The steps sum to 23 h 42 min, so with the default RetryFor of
// 24 h a delivery is tried for at least a day.
var DefaultSchedule = []time.Duration{
	5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 8 * time.Hour,
}

// Named limits and defaults, in one place.
const (
	DefaultConcurrency      = 32               // requests in flight per endpoint
	DefaultRate             = 20_000           // requests per second per endpoint
	DefaultTimeout          = 10 * time.Second // one request, connect to last byte
	DefaultQueueLimit       = 2_000            // deliveries held in memory per endpoint
	DefaultQueueBytes       = 16 << 20         // payload bytes held in memory per endpoint
	DefaultLease            = time.Minute
	DefaultPollEvery        = time.Second
	DefaultRetryFor         = 24 * time.Hour
	DefaultBreakerThreshold = 5 // consecutive failures that open the circuit
	DefaultBreakerCooldown  = 30 * time.Second
	DefaultStallAfter       = 100 * time.Millisecond // no request finished: a receiver that stopped answering
	DefaultSlowDrain        = 5 * time.Second        // a full queue this long to drain: a slow receiver
	DefaultSecretTTL        = 5 * time.Second
	DefaultRecordEvery      = 5 * time.Millisecond
	DefaultRecordBatch      = 1_000
	DefaultDrain            = 5 * time.Second
	DefaultDelivered        = 24 * time.Hour     // delivered rows are kept this long
	DefaultDeadLetters      = 7 * 24 * time.Hour // dead-lettered and disabled rows
	DefaultPurgeEvery       = 10 * time.Minute

	// maxResponseBytes of a response body are read (so the connection can
	// be reused); the first errorBodyBytes go into last_error.
	maxResponseBytes = 64 << 10
	errorBodyBytes   = 200
)

// Config of the dispatcher. Zero fields take the defaults above.
type Config struct {
	// Node names this process in leases; it must differ between
	// dispatchers sharing a store (default: the host name and a random
	// suffix, new at every start).
	Node string
	// AllowPrivate lets webhooks reach loopback, private, link-local,
	// CGNAT and metadata addresses (--allow-private-webhooks).
	AllowPrivate bool

	Concurrency int           // per endpoint
	Rate        float64       // requests per second per endpoint; negative: unlimited
	Burst       int           // token bucket depth, default Concurrency
	Timeout     time.Duration // per request
	QueueLimit  int           // deliveries held in memory per endpoint
	// QueueBytes bounds the payload bytes an endpoint holds: it takes
	// nothing more once it holds that much (one hand-over may pass it).
	QueueBytes int

	Lease     time.Duration // how long a claimed delivery is reserved
	PollEvery time.Duration // how often due deliveries are looked for

	Schedule      []time.Duration // retry steps, default DefaultSchedule
	RetryFor      time.Duration   // retry window from queueing
	MaxRetryAfter time.Duration   // longest Retry-After honoured, default RetryFor

	BreakerThreshold int
	BreakerCooldown  time.Duration
	// StallAfter: an endpoint that holds deliveries and has finished no
	// request for this long is stalled, and what it has no room for is
	// parked (as while its circuit is open).
	StallAfter time.Duration
	// SlowDrain: an endpoint whose held deliveries (half its queue or
	// more) would take longer than this to send at the rate it finished
	// them over its last full second is slow, and what it has no room
	// for is parked too: a receiver that answers, but far slower than
	// its messages come.
	SlowDrain time.Duration

	SecretTTL   time.Duration // how long a stream's secrets are cached
	RecordEvery time.Duration // outcomes are written in batches this often
	RecordBatch int           // or when this many are waiting
	Drain       time.Duration // how long Run waits for requests in flight at shutdown

	DeliveredRetention  time.Duration
	DeadLetterRetention time.Duration
	PurgeEvery          time.Duration

	UserAgent string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.Node == "" {
		c.Node = hostname()
	}
	set := func(p *time.Duration, d time.Duration) {
		if *p == 0 {
			*p = d
		}
	}
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Rate == 0 {
		c.Rate = DefaultRate
	}
	if c.Burst <= 0 {
		c.Burst = c.Concurrency
	}
	if c.QueueLimit <= 0 {
		c.QueueLimit = DefaultQueueLimit
	}
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if len(c.Schedule) == 0 {
		c.Schedule = DefaultSchedule
	}
	if c.BreakerThreshold <= 0 {
		c.BreakerThreshold = DefaultBreakerThreshold
	}
	if c.RecordBatch <= 0 {
		c.RecordBatch = DefaultRecordBatch
	}
	set(&c.Timeout, DefaultTimeout)
	set(&c.Lease, DefaultLease)
	set(&c.PollEvery, DefaultPollEvery)
	set(&c.RetryFor, DefaultRetryFor)
	set(&c.MaxRetryAfter, c.RetryFor)
	set(&c.BreakerCooldown, DefaultBreakerCooldown)
	set(&c.StallAfter, DefaultStallAfter)
	set(&c.SlowDrain, DefaultSlowDrain)
	set(&c.SecretTTL, DefaultSecretTTL)
	set(&c.RecordEvery, DefaultRecordEvery)
	set(&c.Drain, DefaultDrain)
	set(&c.DeliveredRetention, DefaultDelivered)
	set(&c.DeadLetterRetention, DefaultDeadLetters)
	set(&c.PurgeEvery, DefaultPurgeEvery)
	if c.UserAgent == "" {
		c.UserAgent = "Fleethub-Webhooks/1"
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}
