package main

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/hub/seglog"
)

// statser is an embedded log (the bus, the stream logs) that counts what
// it wrote.
type statser interface{ Stats() seglog.Stats }

// logCollector exposes the embedded logs' write counts: records written
// in rounds of one write and one fsync each, so that the records a round
// carried (group commit) and the fsyncs a second are on /metrics. The
// Kafka bus and the Redis stream logs have no such counts; a log that is
// not embedded is left out.
type logCollector struct {
	logs                   map[string]statser
	rounds, records, syncs *prometheus.Desc
}

func newLogCollector(logs map[string]any) *logCollector {
	c := &logCollector{logs: map[string]statser{},
		rounds:  prometheus.NewDesc("fleethub_log_write_rounds_total", "Writes of an embedded log (each of the records queued meanwhile).", []string{"log"}, nil),
		records: prometheus.NewDesc("fleethub_log_records_written_total", "Records written by an embedded log.", []string{"log"}, nil),
		syncs:   prometheus.NewDesc("fleethub_log_syncs_total", "fsyncs of an embedded log's segments.", []string{"log"}, nil),
	}
	for name, l := range logs {
		if s, ok := l.(statser); ok {
			c.logs[name] = s
		}
	}
	return c
}

func (c *logCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.rounds
	ch <- c.records
	ch <- c.syncs
}

func (c *logCollector) Collect(ch chan<- prometheus.Metric) {
	for name, l := range c.logs {
		s := l.Stats()
		ch <- prometheus.MustNewConstMetric(c.rounds, prometheus.CounterValue, float64(s.Rounds), name)
		ch <- prometheus.MustNewConstMetric(c.records, prometheus.CounterValue, float64(s.Records), name)
		ch <- prometheus.MustNewConstMetric(c.syncs, prometheus.CounterValue, float64(s.Syncs), name)
	}
}
