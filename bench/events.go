package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
	"github.com/valyala/fasthttp"
)

// The events generator measures what the processing rules of events
// streams (deduplication, event_ordering) cost the whole hub. It starts
// Streams events streams with the rules asked for, and Conns senders post
// events (POST /v1/events, Batch a request) of Vehicles vehicles at Rate
// events a second: every event a new event_id, each vehicle's
// metadata.sequence_number counting up from 1 in the order the hub
// accepts them (a vehicle belongs to one sender, which waits for each
// answer before its next request), so an ordering stream never waits for
// a gap. The vehicles' names are new in every run: the hub's reorder
// buffers know the numbers of earlier runs' vehicles.
//
// Throughput: the generator reads the streams' log offsets (lag.last_offset
// in GET /api/v1/streaming/streams, one request every PollEvery) while it
// sends and until every accepted event is in the logs of every stream
// that matches it, so it measures what the pipeline appended, not what
// ingest accepted; no websocket client adds its own cost.
//
// Latency (Latency set): two streams with the same filter, one with the
// rules asked for and one without, each followed by a websocket client;
// per event, the difference of its arrival times on the two is what the
// rules added.

// EventsConfig drives `fleethub-bench events`.
type EventsConfig struct {
	URL string
	Key string
	// Streams started (default 100). Filters "mix" (default): 9 in 10
	// follow a group of vehicles (vehicle v is in group v%groups), the
	// rest one category each (the events take five categories in turn):
	// with 100 streams each event matches 3, its group's and two
	// category streams. "all": every stream matches every event (its
	// filter lists the five categories, so the hub's own device_offline
	// events about an earlier run's vehicles match none).
	Streams int
	Filters string
	// Rules of every stream (of the first stream with Latency): a comma
	// list of deduplication (dedup) and event_ordering (ordering), or
	// none.
	Rules    string
	Rate     int           // events per second offered in total; 0: as fast as the senders go
	Duration time.Duration // sending time, default 10s
	Batch    int           // events per request, default 500 (at most 1,000)
	Vehicles int           // default 1000
	Conns    int           // senders, each with one request in flight, default 8
	// Drain bounds the wait for the pipeline after the last request
	// (default 60s; 10s with Latency).
	Drain     time.Duration
	PollEvery time.Duration // default 250ms
	Latency   bool          // set by EventsLatency
}

// eventCategories are the categories the generator's events take in turn.
var eventCategories = [...]string{"safety_events", "operational_events", "driver_events", "vehicle_events", "maintenance_events"}

func (cfg *EventsConfig) defaults() error {
	if cfg.Streams <= 0 {
		cfg.Streams = 100
	}
	if cfg.Filters == "" {
		cfg.Filters = "mix"
	}
	if cfg.Filters != "mix" && cfg.Filters != "all" {
		return fmt.Errorf("bench: --filters %q: mix or all", cfg.Filters)
	}
	if cfg.Duration <= 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	cfg.Batch = min(cfg.Batch, 1000)
	if cfg.Vehicles <= 0 {
		cfg.Vehicles = 1000
	}
	if cfg.Conns <= 0 {
		cfg.Conns = 8
	}
	cfg.Conns = min(cfg.Conns, cfg.Vehicles)
	if cfg.Drain <= 0 {
		cfg.Drain = 60 * time.Second
		if cfg.Latency {
			cfg.Drain = 10 * time.Second
		}
	}
	if cfg.PollEvery <= 0 {
		cfg.PollEvery = 250 * time.Millisecond
	}
	_, _, err := parseRules(cfg.Rules)
	return err
}

// parseRules reads a --rules list.
func parseRules(s string) (dedup, ordering bool, err error) {
	for r := range strings.SplitSeq(s, ",") {
		switch strings.TrimSpace(r) {
		case "", "none":
		case "dedup", "deduplication":
			dedup = true
		case "ordering", "event_ordering":
			ordering = true
		default:
			return false, false, fmt.Errorf("bench: --rules: unknown rule %q (deduplication, event_ordering, none)", r)
		}
	}
	return dedup, ordering, nil
}

func rulesName(dedup, ordering bool) string {
	var rs []string
	if dedup {
		rs = append(rs, "deduplication")
	}
	if ordering {
		rs = append(rs, "event_ordering")
	}
	if len(rs) == 0 {
		return "none"
	}
	return strings.Join(rs, ",")
}

// eventRun is one run's names and streams.
type eventRun struct {
	cfg      EventsConfig
	id       string // in the run's vehicle names and event ids
	vehicles []string
	groups   int // vehicle-group streams of the mix
}

func newEventRun(cfg EventsConfig) *eventRun {
	r := &eventRun{cfg: cfg, id: strconv.FormatInt(time.Now().UnixNano()/1e6%1e9, 36)}
	for v := range cfg.Vehicles {
		r.vehicles = append(r.vehicles, "bv-"+r.id+"-"+strconv.Itoa(v))
	}
	r.groups = max(1, cfg.Streams*9/10)
	return r
}

// filter is the event_filters of stream i.
func (r *eventRun) filter(i int) map[string]any {
	if r.cfg.Filters == "all" {
		// every category the generator sends: not the hub's own
		// system_events (device_offline of an earlier run's vehicles)
		return map[string]any{"categories": eventCategories[:]}
	}
	if i >= r.groups {
		return map[string]any{"categories": []string{eventCategories[(i-r.groups)%len(eventCategories)]}}
	}
	var ids []string
	for v := i; v < len(r.vehicles); v += r.groups {
		ids = append(ids, r.vehicles[v])
	}
	return map[string]any{"vehicle_ids": ids}
}

// matches is how many streams take an event of vehicle v and category c.
func (r *eventRun) matches(v, c int) int64 {
	if r.cfg.Filters == "all" {
		return int64(r.cfg.Streams)
	}
	n := int64(0)
	if v%r.groups < r.cfg.Streams {
		n++
	}
	for j := r.groups; j < r.cfg.Streams; j++ {
		if (j-r.groups)%len(eventCategories) == c {
			n++
		}
	}
	return n
}

// start starts one events stream and returns its id.
func (r *eventRun) start(ctx context.Context, filter map[string]any, dedup, ordering bool) (string, error) {
	var st struct {
		StreamID string `json:"stream_id"`
	}
	body := map[string]any{"event_filters": filter, "processing_rules": map[string]any{"deduplication": dedup, "event_ordering": ordering}}
	if err := apiCall(ctx, "POST", r.cfg.URL+"/api/v1/streaming/events/start", r.cfg.Key, body, &st); err != nil {
		return "", fmt.Errorf("bench: start stream: %w", err)
	}
	return st.StreamID, nil
}

func (r *eventRun) stop(ids []string) {
	for _, id := range ids {
		_ = apiCall(context.Background(), "POST", r.cfg.URL+"/api/v1/streaming/events/stop", r.cfg.Key, map[string]any{"stream_id": id}, nil)
	}
}

// otherStreams counts the active events streams of the key's
// organization that are not the run's: their rules and matches would
// count in the figures.
func (r *eventRun) otherStreams(ctx context.Context, mine []string) (int, error) {
	offs, err := r.offsets(ctx, nil)
	if err != nil {
		return 0, err
	}
	n := 0
	for id := range offs {
		if !slices.Contains(mine, id) {
			n++
		}
	}
	return n, nil
}

// offsets reads lag.last_offset of the active events streams of the
// key's organization, of those in want when want is not nil.
func (r *eventRun) offsets(ctx context.Context, want map[string]bool) (map[string]int64, error) {
	out := map[string]int64{}
	cursor := ""
	for {
		u := r.cfg.URL + "/api/v1/streaming/streams?kind=events&status=active&limit=200"
		if cursor != "" {
			u += "&cursor=" + url.QueryEscape(cursor)
		}
		var page struct {
			Streams []struct {
				StreamID string `json:"stream_id"`
				Lag      struct {
					LastOffset int64 `json:"last_offset"`
				} `json:"lag"`
			} `json:"streams"`
			Pagination struct {
				NextCursor *string `json:"next_cursor"`
			} `json:"pagination"`
		}
		if err := apiCall(ctx, "GET", u, r.cfg.Key, nil, &page); err != nil {
			return nil, err
		}
		for _, s := range page.Streams {
			if want == nil || want[s.StreamID] {
				out[s.StreamID] = s.Lag.LastOffset
			}
		}
		if page.Pagination.NextCursor == nil || *page.Pagination.NextCursor == "" {
			return out, nil
		}
		cursor = *page.Pagination.NextCursor
	}
}

// eventSender posts the events of its vehicles, one request at a time.
type eventSender struct {
	vehicles []int   // indexes into the run's vehicles
	seq      []int64 // per vehicle of vehicles
	next     int
	buf      []byte
}

// eventsSent is what the senders did; sentAt and the event numbers are
// only kept with Latency.
type eventsSent struct {
	accepted, requests, errors atomic.Int64
	appends                    atomic.Int64 // expected in the streams' logs for the accepted events
	mu                         sync.Mutex
	firstError                 string
	lat                        []time.Duration // per request
	sentAt                     []int64         // per event number, ns
}

func (s *eventsSent) fail(msg string) {
	s.errors.Add(1)
	s.mu.Lock()
	if s.firstError == "" {
		s.firstError = msg
	}
	s.mu.Unlock()
}

// send runs the senders until the deadline.
func (r *eventRun) send(ctx context.Context, deadline time.Time, s *eventsSent) {
	cfg := r.cfg
	u, _ := url.Parse(cfg.URL)
	client := &fasthttp.HostClient{Addr: u.Host, MaxConns: cfg.Conns, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Batch*cfg.Conns) / float64(cfg.Rate))
	}
	var n atomic.Int64 // event numbers, from 0
	var wg sync.WaitGroup
	for w := range cfg.Conns {
		snd := &eventSender{}
		for v := w; v < cfg.Vehicles; v += cfg.Conns {
			snd.vehicles = append(snd.vehicles, v)
		}
		snd.seq = make([]int64, len(snd.vehicles))
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			var lat []time.Duration
			// senders start spread over one interval
			next := time.Now().Add(time.Duration(w) * interval / time.Duration(cfg.Conns))
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if interval > 0 {
					if d := time.Until(next); d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
					next = next.Add(interval)
					if !time.Now().Before(deadline) {
						break
					}
				}
				first := n.Add(int64(cfg.Batch)) - int64(cfg.Batch)
				now := time.Now()
				body, appends := r.body(snd, first, now)
				req.Reset()
				req.SetRequestURI(cfg.URL + "/v1/events")
				req.Header.SetMethod("POST")
				req.Header.SetContentType("application/json")
				req.Header.Set("X-API-Key", cfg.Key)
				req.SetBodyRaw(body)
				if s.sentAt != nil {
					for i := first; i < first+int64(cfg.Batch) && i < int64(len(s.sentAt)); i++ {
						s.sentAt[i] = now.UnixNano()
					}
				}
				t0 := time.Now()
				err := client.Do(req, resp)
				s.requests.Add(1)
				if err != nil {
					s.fail(err.Error())
					continue
				}
				if resp.StatusCode() != 202 {
					s.fail(fmt.Sprintf("status %d: %.200s", resp.StatusCode(), resp.Body()))
					continue
				}
				lat = append(lat, time.Since(t0))
				s.accepted.Add(int64(cfg.Batch))
				s.appends.Add(appends)
			}
			s.mu.Lock()
			s.lat = append(s.lat, lat...)
			s.mu.Unlock()
		}()
	}
	wg.Wait()
}

// body builds one request of Batch events numbered from first, the
// sender's vehicles in turn; it returns the appends the streams owe them.
func (r *eventRun) body(snd *eventSender, first int64, now time.Time) ([]byte, int64) {
	b := append(snd.buf[:0], `{"events":[`...)
	var appends int64
	ts := now.UTC().AppendFormat(nil, "2006-01-02T15:04:05.000Z07:00")
	for j := range int64(r.cfg.Batch) {
		if j > 0 {
			b = append(b, ',')
		}
		k := snd.next
		snd.next = (snd.next + 1) % len(snd.vehicles)
		v := snd.vehicles[k]
		snd.seq[k]++
		n := first + j
		c := int(n % int64(len(eventCategories)))
		appends += r.matches(v, c)
		b = append(b, `{"event_id":"be-`...)
		b = append(b, r.id...)
		b = append(b, '-')
		b = strconv.AppendInt(b, n, 10)
		b = append(b, `","event_type":"harsh_braking","category":"`...)
		b = append(b, eventCategories[c]...)
		b = append(b, `","timestamp":"`...)
		b = append(b, ts...)
		b = append(b, `","severity":"high","priority":"normal","source":{"vehicle_id":"`...)
		b = append(b, r.vehicles[v]...)
		b = append(b, `","driver_id":"bd-`...)
		b = append(b, r.vehicles[v][3:]...)
		b = append(b, `"},"location":{"latitude":`...)
		b = fixed(b, 40+float64(v)*1e-3, 6)
		b = append(b, `,"longitude":`...)
		b = fixed(b, -83+float64(snd.seq[k]%1000)*1e-5, 6)
		b = append(b, `},"event_data":{"deceleration_g":0.62,"speed_before_kmh":71.5,"~n":`...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, `},"metadata":{"sequence_number":`...)
		b = strconv.AppendInt(b, snd.seq[k], 10)
		b = append(b, `,"source_system":"bench"}}`...)
	}
	b = append(b, "]}"...)
	snd.buf = b
	return b, appends
}

// EventsResult is a throughput run's outcome.
type EventsResult struct {
	Streams, Vehicles, Conns, Batch int
	Filters, Rules                  string
	Rate                            int
	OtherStreams                    int
	Accepted, Requests, Errors      int64
	FirstError                      string
	SendElapsed                     time.Duration
	RequestLatencies                []time.Duration
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

// Print writes a summary.
func (r *EventsResult) Print(w io.Writer) {
	per := float64(r.ExpectedAppends) / float64(max(1, r.Accepted))
	secs := r.SendElapsed.Seconds()
	offered := "as fast as possible"
	if r.Rate > 0 {
		offered = fmt.Sprintf("%d events/s offered", r.Rate)
	}
	fmt.Fprintf(w, "events: %d streams (filters %s: %.2f appends/event), rules %s; %d vehicles, %d senders × %d events a request, %s\n",
		r.Streams, r.Filters, per, r.Rules, r.Vehicles, r.Conns, r.Batch, offered)
	if r.OtherStreams > 0 {
		fmt.Fprintf(w, "  WARNING: %d other active events streams in the organization count in the figures\n", r.OtherStreams)
	}
	res := Result{Latencies: r.RequestLatencies}
	fmt.Fprintf(w, "  ingest: %d events accepted in %.1fs = %.0f events/s; %d requests, %d errors%s; request p50 %s p99 %s\n",
		r.Accepted, secs, float64(r.Accepted)/secs, r.Requests, r.Errors, firstErr(r.FirstError), res.Quantile(.5), res.Quantile(.99))
	fmt.Fprintf(w, "  pipeline while sending: %.0f events/s (%.0f appends/s); behind at the end of sending: %.0f events\n",
		r.SteadyRate, r.SteadyRate*per, float64(r.ExpectedAppends-r.AppendsAtSendEnd)/per)
	if r.Drained > 0 {
		fmt.Fprintf(w, "  pipeline overall: every accepted event appended %.2fs after the first request = %.0f events/s\n",
			r.Drained.Seconds(), float64(r.Accepted)/r.Drained.Seconds())
		if behind, d := float64(r.ExpectedAppends-r.AppendsAtSendEnd)/per, r.Drained-r.SendElapsed; d >= time.Second {
			fmt.Fprintf(w, "  pipeline alone after sending: %.0f events in %.2fs = %.0f events/s\n", behind, d.Seconds(), behind/d.Seconds())
		}
	} else {
		fmt.Fprintf(w, "  pipeline overall: NOT drained: %d of %d appends\n", r.Appends, r.ExpectedAppends)
	}
	if r.Appends > r.ExpectedAppends {
		fmt.Fprintf(w, "  WARNING: %d appends more than the accepted events owe (other traffic of the organization)\n", r.Appends-r.ExpectedAppends)
	}
	fmt.Fprintf(w, "  server CPU %.1f s = %.0f%% of one core over %.1fs, %.1f µs per accepted event; RSS %.0f MiB; before the run %.0f%% of one core\n",
		r.ServerCPUSeconds, 100*r.ServerCPUSeconds/r.Measured.Seconds(), r.Measured.Seconds(), 1e6*r.ServerCPUSeconds/float64(max(1, r.Accepted)),
		r.ServerRSSBytes/(1<<20), 100*r.IdleCPU)
}

// Events runs the throughput measurement.
func Events(ctx context.Context, cfg EventsConfig) (*EventsResult, error) {
	cfg.Latency = false
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	dedup, ordering, _ := parseRules(cfg.Rules)
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
	sum := func() (int64, error) {
		offs, err := r.offsets(ctx, want)
		var n int64
		for _, o := range offs {
			n += o
		}
		return n, err
	}
	res.IdleCPU = idleCPU(ctx, cfg.URL)
	cpu0, _ := serverProcess(ctx, cfg.URL)
	var s eventsSent
	start := time.Now()
	sendEnd := start.Add(cfg.Duration)
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.send(ctx, sendEnd, &s)
	}()
	// the steady rate: from the first poll after one second to the
	// last poll before the end of sending
	var t1, t2 time.Time
	var a1, a2 int64
	tick := time.NewTicker(cfg.PollEvery)
	defer tick.Stop()
	sending := true
	for sending {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-done:
			sending = false
		case now := <-tick.C:
			a, err := sum()
			if err != nil {
				return nil, err
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
	if res.AppendsAtSendEnd, err = sum(); err != nil {
		return nil, err
	}
	drainEnd := time.Now().Add(cfg.Drain)
	for {
		a, err := sum()
		if err != nil {
			return nil, err
		}
		res.Appends = a
		if a >= res.ExpectedAppends {
			res.Drained = time.Since(start)
			break
		}
		if time.Now().After(drainEnd) {
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(cfg.PollEvery / 5):
		}
	}
	cpu1, rss := serverProcess(ctx, cfg.URL)
	res.ServerCPUSeconds, res.ServerRSSBytes, res.Measured = cpu1-cpu0, rss, time.Since(start)
	return res, nil
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

// EventsLatencyResult is a latency run's outcome: per event, its arrival
// on the stream with the rules minus its arrival on the stream without.
type EventsLatencyResult struct {
	Rules                        string
	Rate, Batch, Conns           int
	OtherStreams                 int
	Accepted, Errors             int64
	FirstError                   string
	SendElapsed                  time.Duration
	Compared, MissingA, MissingB int64
	Late                         int64 // metadata.late on the stream with the rules
	Added                        []time.Duration
	EarlierA                     int64           // events the rules' stream had first
	IngestA, IngestB             []time.Duration // request sent → arrival
}

// Print writes a summary.
func (r *EventsLatencyResult) Print(w io.Writer) {
	fmt.Fprintf(w, "events latency: stream A rules %s, stream B none, same filter; %d events/s offered, %d senders × %d events a request\n",
		r.Rules, r.Rate, r.Conns, r.Batch)
	if r.OtherStreams > 0 {
		fmt.Fprintf(w, "  WARNING: %d other active events streams in the organization\n", r.OtherStreams)
	}
	secs := r.SendElapsed.Seconds()
	fmt.Fprintf(w, "  ingest: %d events accepted in %.1fs = %.0f events/s, %d errors%s\n", r.Accepted, secs, float64(r.Accepted)/secs, r.Errors, firstErr(r.FirstError))
	fmt.Fprintf(w, "  compared %d events (missing on A %d, on B %d); late on A %d\n", r.Compared, r.MissingA, r.MissingB, r.Late)
	fmt.Fprintf(w, "  added by the rules (arrival A − arrival B): p50 %s  p90 %s  p99 %s  p99.9 %s  max %s; A first for %d events\n",
		quantile(r.Added, .5), quantile(r.Added, .9), quantile(r.Added, .99), quantile(r.Added, .999), quantile(r.Added, 1), r.EarlierA)
	fmt.Fprintf(w, "  request sent → arrival, A: p50 %s p99 %s max %s; B: p50 %s p99 %s max %s\n",
		quantile(r.IngestA, .5), quantile(r.IngestA, .99), quantile(r.IngestA, 1), quantile(r.IngestB, .5), quantile(r.IngestB, .99), quantile(r.IngestB, 1))
}

// eventArrivals is one websocket client's record: arrival time per event
// number, and how many arrived marked late.
type eventArrivals struct {
	conn *websocket.Conn
	at   []int64
	got  atomic.Int64
	late int64
}

var (
	numKey  = []byte(`"~n":`)
	lateKey = []byte(`"late":true`)
)

func (a *eventArrivals) receive() {
	for {
		_, data, err := a.conn.ReadMessage()
		if err != nil {
			return
		}
		now := time.Now().UnixNano()
		a.late += int64(bytes.Count(data, lateKey))
		for {
			i := bytes.Index(data, numKey)
			if i < 0 {
				break
			}
			n, rest := scanInt(data[i+len(numKey):])
			data = rest
			if n >= 0 && n < int64(len(a.at)) && a.at[n] == 0 {
				a.at[n] = now
				a.got.Add(1)
			}
		}
	}
}

// EventsLatency runs the latency measurement.
func EventsLatency(ctx context.Context, cfg EventsConfig) (*EventsLatencyResult, error) {
	cfg.Latency = true
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	dedup, ordering, _ := parseRules(cfg.Rules)
	r := newEventRun(cfg)
	filter := map[string]any{"vehicle_ids": r.vehicles}
	var ids []string
	defer func() { r.stop(ids) }()
	for _, rules := range [][2]bool{{dedup, ordering}, {false, false}} {
		id, err := r.start(ctx, filter, rules[0], rules[1])
		if err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	others, err := r.otherStreams(ctx, ids)
	if err != nil {
		return nil, err
	}
	rate := cfg.Rate
	if rate <= 0 {
		rate = 100_000
	}
	capacity := int(float64(rate)*cfg.Duration.Seconds()*1.2) + 2*cfg.Batch*cfg.Conns
	u, _ := url.Parse(cfg.URL)
	dialer := websocket.Dialer{HandshakeTimeout: 10 * time.Second, ReadBufferSize: 64 << 10}
	subs := make([]*eventArrivals, len(ids))
	for i, id := range ids {
		c, _, err := dialer.DialContext(ctx, "ws://"+u.Host+"/api/v1/streaming/ws?stream_id="+url.QueryEscape(id)+"&api_key="+url.QueryEscape(cfg.Key), nil)
		if err != nil {
			for _, s := range subs[:i] {
				s.conn.Close()
			}
			return nil, fmt.Errorf("bench: subscribe: %w", err)
		}
		subs[i] = &eventArrivals{conn: c, at: make([]int64, capacity)}
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s.receive()
		}()
	}
	s := eventsSent{sentAt: make([]int64, capacity)}
	start := time.Now()
	r.send(ctx, start.Add(cfg.Duration), &s)
	res := &EventsLatencyResult{Rules: rulesName(dedup, ordering), Rate: cfg.Rate, Batch: cfg.Batch, Conns: cfg.Conns, OtherStreams: others,
		SendElapsed: time.Since(start), Accepted: s.accepted.Load(), Errors: s.errors.Load(), FirstError: s.firstError}
	drainEnd := time.Now().Add(cfg.Drain)
	for time.Now().Before(drainEnd) && ctx.Err() == nil && (subs[0].got.Load() < res.Accepted || subs[1].got.Load() < res.Accepted) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, s := range subs {
		s.conn.Close()
	}
	wg.Wait()
	a, b := subs[0], subs[1]
	res.Late = a.late
	for n := range capacity {
		if s.sentAt[n] == 0 {
			continue
		}
		ta, tb := a.at[n], b.at[n]
		switch {
		case ta == 0 && tb == 0:
			continue // not accepted
		case ta == 0:
			res.MissingA++
			continue
		case tb == 0:
			res.MissingB++
			continue
		}
		res.Compared++
		d := time.Duration(ta - tb)
		if d < 0 {
			res.EarlierA++
		}
		res.Added = append(res.Added, d)
		res.IngestA = append(res.IngestA, time.Duration(ta-s.sentAt[n]))
		res.IngestB = append(res.IngestB, time.Duration(tb-s.sentAt[n]))
	}
	slices.Sort(res.Added)
	slices.Sort(res.IngestA)
	slices.Sort(res.IngestB)
	return res, nil
}
