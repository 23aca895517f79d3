// Package roadspeed holds the speeds a fleet was observed driving on the
// roads: per organization, road edge, direction of travel and hour of
// the week (UTC), the mean of the speeds its matched trip points were
// driven at, for the route optimizer's real_time_traffic. Observations
// older than the retention are forgotten; a cell's mean follows its
// newest observations once it holds Weight of them. Shared adds every
// node's observations up in Redis.
package roadspeed

import (
	"context"
	"sync"
	"time"
)

// Defaults of Config.
const (
	DefaultRetention  = 28 * 24 * time.Hour
	DefaultMaxCells   = 2_000_000
	DefaultMinSamples = 3
	// Weight bounds how many observations a cell's mean counts: past
	// it, each new one moves the mean by 1/Weight of its difference.
	Weight = 200
)

// Config of a Table; zero fields take the defaults.
type Config struct {
	Retention  time.Duration
	MaxCells   int // cells over every organization; past it new cells are not made
	MinSamples int // observations an edge and direction needs over the hours asked
	Now        func() time.Time
}

// Table is the observed speeds; safe for concurrent use.
type Table struct {
	cfg     Config
	mu      sync.Mutex
	orgs    map[string]*[HoursPerWeek]map[int32]cell
	cells   int
	refused int64
	swept   time.Time // the last sweep of cells past the retention
}

// HoursPerWeek is the number of hours of the week, Monday 00:00 UTC
// being hour 0.
const HoursPerWeek = 7 * 24

// cell is one edge, direction and hour's observations.
type cell struct {
	mean float32 // km/h
	n    uint16  // observations counted, at most Weight
	last uint32  // unix seconds of the newest
}

// New makes an empty table.
func New(cfg Config) *Table {
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.MaxCells <= 0 {
		cfg.MaxCells = DefaultMaxCells
	}
	if cfg.MinSamples <= 0 {
		cfg.MinSamples = DefaultMinSamples
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Table{cfg: cfg, orgs: map[string]*[HoursPerWeek]map[int32]cell{}}
}

// HourOfWeek is t's hour of the week in UTC, Monday 00:00 being 0.
func HourOfWeek(t time.Time) int {
	t = t.UTC()
	return (int(t.Weekday())+6)%7*24 + t.Hour()
}

// node is an edge and direction as one key.
func node(edge int, backward bool) int32 {
	v := int32(2 * edge)
	if backward {
		v++
	}
	return v
}

// Observe counts a speed, km/h, driven on edge (backward: against its
// points) at time at by org's fleet. Speeds outside 0 to 250 km/h are
// ignored.
func (t *Table) Observe(org string, edge int, backward bool, at time.Time, kmh float64) {
	if !(kmh >= 0 && kmh <= 250) || edge < 0 {
		return
	}
	h := HourOfWeek(at)
	sec := uint32(at.Unix())
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cells >= t.cfg.MaxCells {
		t.sweep() // before the maps are looked up: it may drop them
	}
	hours := t.orgs[org]
	if hours == nil {
		hours = &[HoursPerWeek]map[int32]cell{}
		t.orgs[org] = hours
	}
	m := hours[h]
	if m == nil {
		m = map[int32]cell{}
		hours[h] = m
	}
	k := node(edge, backward)
	c, ok := m[k]
	if !ok {
		if t.cells >= t.cfg.MaxCells {
			t.refused++
			return
		}
		t.cells++
	}
	if ok && int64(sec)-int64(c.last) > int64(t.cfg.Retention/time.Second) {
		c = cell{} // its observations are too old to count
	}
	if c.n < Weight {
		c.n++
	}
	c.mean += (float32(kmh) - c.mean) / float32(c.n)
	if sec > c.last {
		c.last = sec
	}
	m[k] = c
}

// sweep forgets the cells past the retention, at most once an hour, so
// that a full table makes room; t.mu held.
func (t *Table) sweep() {
	now := t.cfg.Now()
	if now.Sub(t.swept) < time.Hour {
		return
	}
	t.swept = now
	oldest := now.Add(-t.cfg.Retention).Unix()
	for org, hours := range t.orgs {
		empty := true
		for h, m := range hours {
			for k, c := range m {
				if int64(c.last) < oldest {
					delete(m, k)
					t.cells--
				}
			}
			if len(m) == 0 {
				hours[h] = nil
			} else {
				empty = false
			}
		}
		if empty {
			delete(t.orgs, org)
		}
	}
}

// Speeds is what org's fleet was observed driving over the hours of the
// week asked for (HourOfWeek), within the retention: per edge and
// direction with at least MinSamples observations over those hours, the
// mean of its cells weighted by their observations. Edges counts them.
type Speeds struct {
	kmh   map[int32]float64
	Edges int
}

// Speed is the speed observed on edge travelled forward or backward.
func (s *Speeds) Speed(edge int, backward bool) (float64, bool) {
	v, ok := s.kmh[node(edge, backward)]
	return v, ok
}

// Observed gathers org's speeds over hours (each taken modulo
// HoursPerWeek). The table is in memory: ctx is not used.
func (t *Table) Observed(_ context.Context, org string, hours []int) *Speeds {
	oldest := t.cfg.Now().Add(-t.cfg.Retention).Unix()
	type acc struct{ sum, n float64 }
	sums := map[int32]acc{}
	t.mu.Lock()
	if hs := t.orgs[org]; hs != nil {
		seen := [HoursPerWeek]bool{}
		for _, h := range hours {
			h = (h%HoursPerWeek + HoursPerWeek) % HoursPerWeek
			if seen[h] {
				continue
			}
			seen[h] = true
			for k, c := range hs[h] {
				if int64(c.last) < oldest {
					continue
				}
				a := sums[k]
				a.sum += float64(c.mean) * float64(c.n)
				a.n += float64(c.n)
				sums[k] = a
			}
		}
	}
	t.mu.Unlock()
	s := &Speeds{kmh: map[int32]float64{}}
	for k, a := range sums {
		if a.n >= float64(t.cfg.MinSamples) {
			s.kmh[k] = a.sum / a.n
		}
	}
	s.Edges = len(s.kmh)
	return s
}

// Stats are the table's size and the observations it refused for want
// of room.
func (t *Table) Stats() (cells int, refused int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.cells, t.refused
}
