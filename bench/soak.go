package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/faultproxy"
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
	fmt.Fprintf(w, "points: accepted in acknowledged batches %d, stored %d, accepted and not stored %d; skipped by the server %v\n",
		r.PointsAcked, r.PointsStored, r.PointsLost, r.PointsSkipped)
}

// soakPhaseNames are the phases in order.
var soakPhaseNames = []string{"no fault", "node killed", "redis cut", "postgres hung", "receiver down", "broker killed", "after"}

// Soak runs the soak described by cfg.
func Soak(ctx context.Context, cfg SoakConfig) (*SoakResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "fleethub-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
	}
	began := time.Now()

	// a schema of its own, dropped at the end
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "fleethub_soak_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("bench: soak: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("bench: soak: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, _ = admin.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(dctx)
	}()

	var redisProc *soakProc
	if cfg.RedisServer != "" {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		dir := filepath.Join(cfg.Dir, "redis")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		redisProc = &soakProc{name: "redis", out: filepath.Join(cfg.Dir, "redis.log"), args: []string{cfg.RedisServer, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
			"--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""}}
		if err := redisProc.start(); err != nil {
			return nil, err
		}
		defer redisProc.signal(syscall.SIGKILL)
		cfg.RedisURL = "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
		if err := waitListening(ctx, "127.0.0.1:"+strconv.Itoa(port), 30*time.Second); err != nil {
			return nil, err
		}
	}
	pgURL, _ := url.Parse(cfg.DatabaseURL)
	rdURL, _ := url.Parse(cfg.RedisURL)
	if pgURL == nil || rdURL == nil || pgURL.Host == "" || rdURL.Host == "" {
		return nil, errors.New("bench: soak: --database-url and --redis-url must be URLs with a host")
	}
	pgProxy, err := faultproxy.New(pgURL.Host)
	if err != nil {
		return nil, err
	}
	defer pgProxy.Close()
	rdProxy, err := faultproxy.New(rdURL.Host)
	if err != nil {
		return nil, err
	}
	defer rdProxy.Close()
	q := pgURL.Query()
	q.Set("search_path", schema)
	pgURL.RawQuery = q.Encode()
	dbURL, _ := withHost(pgURL.String(), pgProxy.Addr())
	redisURL, _ := withHost(cfg.RedisURL, rdProxy.Addr())

	bport, err := freePort()
	if err != nil {
		return nil, err
	}
	brokerAddr := "127.0.0.1:" + strconv.Itoa(bport)
	broker := &soakProc{name: "broker", args: []string{cfg.Broker, "broker", "--port", strconv.Itoa(bport), "--dir", filepath.Join(cfg.Dir, "broker")}, out: filepath.Join(cfg.Dir, "broker.log")}
	if err := broker.start(); err != nil {
		return nil, err
	}
	defer broker.signal(syscall.SIGKILL)
	time.Sleep(time.Second)

	out, err := exec.CommandContext(ctx, cfg.Fleethub, "keys", "create", "--database-url", dbURL, "--org", "soak", "--env", "test",
		"--name", "soak", "--permissions", "all", "--rpm", "60000000").Output()
	if err != nil {
		return nil, fmt.Errorf("bench: soak: keys create: %w", err)
	}
	key := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if key == "" {
		return nil, errSoakNoKey
	}

	nodes := make([]*soakProc, cfg.Nodes)
	bases := make([]string, cfg.Nodes)
	for i := range nodes {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		bases[i] = "http://127.0.0.1:" + strconv.Itoa(port)
		nodes[i] = &soakProc{name: fmt.Sprintf("node %d", i), out: filepath.Join(cfg.Dir, fmt.Sprintf("node%d.log", i)),
			args: []string{cfg.Fleethub, "serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--data", filepath.Join(cfg.Dir, fmt.Sprintf("node%d", i)),
				"--database-url", dbURL, "--redis-url", redisURL, "--kafka-brokers", brokerAddr, "--log-format", "json", "--allow-private-webhooks"}}
		if err := nodes[i].start(); err != nil {
			return nil, err
		}
		defer nodes[i].signal(syscall.SIGKILL)
		if err := waitReady(ctx, bases[i], 60*time.Second); err != nil {
			return nil, err
		}
	}
	logf("%d nodes ready, broker %s", cfg.Nodes, brokerAddr)

	receiver, err := newSoakReceiver(began)
	if err != nil {
		return nil, err
	}
	defer receiver.close()
	vehicles := make([]string, cfg.Trips)
	for i := range vehicles {
		vehicles[i] = "soak-veh-" + strconv.Itoa(i)
	}
	var evStream, whStream, telStream struct {
		StreamID string `json:"stream_id"`
	}
	// the event streams deduplicate by event_id, as a user who wants each
	// event once starts them: the duplicates counted are what gets past
	// the dedup window; the telemetry stream has no ids to dedup on
	dedup := map[string]any{"deduplication": true}
	evFilter := map[string]any{"categories": []string{"safety_events"}, "custom_conditions": []any{map[string]any{"field": "event_data.soak_seq", "operator": ">", "value": 0}}}
	if err := apiCall(ctx, "POST", bases[0]+"/api/v1/streaming/events/start", key, map[string]any{"event_filters": evFilter, "processing_rules": dedup}, &evStream); err != nil {
		return nil, fmt.Errorf("bench: soak: start the event stream: %w", err)
	}
	if err := apiCall(ctx, "POST", bases[0]+"/api/v1/streaming/events/start", key, map[string]any{"event_filters": evFilter, "processing_rules": dedup, "webhook_url": "http://" + receiver.addr + "/hook",
		"stream_config": map[string]any{"delivery_method": "webhook", "batch_events": true, "batch_size": 100, "max_wait_time": 100}}, &whStream); err != nil {
		return nil, fmt.Errorf("bench: soak: start the webhook stream: %w", err)
	}
	if err := apiCall(ctx, "POST", bases[0]+"/api/v1/streaming/telemetry/start", key, map[string]any{"vehicles": vehicles, "data_types": []string{"engine_diagnostics"},
		"stream_config": map[string]any{"frequency": "high"}, "delivery_method": "websocket"}, &telStream); err != nil {
		return nil, fmt.Errorf("bench: soak: start the telemetry stream: %w", err)
	}
	time.Sleep(2 * time.Second) // every node's registry has the streams

	fleet := &soakFleet{cfg: cfg, bases: bases, key: key, led: newLedger(len(soakPhaseNames)), client: &http.Client{Timeout: 30 * time.Second}}
	if err := fleet.startTrips(ctx); err != nil {
		return nil, err
	}
	logf("%d trips started", len(fleet.trips))

	sctx, stopSinks := context.WithCancel(ctx)
	defer stopSinks()
	var swg sync.WaitGroup
	var evSinks []*soakReceipts
	for i := range bases {
		s := &soakSink{soakReceipts: newReceipts(fmt.Sprintf("ws node %d", i), began), base: bases[i], key: key, stream: evStream.StreamID}
		evSinks = append(evSinks, s.soakReceipts)
		swg.Add(1)
		go func() { defer swg.Done(); s.run(sctx) }()
	}
	evSinks = append(evSinks, receiver.soakReceipts)
	tel := &soakSink{soakReceipts: newReceipts("telemetry", began), base: bases[0], key: key, stream: telStream.StreamID, telemetry: true}
	swg.Add(1)
	go func() { defer swg.Done(); tel.run(sctx) }()

	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var lwg sync.WaitGroup
	lwg.Add(1)
	go func() { defer lwg.Done(); fleet.run(lctx) }()

	// the receiver's outage is the longest: it gets its own time (at most
	// a quarter of the soak) on top of a phase; the other faults last at
	// most 3/4 of a phase
	receiverDown := min(cfg.ReceiverDown, cfg.Duration/4)
	phase := (cfg.Duration - receiverDown) / time.Duration(len(soakPhaseNames))
	longest := phase * 3 / 4
	starts := make([]time.Time, len(soakPhaseNames))
	faultEnds := make([]time.Time, len(soakPhaseNames))
	names := slices.Clone(soakPhaseNames)
	if redisProc != nil {
		names[slices.Index(names, "redis cut")] = "redis restarted"
	}
	for i, name := range names {
		fleet.led.mu.Lock()
		fleet.led.phase, fleet.led.faultOver = i, false
		fleet.led.mu.Unlock()
		logf("phase %q", name)
		starts[i] = time.Now()
		wait := func(d time.Duration) {
			select {
			case <-ctx.Done():
			case <-time.After(min(d, longest)):
			}
		}
		switch name {
		case "node killed":
			nodes[1].signal(syscall.SIGKILL)
			wait(cfg.NodeDown)
			if err := nodes[1].start(); err != nil {
				return nil, err
			}
		case "redis cut":
			rdProxy.Cut(true)
			wait(cfg.StoreDown)
			rdProxy.Cut(false)
		case "redis restarted":
			redisProc.signal(syscall.SIGKILL)
			wait(cfg.StoreDown)
			if err := redisProc.start(); err != nil {
				return nil, err
			}
		case "postgres hung":
			pgProxy.Hang(true)
			wait(cfg.StoreDown)
			pgProxy.Hang(false)
		case "receiver down":
			if err := receiver.setDown(true); err != nil {
				return nil, err
			}
			select {
			case <-ctx.Done():
			case <-time.After(receiverDown):
			}
			if err := receiver.setDown(false); err != nil {
				return nil, err
			}
		case "broker killed":
			broker.signal(syscall.SIGKILL)
			wait(cfg.NodeDown)
			if err := broker.start(); err != nil {
				return nil, err
			}
		}
		faultEnds[i] = time.Now()
		length := phase
		if name == "receiver down" {
			length += receiverDown
		}
		fleet.led.mu.Lock()
		fleet.led.faultOver = true
		fleet.led.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(length - time.Since(starts[i])):
		}
	}
	stopLoad()
	lwg.Wait()
	logf("load stopped; waiting for the sinks")
	sinks := append(slices.Clone(evSinks), tel.soakReceipts)
	drain := time.Now().Add(10 * time.Minute)
	for time.Now().Before(drain) && !soakDrained(fleet.led, evSinks, tel.soakReceipts) && ctx.Err() == nil {
		time.Sleep(time.Second)
	}
	stopSinks()
	swg.Wait()
	logf("reading the trips' points")
	stored, err := fleet.stored(ctx)
	if err != nil {
		return nil, err
	}

	led := fleet.led
	res := &SoakResult{Nodes: cfg.Nodes, Trips: len(fleet.trips), PointsSkipped: led.pointsSkipped}
	for trip, n := range led.tripAcked {
		res.PointsAcked += n
		res.PointsLost += max(0, n-stored[trip])
	}
	for _, n := range stored {
		res.PointsStored += n
	}
	for i, name := range names {
		p := SoakPhase{Name: name, Fault: faultEnds[i].Sub(starts[i]),
			Events: led.events.phase(i), Points: led.points.phase(i), Telemetry: led.telemetry.phase(i)}
		for _, t := range []*soakTraffic{led.events, led.points, led.telemetry} {
			if !t.lastBad[i].IsZero() {
				p.Recovered = max(p.Recovered, t.lastBad[i].Sub(faultEnds[i]))
			}
		}
		for _, s := range sinks {
			acked := led.evAcked
			if s == tel.soakReceipts {
				acked = led.telAcked
			}
			p.Sinks = append(p.Sinks, s.phase(acked, i, faultEnds[i]))
		}
		res.Phases = append(res.Phases, p)
	}
	return res, nil
}

// waitListening dials addr until it accepts a connection.
func waitListening(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var d net.Dialer
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: soak: nothing listens on %s after %s", addr, within)
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

// soakDrained reports whether every sink has every acknowledged message.
func soakDrained(led *soakLedger, evSinks []*soakReceipts, tel *soakReceipts) bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	has := func(r *soakReceipts, acked map[int64]int) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for seq := range acked {
			if r.got[seq].n == 0 {
				return false
			}
		}
		return true
	}
	for _, s := range evSinks {
		if !has(s, led.evAcked) {
			return false
		}
	}
	return has(tel, led.telAcked)
}
