package roadspeed

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Shared is a Table whose observations every node shares through Redis
// (--redis-url): each node counts its own in a local Table and adds them,
// every FlushEvery, to per-week sums in Redis; a plan reads the sums of
// the weeks within the retention, whichever node matched the trips. When
// Redis cannot be read the node's own Table answers.
type Shared struct {
	local  *Table
	rdb    redis.UniversalClient
	prefix string
	log    *slog.Logger
	now    func() time.Time

	mu      sync.Mutex
	pending map[sharedKey]map[int32]delta
}

// FlushEvery is how often a node adds its observations to Redis.
const FlushEvery = 5 * time.Second

// week is a week's number since the epoch, weeks starting on Monday
// 00:00 UTC (the epoch was a Thursday).
func week(t time.Time) int64 { return (t.Unix() + 3*86400) / (7 * 86400) }

type sharedKey struct {
	org  string
	week int64
	how  int
}

type delta struct{ sum, n float64 }

// NewShared shares t's observations through rdb, its keys under prefix
// ("fleethub:" when empty).
func NewShared(t *Table, rdb redis.UniversalClient, prefix string, log *slog.Logger) *Shared {
	if prefix == "" {
		prefix = "fleethub:"
	}
	if log == nil {
		log = slog.Default()
	}
	return &Shared{local: t, rdb: rdb, prefix: prefix, log: log, now: t.cfg.Now, pending: map[sharedKey]map[int32]delta{}}
}

// Stats are the node's own table's (Table.Stats).
func (s *Shared) Stats() (cells int, refused int64) { return s.local.Stats() }

// Observe counts a speed in the node's table and for Redis.
func (s *Shared) Observe(org string, edge int, backward bool, at time.Time, kmh float64) {
	if !(kmh >= 0 && kmh <= 250) || edge < 0 {
		return
	}
	s.local.Observe(org, edge, backward, at, kmh)
	k := sharedKey{org, week(at), HourOfWeek(at)}
	s.mu.Lock()
	m := s.pending[k]
	if m == nil {
		m = map[int32]delta{}
		s.pending[k] = m
	}
	d := m[node(edge, backward)]
	d.sum += kmh
	d.n++
	m[node(edge, backward)] = d
	s.mu.Unlock()
}

// key is the Redis hash of an organization's hour in a week: fields
// "<node>:s" (the speeds' sum) and "<node>:n" (their count).
func (s *Shared) key(k sharedKey) string {
	return fmt.Sprintf("%sspeeds:{%s}:%d:%d", s.prefix, k.org, k.week, k.how)
}

// Flush adds the observations counted since the last flush to Redis.
// Those it could not add are kept for the next flush.
func (s *Shared) Flush(ctx context.Context) error {
	s.mu.Lock()
	batch := s.pending
	s.pending = map[sharedKey]map[int32]delta{}
	s.mu.Unlock()
	if len(batch) == 0 {
		return nil
	}
	ttl := s.local.cfg.Retention + 8*24*time.Hour
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for k, m := range batch {
			key := s.key(k)
			for v, d := range m {
				f := strconv.Itoa(int(v))
				p.HIncrByFloat(ctx, key, f+":s", d.sum)
				p.HIncrByFloat(ctx, key, f+":n", d.n)
			}
			p.Expire(ctx, key, ttl)
		}
		return nil
	})
	if err != nil {
		// nothing is known of which commands ran: the sums may count some
		// observations twice at the next flush rather than lose them
		s.mu.Lock()
		for k, m := range batch {
			cur := s.pending[k]
			if cur == nil {
				s.pending[k] = m
				continue
			}
			for v, d := range m {
				c := cur[v]
				c.sum, c.n = c.sum+d.sum, c.n+d.n
				cur[v] = c
			}
		}
		s.mu.Unlock()
		return fmt.Errorf("roadspeed: flush to redis: %w", err)
	}
	return nil
}

// Run flushes every FlushEvery until ctx ends, then once more.
func (s *Shared) Run(ctx context.Context) {
	tk := time.NewTicker(FlushEvery)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if err := s.Flush(fctx); err != nil {
				s.log.Warn("observed road speeds not shared at shutdown", "error", err)
			}
			cancel()
			return
		case <-tk.C:
			if err := s.Flush(ctx); err != nil {
				s.log.Warn("observed road speeds not shared yet", "error", err)
			}
		}
	}
}

// Observed is what org's fleet was observed driving over hours, from
// every node's sums in Redis for the weeks within the retention (the
// current week and as many before as the retention spans); the node's
// own Table when Redis cannot be read.
func (s *Shared) Observed(ctx context.Context, org string, hours []int) *Speeds {
	now := s.now()
	weeks := int64(s.local.cfg.Retention / (7 * 24 * time.Hour))
	cur := week(now)
	var keys []string
	seen := [HoursPerWeek]bool{}
	for _, h := range hours {
		h = (h%HoursPerWeek + HoursPerWeek) % HoursPerWeek
		if seen[h] {
			continue
		}
		seen[h] = true
		for w := cur - weeks; w <= cur; w++ {
			keys = append(keys, s.key(sharedKey{org, w, h}))
		}
	}
	cmds := make([]*redis.MapStringStringCmd, len(keys))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGetAll(ctx, k)
		}
		return nil
	})
	if err != nil {
		s.log.Warn("observed road speeds read from this node alone", "error", err)
		return s.local.Observed(ctx, org, hours)
	}
	type acc struct{ sum, n float64 }
	sums := map[int32]acc{}
	for _, c := range cmds {
		for f, v := range c.Val() {
			name, kind, ok := strings.Cut(f, ":")
			x, err1 := strconv.Atoi(name)
			val, err2 := strconv.ParseFloat(v, 64)
			if !ok || err1 != nil || err2 != nil {
				continue
			}
			a := sums[int32(x)]
			switch kind {
			case "s":
				a.sum += val
			case "n":
				a.n += val
			}
			sums[int32(x)] = a
		}
	}
	sp := &Speeds{kmh: map[int32]float64{}}
	for k, a := range sums {
		if a.n >= float64(s.local.cfg.MinSamples) {
			sp.kmh[k] = a.sum / a.n
		}
	}
	sp.Edges = len(sp.kmh)
	return sp
}
