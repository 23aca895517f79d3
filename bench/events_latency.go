package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

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
	Late                         int64           // metadata.late on the stream with the rules
	Added                        []time.Duration `json:"-"`
	EarlierA                     int64           // events the rules' stream had first
	IngestA, IngestB             []time.Duration `json:"-"` // request sent → arrival
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
	dedup, ordering, err := parseRules(cfg.Rules)
	if err != nil {
		return nil, err
	}
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
	u, err := url.Parse(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("bench: events: %w", err)
	}
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
