package api

import (
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	requests    *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rateLimited prometheus.Counter
}

// routeMetrics are resolved once per route at registration, so a request
// touches no map or lock but the per-status sync.Map read.
type routeMetrics struct {
	latency  prometheus.Observer
	byStatus sync.Map // int -> prometheus.Counter
}

func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "fleethub_http_requests_total", Help: "HTTP requests by route and status.",
		}, []string{"method", "route", "status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "fleethub_http_request_duration_seconds", Help: "HTTP request latency by route.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
		}, []string{"method", "route"}),
		rateLimited: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "fleethub_rate_limit_rejections_total", Help: "Requests rejected by rate limits.",
		}),
	}
	if reg != nil {
		reg.MustRegister(m.requests, m.latency, m.rateLimited)
	}
	return m
}

func (m *metrics) route(r *Route) *routeMetrics {
	return &routeMetrics{latency: m.latency.WithLabelValues(r.Method, r.Path)}
}

func (m *metrics) observe(r *Route, status int, d time.Duration) {
	rm := r.metrics
	rm.latency.Observe(d.Seconds())
	c, ok := rm.byStatus.Load(status)
	if !ok {
		c, _ = rm.byStatus.LoadOrStore(status, m.requests.WithLabelValues(r.Method, r.Path, strconv.Itoa(status)))
	}
	c.(prometheus.Counter).Inc()
}
