package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// SoakConfig is a soak: Nodes fleethub processes over one broker process
// (fleethub-bench broker), the Redis at RedisURL and a schema of its own
// in DatabaseURL, and a simulated fleet: Trips vehicles on trips reporting
// PointsRate points a second, TelemetryRate telemetry messages and Rate
// safety events a second, spread over the nodes. Every node has a
// websocket subscriber of one event stream, node 0 one of a telemetry
// stream, and a webhook stream delivers the same events to a receiver in
// the generator. Duration is split into seven phases: no fault; a node
// SIGKILLed and restarted; Redis cut (or, with RedisServer, SIGKILLed and
// restarted); PostgreSQL hung; the webhook
// receiver down (its phase longer by the outage); the broker SIGKILLed
// and restarted; after. Redis and
// PostgreSQL go away through proxies inside the generator, never by
// stopping the servers, which other work on the machine shares.
type SoakConfig struct {
	Fleethub string // the fleethub binary
	Broker   string // the fleethub-bench binary (default: this process's)
	RedisURL string
	// RedisServer, when set, is a redis-server binary: the soak runs a
	// Redis of its own (append-only file synced before each answer, in
	// Dir) instead of using RedisURL, and SIGKILLs and restarts it instead
	// of cutting its connections.
	RedisServer   string
	DatabaseURL   string
	Duration      time.Duration // default 30 minutes
	Rate          int           // events a second (default 2,000)
	PointsRate    int           // location points a second (default 20,000)
	TelemetryRate int           // telemetry messages a second (default 1,000)
	Trips         int           // vehicles on trips (default 2,000)
	Nodes         int           // default 3
	// Outages: the node and the broker are down for NodeDown (5 s),
	// Redis and PostgreSQL for StoreDown (20 s), none for more than 3/4
	// of a phase; the receiver for ReceiverDown (5 minutes, at most a
	// quarter of Duration), added to its phase.
	NodeDown, StoreDown, ReceiverDown time.Duration
	Dir                               string    // logs and node data (default: a temporary directory)
	Log                               io.Writer // progress lines
}

func (c *SoakConfig) defaults() error {
	if c.Fleethub == "" {
		return errors.New("bench: soak: --fleethub names the fleethub binary")
	}
	if (c.RedisURL == "" && c.RedisServer == "") || c.DatabaseURL == "" {
		return errors.New("bench: soak: --redis-url (or --redis-server) and --database-url are required")
	}
	if c.Broker == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Broker = exe
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.Rate, 2000)
	def(&c.PointsRate, 20000)
	def(&c.TelemetryRate, 1000)
	def(&c.Trips, 2000)
	def(&c.Nodes, 3)
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defd(&c.Duration, 30*time.Minute)
	defd(&c.NodeDown, 5*time.Second)
	defd(&c.StoreDown, 20*time.Second)
	defd(&c.ReceiverDown, 5*time.Minute)
	if c.Log == nil {
		c.Log = io.Discard
	}
	return nil
}

// SoakTraffic is one kind of request during a phase, counted in messages
// (events, points or telemetry messages).
type SoakTraffic struct {
	Sent, Acked int64
	Refused     int64         // answered, not acknowledged (503 while a part is down): not lost
	Failed      int64         // no answer (a killed node): not acknowledged, not lost
	P99During   time.Duration // answer time p99 while the fault lasted
	P99After    time.Duration // and from its end to the phase's
}

// SoakSinkPhase is what one sink received of the messages acknowledged
// in a phase.
type SoakSinkPhase struct {
	Sink       string
	Delivered  int64         // acknowledged messages it received
	Lost       int64         // acknowledged messages it never received
	Duplicates int64         // receipts beyond the first
	CaughtUp   time.Duration // from the fault's end until it had received every message acknowledged before that end
}

// SoakPhase is what happened during one phase.
type SoakPhase struct {
	Name                      string
	Fault                     time.Duration // how long the fault lasted
	Events, Points, Telemetry SoakTraffic
	Sinks                     []SoakSinkPhase
	// Recovered is from the fault's end to the last request refused or
	// unanswered after it: how long ingest took to come back.
	Recovered time.Duration
}

// SoakResult is a soak's report.
type SoakResult struct {
	Phases       []SoakPhase
	Nodes, Trips int
	// Points accepted in acknowledged batches over the whole soak, stored
	// in the trips at the end, and accepted but not stored; the points
	// acknowledged batches skipped, by reason (duplicate_timestamp, …).
	PointsAcked, PointsStored, PointsLost int64
	PointsSkipped                         map[string]int64
}

// Lost is every acknowledged message some sink never received, plus the
// points acknowledged and not stored.
func (r *SoakResult) Lost() int64 {
	n := r.PointsLost
	for _, p := range r.Phases {
		for _, s := range p.Sinks {
			n += s.Lost
		}
	}
	return n
}

// Print writes one block per phase.
func (r *SoakResult) Print(w io.Writer) {
	fmt.Fprintf(w, "soak: %d nodes, %d trips; sinks: a websocket subscriber of the event stream per node, a webhook receiver of the same events, a websocket subscriber of the telemetry stream\n", r.Nodes, r.Trips)
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	for _, p := range r.Phases {
		fmt.Fprintf(w, "%-14s fault %s, ingest back after %s\n", p.Name, ms(p.Fault), ms(p.Recovered))
		for _, t := range []struct {
			name string
			t    SoakTraffic
		}{{"events", p.Events}, {"points", p.Points}, {"telemetry", p.Telemetry}} {
			fmt.Fprintf(w, "  %-10s sent %d  acked %d  refused %d  no answer %d  p99 during %s  after %s\n",
				t.name, t.t.Sent, t.t.Acked, t.t.Refused, t.t.Failed, ms(t.t.P99During), ms(t.t.P99After))
		}
		for _, s := range p.Sinks {
			fmt.Fprintf(w, "  %-10s delivered %d  lost %d  duplicates %d  caught up %s\n", s.Sink, s.Delivered, s.Lost, s.Duplicates, ms(s.CaughtUp))
		}
	}
	fmt.Fprintf(w, "points: accepted in acknowledged batches %d, stored %d, accepted and not stored %d; skipped by the server %s\n",
		r.PointsAcked, r.PointsStored, r.PointsLost, formatValue(NamedCounts(r.PointsSkipped)))
}

// soakPhaseNames are the phases in order.
var soakPhaseNames = []string{"no fault", "node killed", "redis cut", "postgres hung", "receiver down", "broker killed", "after"}

// Soak runs the soak described by cfg.
func Soak(ctx context.Context, cfg SoakConfig) (*SoakResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	r := &soakRun{cfg: cfg}
	defer r.close()
	if err := r.setUp(ctx); err != nil {
		return nil, err
	}
	fleet := &soakFleet{cfg: r.cfg, bases: r.bases, key: r.key, led: newLedger(len(soakPhaseNames)), client: &http.Client{Timeout: 30 * time.Second}}
	if err := fleet.startTrips(ctx); err != nil {
		return nil, err
	}
	r.logf("%d trips started", len(fleet.trips))
	sinks := r.startSinks(ctx)

	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var lwg sync.WaitGroup
	lwg.Add(1)
	go func() { defer lwg.Done(); fleet.run(lctx) }()
	tl, err := r.runPhases(ctx, fleet.led)
	if err != nil {
		return nil, err
	}
	stopLoad()
	lwg.Wait()
	r.logf("load stopped; waiting for the sinks")
	sinks.drain(ctx, fleet.led)
	r.logf("reading the trips' points")
	stored, err := fleet.stored(ctx)
	if err != nil {
		return nil, err
	}
	return soakReport(fleet, stored, tl, sinks), nil
}

// soakReport is the soak's report from the ledger, the points stored per
// trip, the phases' times and the sinks' receipts.
func soakReport(fleet *soakFleet, stored map[string]int64, tl soakTimeline, sinks *soakSinks) *SoakResult {
	led := fleet.led
	res := &SoakResult{Nodes: fleet.cfg.Nodes, Trips: len(fleet.trips), PointsSkipped: led.pointsSkipped}
	for trip, n := range led.tripAcked {
		res.PointsAcked += n
		res.PointsLost += max(0, n-stored[trip])
	}
	for _, n := range stored {
		res.PointsStored += n
	}
	all := sinks.all()
	for i, name := range tl.names {
		p := SoakPhase{Name: name, Fault: tl.faultEnds[i].Sub(tl.starts[i]),
			Events: led.events.phase(i), Points: led.points.phase(i), Telemetry: led.telemetry.phase(i)}
		for _, t := range []*soakTraffic{led.events, led.points, led.telemetry} {
			if !t.lastBad[i].IsZero() {
				p.Recovered = max(p.Recovered, t.lastBad[i].Sub(tl.faultEnds[i]))
			}
		}
		for _, s := range all {
			acked := led.evAcked
			if s == sinks.tel.soakReceipts {
				acked = led.telAcked
			}
			p.Sinks = append(p.Sinks, s.phase(acked, i, tl.faultEnds[i]))
		}
		res.Phases = append(res.Phases, p)
	}
	return res
}

// phase summarises the traffic of phase i.
func (t *soakTraffic) phase(i int) SoakTraffic {
	p99 := func(d []time.Duration) time.Duration {
		if len(d) == 0 {
			return 0
		}
		slices.Sort(d)
		return d[min(len(d)-1, len(d)*99/100)]
	}
	return SoakTraffic{Sent: t.sent[i], Acked: t.acked[i], Refused: t.refused[i], Failed: t.failed[i], P99During: p99(t.during[i]), P99After: p99(t.after[i])}
}

// phase is what r received of the messages acknowledged in phase i, and
// when it had every one acknowledged before the fault ended.
func (r *soakReceipts) phase(acked map[int64]int, i int, faultEnd time.Time) SoakSinkPhase {
	out := SoakSinkPhase{Sink: r.name}
	end := int32(faultEnd.Sub(r.began).Milliseconds())
	var latest int32 = -1
	for seq, mark := range acked {
		if mark/2 != i {
			continue
		}
		g := r.got[seq]
		if g.n == 0 {
			out.Lost++
			continue
		}
		out.Delivered++
		out.Duplicates += int64(g.n - 1)
		if mark%2 == 0 {
			latest = max(latest, g.first)
		}
	}
	if latest > end {
		out.CaughtUp = time.Duration(latest-end) * time.Millisecond
	}
	return out
}
