package health

import (
	"context"
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
)

type tripsEntry struct {
	view TripsView
	at   time.Time
}

// compute builds a fresh report without active trips.
func (c *Checker) compute(ctx context.Context) Report {
	now := c.now()
	r := Report{Timestamp: apitime.Of(now), Version: c.cfg.Version, UptimeSeconds: int64(now.Sub(c.started).Seconds()), Service: Service,
		Dependencies: map[string]string{}}
	pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	start := time.Now()
	err := c.deps.Store.Ping(pctx)
	probe := time.Since(start)
	cancel()
	r.Database.Provider = c.cfg.StoreName
	r.Database.ResponseTimeMS = round(float64(probe.Microseconds()) / 1000)
	if c.deps.Connections != nil {
		r.Database.OpenConnections, r.Database.ActiveConnections = c.deps.Connections()
	}
	if err != nil {
		r.Database.Status = Unhealthy
	} else {
		r.Database.Status = band(r.Database.ResponseTimeMS, 100, 500)
	}
	r.Dependencies[c.cfg.StoreName] = r.Database.Status
	status := r.Database.Status
	status = worst(status, band(float64(r.Database.ActiveConnections), 20, 50))
	if c.deps.Requests != nil {
		w := c.deps.Requests.Last()
		r.Performance = PerformanceView{RequestsPerMinute: w.RequestsPerMin}
		if w.Requests > 0 {
			// an average and a rate of no request are no figures: left
			// null, and nothing to judge the status by
			avg, rate := round(float64(w.AvgLatency.Microseconds())/1000), round(w.ErrorRatePct)
			r.Performance.AvgResponseTimeMS, r.Performance.ErrorRatePercent = &avg, &rate
			status = worst(status, band(avg, 200, 1000))
			status = worst(status, band(rate, 1, 5))
		}
	}
	for name, d := range c.deps.Others {
		st := d.Health(ctx)
		r.Dependencies[name] = st
		if st != Healthy {
			status = worst(status, Degraded)
		}
	}
	r.Status = status
	return r
}

// activeTrips returns the active trips of sc, refreshed after TripsRefresh.
// When they cannot be counted it returns the last count of sc, else
// nulls: never a zero that was not counted.
func (c *Checker) activeTrips(ctx context.Context, sc Scope, now time.Time) TripsView {
	if c.deps.Trips == nil {
		return TripsView{}
	}
	c.mu.Lock()
	e, ok := c.trips[sc]
	c.mu.Unlock()
	if ok && now.Sub(e.at) < c.cfg.TripsRefresh {
		return e.view
	}
	total, orgs, avg, err := c.deps.Trips.ActiveTripStats(ctx, sc)
	if err != nil {
		return e.view // the last count, or nulls
	}
	v := TripsView{TotalCount: &total, OrganizationCount: &orgs}
	if total > 0 {
		// no open trip has no average duration: null, not 0
		avg = round(avg)
		v.AvgDurationMinutes = &avg
	}
	c.mu.Lock()
	if _, ok := c.trips[sc]; !ok && len(c.trips) >= maxTripScopes {
		for k, e := range c.trips {
			if now.Sub(e.at) >= c.cfg.TripsRefresh {
				delete(c.trips, k)
			}
		}
		if len(c.trips) >= maxTripScopes {
			clear(c.trips)
		}
	}
	c.trips[sc] = tripsEntry{view: v, at: now}
	c.mu.Unlock()
	return v
}

// depsReady reports whether no dependency of Deps.Ready is unhealthy.
func (c *Checker) depsReady(ctx context.Context) bool {
	for _, d := range c.deps.Ready {
		if d.Health(ctx) == Unhealthy {
			return false
		}
	}
	return true
}
