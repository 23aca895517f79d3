package trips

import "github.com/prometheus/client_golang/prometheus"

// roadMetrics are the road matcher's figures on /metrics.
type roadMetrics struct {
	lag      prometheus.Histogram
	wait     prometheus.Histogram
	queued   prometheus.Gauge
	overflow prometheus.Counter
}

func newRoadMetrics() *roadMetrics {
	return &roadMetrics{
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fleethub_trips_road_match_lag_seconds",
			Help:    "Time from a trip point's durable acceptance to its road being final (matched, unmatched, or judged without a road), the matcher's window of 4 later points included.",
			Buckets: []float64{0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 3, 4, 4.5, 5, 5.5, 6, 7.5, 10, 15, 20, 30, 60, 300}}),
		wait: prometheus.NewHistogram(prometheus.HistogramOpts{Name: "fleethub_trips_road_match_wait_seconds",
			Help:    "Time from a trip point's durable acceptance to the road matcher taking it up: how far the matcher is behind the uploads, its window aside.",
			Buckets: []float64{0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60}}),
		queued: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fleethub_trips_road_match_queued_points",
			Help: "Trip points waiting for the road matcher."}),
		overflow: prometheus.NewCounter(prometheus.CounterOpts{Name: "fleethub_trips_road_match_overflow_points_total",
			Help: "Trip points the road matcher's full queue made judged without a road (match none)."}),
	}
}

// Collectors are the trip service's metrics, for the registry /metrics
// serves.
func (s *Service) Collectors() []prometheus.Collector {
	cs := []prometheus.Collector{s.roadMet.lag, s.roadMet.wait, s.roadMet.queued, s.roadMet.overflow}
	if sp := s.speeds; sp != nil {
		cs = append(cs,
			prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "fleethub_road_speed_cells",
				Help: "Road edge, direction and hour-of-week cells of observed speeds held (real_time_traffic)."},
				func() float64 { c, _ := sp.Stats(); return float64(c) }),
			prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "fleethub_road_speed_refused_total",
				Help: "Observed speeds not kept: the table was full of cells younger than the retention."},
				func() float64 { _, r := sp.Stats(); return float64(r) }))
	}
	return cs
}
