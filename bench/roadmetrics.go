package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
)

// roadMetrics are the server's road matcher figures on /metrics.
type roadMetrics struct {
	lag      *histogram
	wait     *histogram
	overflow float64
	queued   float64
}

// histogram is a Prometheus histogram read from /metrics: cumulative
// counts per upper bound, in order.
type histogram struct {
	le    []float64
	cum   []float64
	count float64
}

// minus is h's observations since before (the same buckets).
func (h *histogram) minus(before *histogram) *histogram {
	d := &histogram{le: h.le, cum: make([]float64, len(h.cum)), count: h.count - before.count}
	for i := range h.cum {
		d.cum[i] = h.cum[i]
		if i < len(before.cum) {
			d.cum[i] -= before.cum[i]
		}
	}
	return d
}

// quantile is the q-quantile, linear within the bucket it falls in (the
// largest finite bound when it falls past it).
func (h *histogram) quantile(q float64) float64 {
	if h.count == 0 {
		return 0
	}
	rank := q * h.count
	lo, below := 0.0, 0.0
	for i, le := range h.le {
		if h.cum[i] >= rank {
			if math.IsInf(le, 1) {
				return lo
			}
			in := h.cum[i] - below
			if in <= 0 {
				return le
			}
			return lo + (le-lo)*(rank-below)/in
		}
		lo, below = le, h.cum[i]
	}
	return lo
}

// within is the share of observations at most le, which must be one of
// the bounds (0 when it is not).
func (h *histogram) within(le float64) float64 {
	for i, b := range h.le {
		if b == le && h.count > 0 {
			return h.cum[i] / h.count
		}
	}
	return 0
}

// errNoRoads is readRoadMetrics' error for a server without a road
// matcher (no --osm).
var errNoRoads = errors.New("the server has no road matcher (started without --osm)")

// readRoadMetrics reads the road matcher's figures from the server's
// /metrics; errNoRoads when the server has none.
func readRoadMetrics(ctx context.Context, srv ServerConfig, base string) (roadMetrics, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return roadMetrics{}, fmt.Errorf("bench: %w", err)
	}
	res, err := srv.client().Do(req)
	if err != nil {
		return roadMetrics{}, fmt.Errorf("bench: /metrics: %w", err)
	}
	defer res.Body.Close()
	m := roadMetrics{lag: &histogram{}, wait: &histogram{}}
	hists := map[string]*histogram{"fleethub_trips_road_match_lag_seconds": m.lag, "fleethub_trips_road_match_wait_seconds": m.wait}
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		name, v, ok := strings.Cut(line, " ")
		if !ok || strings.HasPrefix(line, "#") {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			continue
		}
		base, le, isBucket := strings.Cut(name, `_bucket{le="`)
		if h := hists[base]; isBucket && h != nil {
			b, err := strconv.ParseFloat(strings.TrimSuffix(le, `"}`), 64)
			if err != nil {
				continue
			}
			h.le, h.cum = append(h.le, b), append(h.cum, f)
			seen = true
			continue
		}
		if h := hists[strings.TrimSuffix(name, "_count")]; h != nil && strings.HasSuffix(name, "_count") {
			h.count = f
			continue
		}
		switch {
		case name == "fleethub_trips_road_match_overflow_points_total":
			m.overflow = f
		case name == "fleethub_trips_road_match_queued_points":
			m.queued = f
		}
	}
	if err := sc.Err(); err != nil {
		return roadMetrics{}, fmt.Errorf("bench: /metrics: %w", err)
	}
	if !seen {
		return roadMetrics{}, errNoRoads
	}
	return m, nil
}
