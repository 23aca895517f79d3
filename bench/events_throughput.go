package bench

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"
)

// EventsResult is a throughput run's outcome.
type EventsResult struct {
	Streams, Vehicles, Conns, Batch int
	Filters, Rules                  string
	Rate                            int
	OtherStreams                    int
	Accepted, Requests, Errors      int64
	FirstError                      string
	SendElapsed                     time.Duration
	RequestLatencies                []time.Duration `json:"-"`
	// Appends the accepted events owe the streams' logs, and what the
	// logs had at the end of sending and at the end.
	ExpectedAppends, AppendsAtSendEnd, Appends int64
	// Drained: when every owed append was in the logs, from the first
	// request (0: not within Drain).
	Drained time.Duration
	// SteadyRate: appends a second between the first poll after one
	// second of sending and the end of sending, in events.
	SteadyRate float64
	// ServerCPUSeconds is the server's CPU from the first request to
	// the end of the drain (Measured after the first request); IdleCPU
	// its share of one core in the second before (another run's backlog
	// would show there).
	ServerCPUSeconds float64
	Measured         time.Duration
	IdleCPU          float64
	ServerRSSBytes   float64
}

// Print writes the report as a table.
func (r *EventsResult) Print(w io.Writer) { r.Report().WriteTable(w) }

// Report is the result's figures.
func (r *EventsResult) Report() *Report {
	per := float64(r.ExpectedAppends) / float64(max(1, r.Accepted))
	secs := r.SendElapsed.Seconds()
	rep := &Report{Mode: "events"}
	rep.Add("streams", "streams", r.Streams, "")
	rep.Add("filters", "filters", r.Filters, "")
	rep.Add("appends_per_event", "appends per event", per, "")
	rep.Add("rules", "rules", r.Rules, "")
	rep.Add("vehicles", "vehicles", r.Vehicles, "")
	rep.Add("senders", "senders", r.Conns, "")
	rep.Add("batch", "events a request", r.Batch, "")
	rep.Add("offered_per_s", "offered", r.Rate, "events/s (0: as fast as possible)")
	if r.OtherStreams > 0 {
		rep.Add("other_streams", "WARNING: other events streams counted", r.OtherStreams, "")
	}
	rep.Add("accepted", "events accepted", r.Accepted, "")
	rep.Add("ingest_per_s", "ingest rate", float64(r.Accepted)/secs, "events/s")
	rep.Add("requests", "requests", r.Requests, "")
	rep.Add("errors", "errors", r.Errors, "")
	if r.FirstError != "" {
		rep.Add("first_error", "first error", r.FirstError, "")
	}
	rep.Add("request_p50_ms", "request p50", quantile(r.RequestLatencies, .5), "")
	rep.Add("request_p99_ms", "request p99", quantile(r.RequestLatencies, .99), "")
	rep.Add("pipeline_sending_per_s", "pipeline while sending", r.SteadyRate, "events/s")
	rep.Add("behind_at_send_end", "behind at the end of sending", float64(r.ExpectedAppends-r.AppendsAtSendEnd)/per, "events")
	if r.Drained > 0 {
		rep.Add("drained_s", "all appended after", r.Drained.Seconds(), "s")
		rep.Add("pipeline_overall_per_s", "pipeline overall", float64(r.Accepted)/r.Drained.Seconds(), "events/s")
		if behind, d := float64(r.ExpectedAppends-r.AppendsAtSendEnd)/per, r.Drained-r.SendElapsed; d >= time.Second {
			rep.Add("pipeline_after_sending_per_s", "pipeline alone after sending", behind/d.Seconds(), "events/s")
		}
	} else {
		rep.Add("not_drained_appends", "NOT drained: appends", r.Appends, fmt.Sprintf("of %d", r.ExpectedAppends))
	}
	if r.Appends > r.ExpectedAppends {
		rep.Add("extra_appends", "WARNING: appends beyond the accepted events'", r.Appends-r.ExpectedAppends, "")
	}
	rep.Add("server_cpu_s", "server CPU", r.ServerCPUSeconds, fmt.Sprintf("s over %.1f s", r.Measured.Seconds()))
	rep.Add("server_cpu_pct", "server CPU share of one core", 100*r.ServerCPUSeconds/r.Measured.Seconds(), "%")
	rep.Add("server_cpu_us_per_event", "server CPU per accepted event", 1e6*r.ServerCPUSeconds/float64(max(1, r.Accepted)), "µs")
	rep.Add("server_rss_mib", "server RSS", r.ServerRSSBytes/(1<<20), "MiB")
	rep.Add("server_idle_cpu_pct", "server CPU before the run", 100*r.IdleCPU, "% of one core")
	return rep
}

// Events runs the throughput measurement.
func Events(ctx context.Context, cfg EventsConfig) (*EventsResult, error) {
	cfg.Latency = false
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	dedup, ordering, err := parseRules(cfg.Rules)
	if err != nil {
		return nil, err
	}
	r := newEventRun(cfg)
	var ids []string
	defer func() { r.stop(ids) }()
	want := map[string]bool{}
	for i := range cfg.Streams {
		id, err := r.start(ctx, r.filter(i), dedup, ordering)
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
		want[id] = true
	}
	others, err := r.otherStreams(ctx, ids)
	if err != nil {
		return nil, err
	}
	res := &EventsResult{Streams: cfg.Streams, Vehicles: cfg.Vehicles, Conns: cfg.Conns, Batch: cfg.Batch, Filters: cfg.Filters,
		Rules: rulesName(dedup, ordering), Rate: cfg.Rate, OtherStreams: others}
	res.IdleCPU = idleCPU(ctx, cfg.URL)
	cpu0, _ := serverProcess(ctx, cfg.URL)
	start := time.Now()
	if err := r.sendAndPoll(ctx, start, want, res); err != nil {
		return nil, err
	}
	if err := r.awaitAppends(ctx, start, want, res); err != nil {
		return nil, err
	}
	cpu1, rss := serverProcess(ctx, cfg.URL)
	res.ServerCPUSeconds, res.ServerRSSBytes, res.Measured = cpu1-cpu0, rss, time.Since(start)
	return res, nil
}

// appended is how many events the logs of the streams in want hold in
// all.
func (r *eventRun) appended(ctx context.Context, want map[string]bool) (int64, error) {
	offs, err := r.offsets(ctx, want)
	var n int64
	for _, o := range offs {
		n += o
	}
	return n, err
}

// sendAndPoll sends for Duration from start while it polls the streams'
// logs every PollEvery, and sets the result's ingest figures and the
// steady rate: from the first poll after one second to the last poll
// before the end of sending.
func (r *eventRun) sendAndPoll(ctx context.Context, start time.Time, want map[string]bool, res *EventsResult) error {
	var s eventsSent
	sendEnd := start.Add(r.cfg.Duration)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.send(ctx, sendEnd, &s)
	}()
	var t1, t2 time.Time
	var a1, a2 int64
	tick := time.NewTicker(r.cfg.PollEvery)
	defer tick.Stop()
	sending := true
	for sending {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
			sending = false
		case now := <-tick.C:
			a, err := r.appended(ctx, want)
			if err != nil {
				return err
			}
			if now.Sub(start) >= time.Second && t1.IsZero() {
				t1, a1 = now, a
			}
			t2, a2 = now, a
		}
	}
	res.SendElapsed = time.Since(start)
	res.Accepted, res.Requests, res.Errors = s.accepted.Load(), s.requests.Load(), s.errors.Load()
	res.FirstError, res.RequestLatencies, res.ExpectedAppends = s.firstError, s.lat, s.appends.Load()
	slices.Sort(res.RequestLatencies)
	per := float64(res.ExpectedAppends) / float64(max(1, res.Accepted))
	if !t1.IsZero() && t2.After(t1) {
		res.SteadyRate = float64(a2-a1) / t2.Sub(t1).Seconds() / per
	}
	return nil
}

// awaitAppends polls the streams' logs after the sending, until they hold
// every append the accepted events owe or Drain has passed, and sets what
// they held at the end of sending and at the end, and when they had
// everything (from start).
func (r *eventRun) awaitAppends(ctx context.Context, start time.Time, want map[string]bool, res *EventsResult) error {
	var err error
	if res.AppendsAtSendEnd, err = r.appended(ctx, want); err != nil {
		return err
	}
	drainEnd := time.Now().Add(r.cfg.Drain)
	for {
		a, err := r.appended(ctx, want)
		if err != nil {
			return err
		}
		res.Appends = a
		if a >= res.ExpectedAppends {
			res.Drained = time.Since(start)
			return nil
		}
		if time.Now().After(drainEnd) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(r.cfg.PollEvery / 5):
		}
	}
}

// idleCPU waits, up to 60 s, for the server to use less than a tenth of
// a core (an earlier run's backlog) and returns its share of one core in
// the last second.
func idleCPU(ctx context.Context, base string) float64 {
	var share float64
	for range 60 {
		c0, _ := serverProcess(ctx, base)
		t0 := time.Now()
		select {
		case <-ctx.Done():
			return share
		case <-time.After(time.Second):
		}
		c1, _ := serverProcess(ctx, base)
		if share = (c1 - c0) / time.Since(t0).Seconds(); share < 0.1 {
			break
		}
	}
	return share
}
