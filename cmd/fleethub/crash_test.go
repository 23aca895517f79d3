package main

// The crash harness: nothing acknowledged is lost when the server is
// killed with SIGKILL at a random moment and restarted on the same data.
//
// The server runs as a child process (built once per test, without -race).
// Each cycle, goroutines ingest telemetry, events and trip points
// concurrently and remember every message whose request was acknowledged
// (202 for telemetry and events, 200 with the point not rejected for a
// location batch); after a random delay the child is killed, restarted on
// the same --data (and database, Redis and Kafka) and port, and the
// harness checks, from outside, through the public API only:
//
//   - every acknowledged telemetry message and event is in its stream's
//     log, read over a real websocket from last_offset=0 (telemetry by
//     vehicle_id and sequence, events by event_id), in one telemetry
//     stream and two event streams (one with deduplication on);
//   - offsets continue across the restart: the newest offset is at least
//     the highest one read before the crash, and offsets come without
//     gaps;
//   - every acknowledged event reached the webhook receiver of a webhook
//     stream or is pending in its delivery log; every webhook-id the
//     receiver got, and every delivery listed before, is still in the
//     delivery log with the same message; no offset names two messages;
//   - every acknowledged location point is in its trip's route.
//
// FLEETHUB_CRASH_SEED replays a run's random choices (cycle delays, batch
// sizes); FLEETHUB_CRASH_CYCLES changes the number of cycles (default 20,
// 12 on Kafka, whose cycles wait 6 to 12 s for the consumer group).
// The first cycle that finds a loss reports all of it and ends the test.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	mrand "math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
)

const (
	crashDefaultCycles = 20
	// crashKafkaCycles is the Kafka mode's default: each of its cycles
	// waits for the killed member's group session to expire
	crashKafkaCycles = 12
	// crashVerifyWithin bounds the checks after a restart. With Kafka the
	// pipeline resumes once the group dropped the killed node's member: 4 s
	// after the restart, at most about 16 s when the node was killed
	// mid-join (hub/kafkabus, "Consumer groups after a crash"); events a
	// killed node claimed wait for their dedup lease (15 s).
	crashVerifyWithin = 30 * time.Second
	// crashCheckGrace is the least time each check gets, even when an
	// earlier check of the cycle used up the deadline.
	crashCheckGrace  = 5 * time.Second
	crashReadyWithin = 60 * time.Second

	// per-cycle budgets keep the stream logs far below their retention
	// (100,000 messages per stream) over all cycles
	crashTelemetryPerCycle = 2500
	crashEventsPerCycle    = 300
	crashPointsPerCycle    = 300
	crashTrips             = 2
	crashVehicles          = 8
	crashPointStep         = 100 * time.Millisecond
	crashPointLat          = 1e-5 // degrees north per point: 40 km/h at 10 Hz
)

// crashMode is the deployment under test.
type crashMode struct {
	name        string
	databaseURL string // PostgreSQL (fresh schema); empty: SQLite in --data
	redisURL    string
	kafka       string
}

// TestCrashEmbedded: one node on its defaults (SQLite, in-process bus,
// in-process stream log).
func TestCrashEmbedded(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // mostly waits on its child server: beside the other crash test
	runCrash(t, crashMode{name: "embedded"})
}

// TestCrashPostgresRedisKafka: PostgreSQL store, Redis stream log and
// dedup window, Kafka bus (kfake, in this process, so the broker outlives
// every SIGKILL of the server).
func TestCrashPostgresRedisKafka(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // mostly waits for the consumer group after each restart
	pg := requireService(t, "FLEETHUB_TEST_DATABASE_URL")
	rd := requireService(t, "FLEETHUB_TEST_REDIS_URL")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	runCrash(t, crashMode{name: "postgres+redis+kafka", databaseURL: crashSchema(t, pg), redisURL: rd,
		kafka: strings.Join(cluster.ListenAddrs(), ",")})
}

// crashTrip is one trip the harness uploads points to. Point i is at
// latitude 40 + i·crashPointLat and start + (i+1)·crashPointStep.
type crashTrip struct {
	id    string
	lon   float64
	start time.Time
	next  int64 // the next point index; only the trip's worker touches it
}

// crashHarness is one run.
type crashHarness struct {
	t     *testing.T
	mode  crashMode
	child *crashChild
	api   *crashAPI
	rc    *crashReceiver
	base  string
	key   string
	run   string // unique per run: vehicle and event ids, Redis keys
	rng   *mrand.Rand

	telemetryStream, eventsStream, dedupStream, webhookStream string
	trips                                                     []*crashTrip

	seq atomic.Int64 // telemetry sequence
	evn atomic.Int64 // event number

	mu         sync.Mutex               // guards the ledgers and unexpected
	telemetry  map[string]int           // "vehicle#sequence" → cycle it was acknowledged in
	events     map[string]int           // event_id → cycle
	points     map[string]map[int64]int // trip id → point index → cycle
	unexpected []string                 // answers an ingest request should never get

	restarted time.Time                // when the child last answered /readyz
	maxOffset map[string]int64         // stream → highest offset read so far
	listed    map[string]crashDelivery // webhook delivery id → what it carried, from the last listing
}

func crashEnvInt(t *testing.T, name string, def int64) int64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("%s=%q: %v", name, v, err)
	}
	return n
}

func runCrash(t *testing.T, m crashMode) {
	seed := crashEnvInt(t, "FLEETHUB_CRASH_SEED", time.Now().UnixNano())
	def := crashDefaultCycles
	if m.kafka != "" {
		def = crashKafkaCycles
	}
	cycles := int(crashEnvInt(t, "FLEETHUB_CRASH_CYCLES", int64(def)))
	t.Logf("%s: seed %d (FLEETHUB_CRASH_SEED=%d replays the random choices), %d cycles", m.name, seed, seed, cycles)
	b := make([]byte, 4)
	rand.Read(b)
	h := &crashHarness{t: t, mode: m, run: hex.EncodeToString(b), rng: mrand.New(mrand.NewSource(seed)),
		telemetry: map[string]int{}, events: map[string]int{}, points: map[string]map[int64]int{},
		maxOffset: map[string]int64{}, listed: map[string]crashDelivery{}}

	dir := t.TempDir()
	bin := crashBuild(t, dir)
	storeArgs := []string{"--data", filepath.Join(dir, "data")}
	if m.databaseURL != "" {
		storeArgs = append(storeArgs, "--database-url", m.databaseURL)
	}
	h.key = crashKey(t, bin, storeArgs)
	addr := crashFreeAddr(t)
	args := append([]string{"serve", "--addr", addr, "--allow-private-webhooks", "--shutdown-grace", "1s", "--solver-work-rate", fixedSolverRate}, storeArgs...)
	if m.redisURL != "" {
		args = append(args, "--redis-url", m.redisURL)
		crashRedisCleanup(t, m.redisURL, func() []string {
			p := []string{"*crash-" + h.run + "*"}
			for _, s := range []string{h.telemetryStream, h.eventsStream, h.dedupStream, h.webhookStream} {
				if s != "" {
					p = append(p, "*"+s+"*")
				}
			}
			return p
		})
	}
	if m.kafka != "" {
		args = append(args, "--kafka-brokers", m.kafka)
	}
	h.base = "http://" + addr
	h.child = &crashChild{t: t, bin: bin, args: args, logPath: filepath.Join(dir, "server.log")}
	t.Cleanup(h.child.kill)
	h.rc = newCrashReceiver(t)
	h.child.start()
	h.child.waitReady(h.base, crashReadyWithin)
	h.api = newCrashAPI(h.base, h.key)
	t.Cleanup(h.api.tr.CloseIdleConnections)
	h.setup()

	began := time.Now()
	for c := 1; c <= cycles; c++ {
		if !h.cycle(c) {
			t.Log(h.child.tail(60))
			t.Fatalf("%s: cycle %d of %d lost acknowledged data (seed %d); stopping here", m.name, c, cycles, seed)
		}
	}
	hits, byID, _, _ := h.rc.snapshot()
	t.Logf("%s: %d cycles in %v: %d telemetry messages, %d events, %d points acknowledged, all found after every restart; the webhook receiver got %d requests under %d webhook-ids",
		m.name, cycles, time.Since(began).Round(time.Millisecond), len(h.telemetry), len(h.events), h.pointCount(), hits, len(byID))
}

// setup starts the streams (matching everything the harness sends) and
// the trips.
func (h *crashHarness) setup() {
	t := h.t
	var s struct {
		StreamID string `json:"stream_id"`
	}
	h.api.must(t, 201, "POST", "/api/v1/streaming/telemetry/start", map[string]any{
		"stream_config": map[string]any{"frequency": "high"}, "delivery_method": "websocket"}, &s)
	h.telemetryStream = s.StreamID
	h.api.must(t, 201, "POST", "/api/v1/streaming/events/start", map[string]any{
		"stream_config": map[string]any{"delivery_method": "websocket", "reliability": "at_least_once"}}, &s)
	h.eventsStream = s.StreamID
	h.api.must(t, 201, "POST", "/api/v1/streaming/events/start", map[string]any{
		"stream_config":    map[string]any{"delivery_method": "websocket", "reliability": "at_least_once"},
		"processing_rules": map[string]any{"deduplication": true}}, &s)
	h.dedupStream = s.StreamID
	h.api.must(t, 201, "POST", "/api/v1/streaming/events/start", map[string]any{
		"stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": h.rc.srv.URL + "/crash"}, &s)
	h.webhookStream = s.StreamID
	start := time.Now().Add(-30 * time.Minute).UTC().Truncate(time.Millisecond)
	for i := range crashTrips {
		var tr struct {
			TripID string `json:"trip_id"`
		}
		lon := -83.0 + float64(i)*0.01
		h.api.must(t, 201, "POST", "/v1/trips", map[string]any{"vehicle_id": fmt.Sprintf("crash-%s-trip%d", h.run, i),
			"start_time": start.Format(time.RFC3339Nano), "start_location": map[string]any{"latitude": 40.0, "longitude": lon}}, &tr)
		h.trips = append(h.trips, &crashTrip{id: tr.TripID, lon: lon, start: start})
		h.points[tr.TripID] = map[int64]int{}
	}
	t.Logf("streams: telemetry %s, events %s, events with deduplication %s, webhook events %s; trips %s, %s",
		h.telemetryStream, h.eventsStream, h.dedupStream, h.webhookStream, h.trips[0].id, h.trips[1].id)
}

// cycle ingests, kills the child at a random moment, restarts it and
// checks; false when something acknowledged was lost.
func (h *crashHarness) cycle(n int) bool {
	t0, e0, p0 := len(h.telemetry), len(h.events), h.pointCount()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var tBudget, eBudget atomic.Int64
	tBudget.Store(crashTelemetryPerCycle)
	eBudget.Store(crashEventsPerCycle)
	for range 2 {
		rng := mrand.New(mrand.NewSource(h.rng.Int63()))
		wg.Go(func() { h.ingestTelemetry(ctx, n, rng, &tBudget) })
	}
	erng := mrand.New(mrand.NewSource(h.rng.Int63()))
	wg.Go(func() { h.ingestEvents(ctx, n, erng, &eBudget) })
	for _, tr := range h.trips {
		prng := mrand.New(mrand.NewSource(h.rng.Int63()))
		wg.Go(func() { h.ingestPoints(ctx, n, prng, tr) })
	}
	delay := 50*time.Millisecond + time.Duration(h.rng.Int63n(int64(550*time.Millisecond)))
	crashPause(delay) // the random moment of the crash
	h.child.kill()
	cancel()
	wg.Wait()
	h.api.tr.CloseIdleConnections()

	restarted := time.Now()
	h.child.start()
	h.child.waitReady(h.base, crashReadyWithin)
	ready := time.Since(restarted)
	h.restarted = time.Now()
	verifying := time.Now()
	ok := h.verify(n)
	h.t.Logf("cycle %2d: SIGKILL after %v; acknowledged %d telemetry, %d events, %d points (%d, %d, %d in all); ready in %v, checked in %v",
		n, delay.Round(time.Millisecond), len(h.telemetry)-t0, len(h.events)-e0, h.pointCount()-p0,
		len(h.telemetry), len(h.events), h.pointCount(), ready.Round(time.Millisecond), time.Since(verifying).Round(time.Millisecond))
	return ok
}

func (h *crashHarness) pointCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, p := range h.points {
		n += len(p)
	}
	return n
}

func (h *crashHarness) ack(ledger map[string]int, ids []string, cycle int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, id := range ids {
		if _, ok := ledger[id]; !ok {
			ledger[id] = cycle
		}
	}
}

func (h *crashHarness) unexpectedf(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.unexpected = append(h.unexpected, fmt.Sprintf(format, args...))
}

// crashPace is the pause between two requests of an ingest goroutine.
func crashPace(rng *mrand.Rand) { crashPause(time.Duration(5+rng.Intn(20)) * time.Millisecond) }

// ingestTelemetry posts batches of 1..200 messages until the child dies
// (a request fails) or the budget runs out.
func (h *crashHarness) ingestTelemetry(ctx context.Context, cycle int, rng *mrand.Rand, budget *atomic.Int64) {
	for ctx.Err() == nil {
		n := 1 + rng.Intn(200)
		if budget.Add(-int64(n)) < 0 {
			return
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		msgs := make([]map[string]any, n)
		ids := make([]string, n)
		for i := range msgs {
			seq := h.seq.Add(1)
			v := fmt.Sprintf("crash-%s-v%d", h.run, rng.Intn(crashVehicles))
			msgs[i] = map[string]any{"timestamp": now, "vehicle_id": v, "data_type": "environmental", "sequence": seq,
				"data": map[string]any{"crash": map[string]any{"seq": seq, "cycle": cycle}}}
			ids[i] = v + "#" + strconv.FormatInt(seq, 10)
		}
		status, body, err := h.api.call(ctx, "POST", "/v1/telemetry", map[string]any{"messages": msgs})
		if err != nil {
			return // the child died under the request: not acknowledged
		}
		switch status {
		case 202:
			h.ack(h.telemetry, ids, cycle)
		case 503: // the bus refused it: nothing accepted
		default:
			h.unexpectedf("cycle %d: POST /v1/telemetry: %d %.300s", cycle, status, body)
		}
		crashPace(rng)
	}
}

// ingestEvents posts batches of 1..20 events with unique event_ids.
func (h *crashHarness) ingestEvents(ctx context.Context, cycle int, rng *mrand.Rand, budget *atomic.Int64) {
	severities := []string{"low", "medium", "high"}
	categories := []string{"operational_events", "driver_events", "vehicle_events", "safety_events"}
	for ctx.Err() == nil {
		n := 1 + rng.Intn(20)
		if budget.Add(-int64(n)) < 0 {
			return
		}
		now := time.Now().UTC().Format(time.RFC3339Nano)
		evs := make([]map[string]any, n)
		ids := make([]string, n)
		for i := range evs {
			ids[i] = fmt.Sprintf("crash-%s-e%d", h.run, h.evn.Add(1))
			evs[i] = map[string]any{"event_id": ids[i], "event_type": "crash_probe", "category": categories[rng.Intn(len(categories))],
				"timestamp": now, "severity": severities[rng.Intn(len(severities))],
				"source":     map[string]any{"vehicle_id": fmt.Sprintf("crash-%s-v%d", h.run, rng.Intn(crashVehicles))},
				"event_data": map[string]any{"cycle": cycle}}
		}
		status, body, err := h.api.call(ctx, "POST", "/v1/events", map[string]any{"events": evs})
		if err != nil {
			return
		}
		switch status {
		case 202:
			h.ack(h.events, ids, cycle)
		case 503:
		default:
			h.unexpectedf("cycle %d: POST /v1/events: %d %.300s", cycle, status, body)
		}
		crashPace(rng)
	}
}

// ingestPoints uploads batches of 1..50 points to one trip, each point
// later than every point before it.
func (h *crashHarness) ingestPoints(ctx context.Context, cycle int, rng *mrand.Rand, tr *crashTrip) {
	left := crashPointsPerCycle
	for ctx.Err() == nil {
		n := 1 + rng.Intn(50)
		if left -= n; left < 0 {
			return
		}
		pts := make([]map[string]any, n)
		idx := make([]int64, n)
		for i := range pts {
			k := tr.next
			tr.next++
			idx[i] = k
			pts[i] = map[string]any{"latitude": 40 + float64(k)*crashPointLat, "longitude": tr.lon,
				"timestamp": tr.start.Add(time.Duration(k+1) * crashPointStep).Format(time.RFC3339Nano),
				"speed_kmh": 40.0, "heading": 0.0, "accuracy_meters": 4.0}
		}
		status, body, err := h.api.call(ctx, "POST", "/v1/locations/batch", map[string]any{"trip_id": tr.id, "locations": pts,
			"device_info": map[string]any{"device_id": "crash-dev"}})
		if err != nil {
			return
		}
		if status != 200 {
			if status != 503 {
				h.unexpectedf("cycle %d: POST /v1/locations/batch: %d %.300s", cycle, status, body)
			}
			crashPace(rng)
			continue
		}
		var res struct {
			Rejections []struct {
				Index  int    `json:"index"`
				Reason string `json:"reason"`
			} `json:"rejections"`
		}
		if err := json.Unmarshal(body, &res); err != nil {
			h.unexpectedf("cycle %d: POST /v1/locations/batch: %v: %.300s", cycle, err, body)
			continue
		}
		rejected := map[int]bool{}
		for _, r := range res.Rejections {
			rejected[r.Index] = true
			h.unexpectedf("cycle %d: trip %s: point %d rejected: %s", cycle, tr.id, idx[r.Index], r.Reason)
		}
		h.mu.Lock()
		for i, k := range idx {
			if !rejected[i] {
				h.points[tr.id][k] = cycle
			}
		}
		h.mu.Unlock()
		crashPace(rng)
	}
}
