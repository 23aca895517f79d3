package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"net"
	"slices"
	"time"

	"github.com/valyala/fasthttp"
)

// PhaseKind tells the phases of an isolation run apart.
type PhaseKind int

// The phases: the dead neighbour's start until its circuit opens, the
// healthy stream alone, and beside the dead neighbour.
const (
	PhaseWarmUp PhaseKind = iota
	PhaseAlone
	PhaseDead
)

// IsolationPhase is one phase of an isolation run.
type IsolationPhase struct {
	Kind      PhaseKind
	Start     time.Time
	End       time.Time
	Published int64
	Delivered int64
	Latencies []time.Duration `json:"-"` // sorted
}

// IsolationResult compares the healthy stream alone and beside a dead
// neighbour, phase by phase, in one server process.
type IsolationResult struct {
	Phases     []IsolationPhase
	Duplicates int64 // requests whose webhook-id had arrived before
	Errors     int64
	First      string
}

// Pooled returns the latencies of every phase with or without the dead
// neighbour, sorted, and the deliveries per second over those phases.
func (r *IsolationResult) Pooled(kind PhaseKind) ([]time.Duration, float64) {
	var all []time.Duration
	var n int64
	var secs float64
	for _, p := range r.Phases {
		if p.Kind != kind {
			continue
		}
		all = append(all, p.Latencies...)
		n += p.Delivered
		secs += p.End.Sub(p.Start).Seconds()
	}
	slices.Sort(all)
	if secs == 0 {
		return all, 0
	}
	return all, float64(n) / secs
}

func quantile(l []time.Duration, q float64) time.Duration {
	return (&Result{Latencies: l}).Quantile(q)
}

// Print writes each phase and the pooled comparison.
func (r *IsolationResult) Print(w io.Writer) {
	for i, p := range r.Phases {
		what := [...]string{"warm-up       ", "alone         ", "dead neighbour"}[p.Kind]
		secs := p.End.Sub(p.Start).Seconds()
		fmt.Fprintf(w, "phase %d %s: %d of %d delivered = %.0f/s  p50 %s  p90 %s  p99 %s\n", i+1, what, p.Delivered, p.Published,
			float64(p.Delivered)/secs, quantile(p.Latencies, .5), quantile(p.Latencies, .9), quantile(p.Latencies, .99))
	}
	la, ta := r.Pooled(PhaseAlone)
	ld, td := r.Pooled(PhaseDead)
	pct := func(a, b float64) float64 { return 100 * (b - a) / a }
	fmt.Fprintf(w, "alone:          %.0f/s  p50 %s  p90 %s  p99 %s\n", ta, quantile(la, .5), quantile(la, .9), quantile(la, .99))
	fmt.Fprintf(w, "dead neighbour: %.0f/s  p50 %s  p90 %s  p99 %s\n", td, quantile(ld, .5), quantile(ld, .9), quantile(ld, .99))
	fmt.Fprintf(w, "change:         throughput %+.1f%%  p50 %+.1f%%  p90 %+.1f%%\n", pct(ta, td),
		pct(float64(quantile(la, .5)), float64(quantile(ld, .5))), pct(float64(quantile(la, .9)), float64(quantile(ld, .9))))
	fmt.Fprintf(w, "duplicates:     %d\n", r.Duplicates)
	if r.Errors > 0 {
		fmt.Fprintf(w, "errors %d: %s\n", r.Errors, r.First)
	}
}

// WebhookIsolation measures what a dead neighbour costs a healthy webhook
// stream, in one server process. Both streams match the same events; the
// dead one's receiver accepts connections and never answers. A warm-up
// phase runs until the dead stream's circuit has opened (its first
// requests must time out first); then rounds pairs of phases of
// cfg.Duration alternate between the healthy stream alone (the dead one
// paused: it matches nothing, and keeps its backlog and open circuit) and
// beside its dead neighbour (resumed). Latencies are attributed to the
// phase in which their events were published; the warm-up is reported
// but not pooled.
func WebhookIsolation(ctx context.Context, cfg WebhookConfig, rounds int) (*IsolationResult, error) {
	cfg.defaults()
	if cfg.Batch <= 0 {
		cfg.Batch = 1
	}
	if rounds <= 0 {
		rounds = 3
	}
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	runID := "bench-" + hex.EncodeToString(rb[:])

	rcv := &webhookReceiver{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("bench: receiver: %w", err)
	}
	srv := &fasthttp.Server{Handler: rcv.serve, ReadTimeout: time.Minute, NoDefaultServerHeader: true}
	go srv.Serve(ln)
	defer srv.Shutdown()
	deadURL, stopDead, err := deadReceiver()
	if err != nil {
		return nil, err
	}
	defer stopDead()

	id, err := rcv.follow(cfg, runID, "http://"+ln.Addr().String()+"/hooks")
	if err != nil {
		return nil, err
	}
	defer stopWebhookStream(cfg, id)
	did, _, err := startWebhookStream(cfg, runID, deadURL)
	if err != nil {
		return nil, err
	}
	defer stopWebhookStream(cfg, did)

	r := &isolationRun{ctx: ctx, cfg: cfg, runID: runID, out: &IsolationResult{}}
	if err := r.phases(did, rounds); err != nil {
		return nil, err
	}
	r.drain(rcv)
	r.out.attribute(rcv)
	return r.out, nil
}

// isolationRun is the state of one WebhookIsolation run.
type isolationRun struct {
	ctx       context.Context
	cfg       WebhookConfig
	runID     string
	out       *IsolationResult
	published int64
}

// phases runs the warm-up, then rounds pairs of phases alone and beside
// the dead stream did.
func (r *isolationRun) phases(did string, rounds int) error {
	// warm-up: publish in steps of a second until the dead circuit opened
	if err := r.phase(PhaseWarmUp, time.Second, func() bool { return circuitOf(r.cfg, did) == "open" }); err != nil {
		return err
	}
	for i := 0; i < 2*rounds; i++ {
		kind := PhaseAlone
		state := "paused"
		if i%2 == 1 {
			kind, state = PhaseDead, "active"
		}
		if err := configureStream(r.cfg, did, state); err != nil {
			return err
		}
		if err := r.phase(kind, r.cfg.Duration, nil); err != nil {
			return err
		}
	}
	return nil
}

// phase publishes for d, again and again until until (when not nil)
// holds or two minutes passed, and records the phase.
func (r *isolationRun) phase(kind PhaseKind, d time.Duration, until func() bool) error {
	start := time.Now()
	var items, errs int64
	first := ""
	for {
		res, err := publishEvents(r.ctx, r.cfg, r.runID, d)
		if err != nil {
			return err
		}
		items += res.Items
		errs += res.Errors
		if first == "" {
			first = res.FirstError
		}
		if until == nil || until() || time.Since(start) > 2*time.Minute {
			break
		}
	}
	r.published += items
	r.out.Errors += errs
	if r.out.First == "" {
		r.out.First = first
	}
	r.out.Phases = append(r.out.Phases, IsolationPhase{Kind: kind, Start: start, End: time.Now(), Published: items})
	return nil
}

// drain waits until every published event arrived and nothing else did
// for a moment (an event whose 202 was lost counts as unpublished), or
// Drain passes.
func (r *isolationRun) drain(rcv *webhookReceiver) {
	deadline := time.Now().Add(r.cfg.Drain)
	quiet := func() bool { return time.Since(time.Unix(0, rcv.last.Load())) > 250*time.Millisecond }
	for (rcv.messages.Load() < r.published || !quiet()) && time.Now().Before(deadline) && r.ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
}

// attribute gives each delivery the receiver saw to the phase in which
// its event was published, and takes the receiver's errors and
// duplicates.
func (r *IsolationResult) attribute(rcv *webhookReceiver) {
	rcv.mu.Lock()
	for k, sent := range rcv.sents {
		for i := range r.Phases {
			p := &r.Phases[i]
			// a phase's events were stamped after it started and before
			// the next one did (a sender may stamp one more as its phase
			// ends)
			end := int64(math.MaxInt64)
			if i+1 < len(r.Phases) {
				end = r.Phases[i+1].Start.UnixNano()
			}
			if sent >= p.Start.UnixNano() && sent < end {
				p.Delivered++
				p.Latencies = append(p.Latencies, rcv.lats[k])
				break
			}
		}
	}
	r.Errors += rcv.bad.Load()
	r.Duplicates = rcv.dups.Load()
	if r.First == "" {
		r.First = rcv.firstErr
	}
	rcv.mu.Unlock()
	for i := range r.Phases {
		slices.Sort(r.Phases[i].Latencies)
	}
}

// circuitOf reads a webhook stream's circuit state from its status.
func circuitOf(cfg WebhookConfig, id string) string {
	var st struct {
		Webhook struct {
			Circuit string `json:"circuit"`
		} `json:"webhook"`
	}
	if err := apiCall(context.Background(), "GET", cfg.URL+"/api/v1/streaming/events/status/"+id, cfg.Key, nil, &st); err != nil {
		return ""
	}
	return st.Webhook.Circuit
}

// configureStream sets a stream's state (active or paused).
func configureStream(cfg WebhookConfig, id, state string) error {
	if err := apiCall(context.Background(), "PUT", cfg.URL+"/api/v1/streaming/events/configure/"+id, cfg.Key, map[string]any{"state": state}, nil); err != nil {
		return fmt.Errorf("bench: configure stream: %w", err)
	}
	return nil
}
