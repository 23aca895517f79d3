package main

// The model test: seeded random workloads of events (model_gen_test.go)
// sent to a real server, and what real websocket clients and a real
// webhook receiver got compared, message by message, with the reference
// model (model_ref_test.go) of the contract in docs/streaming.md.
//
//   - TestModelEmbedded: one node on its defaults, started once; every
//     seed uses organizations of its own, so seeds run concurrently.
//   - TestModelTwoNodes: two nodes sharing kfake (Kafka protocol), Redis
//     and PostgreSQL; needs FLEETHUB_TEST_DATABASE_URL and
//     FLEETHUB_TEST_REDIS_URL (skipped without them, failed under CI=true).
//   - TestModelCrash (model_crash_test.go): the server SIGKILLed between
//     requests.
//
// Timing cannot change the outcome: the server runs with a short order
// wait; each tenant's requests of a phase are sent back to back (tenants
// at once) in less than a third of it, and the probes must have received
// the messages the phase releases at once within half of it; otherwise the
// run has no verdict ("too slow") and runs again, four at a time, then
// alone up to three times, and a seed still too slow fails the test as
// "machine too slow".
// The next phase starts once everything the model releases in this phase
// arrived, which implies every gap left open was skipped (each tenant has
// a probe stream, ordering and unfiltered, that sees every release). After
// the last phase a quiet period of twice the order wait catches extra
// copies; then every stream is compared: the exact multiset of event ids
// (nothing missing, nothing extra), the order per key (release order for
// ordering streams, publication order per bus key for the others), the
// metadata.late flags, the correlation positions, the content of each
// event, offsets 1..n once each, and for webhooks every webhook-id and
// every offset once, signatures valid. A failing seed is run again alone,
// then shrunk (delta debugging over streams, phases, requests and events,
// within FLEETHUB_MODEL_SHRINK) and printed as JSON that
// FLEETHUB_MODEL_REPLAY runs again.
//
// Environment:
//
//	FLEETHUB_MODEL_SEEDS=N         seeds per mode (default 200 embedded, 50 on two nodes; 40 and 12 under -race)
//	FLEETHUB_MODEL_SEED=s          only seed s
//	FLEETHUB_MODEL_REPLAY=path     run the workload of a JSON file (as printed by a failure)
//	FLEETHUB_MODEL_SHRINK=duration time given to shrinking failures (default 60s; 0 disables)
//	FLEETHUB_MODEL_ORDER_WAIT=d    the server's --order-wait (default 750ms, 1s on two nodes)
//	FLEETHUB_MODEL_PARALLEL=n      seeds at a time (default 16, 8 on two nodes)

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/segmentio/kafka-go"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/fleet/keys"
)

const modelDefaultOrderWait = 750 * time.Millisecond

// modelParallel is how many seeds run at a time on one node
// (FLEETHUB_MODEL_PARALLEL); half as many on two nodes.
const modelParallel = 16

// modelCluster is the server under test: one node or several sharing a
// store, a bus and Redis.
type modelCluster struct {
	name       string
	nodes      []*node
	probeHooks bool // probes are webhooks (see modelStreams)
	orderWait  time.Duration
	within     time.Duration // how long a phase's deliveries may take to arrive
	hc         *http.Client
	run        string // unique per test run: organization names
	execs      atomic.Int64
	ts         string // the timestamp of every event

	hookSrv *httptest.Server
	hmu     sync.Mutex
	hooks   map[string]mHookRoute // path token → the run and stream it feeds

	smu       sync.Mutex
	streamIDs []string // every stream started (Redis cleanup)

	lmu sync.Mutex
	lat []time.Duration // of every POST /v1/events

	warns *modelWarnings
}

// modelWarnings keeps the servers' warnings and errors, with their time,
// so that a failing run can show what the servers said meanwhile.
type modelWarnings struct {
	mu   sync.Mutex
	recs []modelWarning
}

type modelWarning struct {
	at   time.Time
	node int
	text string
}

// summary counts the warnings by message.
func (mw *modelWarnings) summary() string {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	count := map[string]int{}
	var msgs []string
	for _, r := range mw.recs {
		m, _, _ := strings.Cut(r.text, " group=")
		m, _, _ = strings.Cut(m, " topic=")
		m, _, _ = strings.Cut(m, " stream_id=")
		if count[m] == 0 {
			msgs = append(msgs, m)
		}
		count[m]++
	}
	if len(msgs) == 0 {
		return "none"
	}
	var b []string
	for _, m := range msgs {
		b = append(b, fmt.Sprintf("%d× %.200s", count[m], m))
	}
	return strings.Join(b, "; ")
}

// between returns the warnings logged from a to b.
func (mw *modelWarnings) between(a, b time.Time) []string {
	mw.mu.Lock()
	defer mw.mu.Unlock()
	var out []string
	for _, r := range mw.recs {
		if !r.at.Before(a) && !r.at.After(b) {
			out = append(out, fmt.Sprintf("%s node %d: %s", r.at.Format("15:04:05.000"), r.node, r.text))
		}
	}
	return out
}

// mWarnHandler is a slog.Handler that records WARN and above and passes
// everything to next (the usual test logger).
type mWarnHandler struct {
	mw    *modelWarnings
	node  int
	attrs []slog.Attr
	next  slog.Handler
}

func (h *mWarnHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || h.next.Enabled(ctx, l)
}

func (h *mWarnHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		var b strings.Builder
		b.WriteString(r.Level.String() + " " + r.Message)
		for _, a := range h.attrs {
			b.WriteString(" " + a.String())
		}
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			return true
		})
		h.mw.mu.Lock()
		if len(h.mw.recs) < 100_000 {
			h.mw.recs = append(h.mw.recs, modelWarning{r.Time, h.node, b.String()})
		}
		h.mw.mu.Unlock()
	}
	if h.next.Enabled(ctx, r.Level) {
		return h.next.Handle(ctx, r)
	}
	return nil
}

func (h *mWarnHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &mWarnHandler{h.mw, h.node, append(slices.Clone(h.attrs), as...), h.next.WithAttrs(as)}
}

func (h *mWarnHandler) WithGroup(name string) slog.Handler {
	return &mWarnHandler{h.mw, h.node, h.attrs, h.next.WithGroup(name)}
}

// startModelNode is startNode with a logger that records warnings.
func (cl *modelCluster) startModelNode(t *testing.T, cfg *config) *node {
	t.Helper()
	ctx := context.Background()
	logger := slog.New(&mWarnHandler{mw: cl.warns, node: len(cl.nodes), next: testLogger(t).Handler()})
	a, err := newApp(ctx, cfg, logger)
	if err != nil {
		t.Fatalf("newApp: %v", err)
	}
	if err := a.start(ctx); err != nil {
		t.Fatalf("start: %v", err)
	}
	n := &node{t: t, app: a, url: "http://" + a.addr.String()}
	t.Cleanup(func() { n.stop() })
	return n
}

// latencies summarizes the POST /v1/events latencies.
func (cl *modelCluster) latencies() string {
	cl.lmu.Lock()
	l := slices.Clone(cl.lat)
	cl.lmu.Unlock()
	if len(l) == 0 {
		return "no requests"
	}
	slices.Sort(l)
	q := func(f float64) time.Duration { return l[int(f*float64(len(l)-1))].Round(time.Millisecond) }
	return fmt.Sprintf("POST /v1/events p50 %v p90 %v p99 %v max %v", q(0.5), q(0.9), q(0.99), q(1))
}

type mHookRoute struct {
	r      *mRun
	stream int
}

func modelOrderWait(t *testing.T, def time.Duration) time.Duration {
	if v := os.Getenv("FLEETHUB_MODEL_ORDER_WAIT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("FLEETHUB_MODEL_ORDER_WAIT=%q: %v", v, err)
		}
		return d
	}
	return def
}

func newModelCluster(t *testing.T, name string, orderWait, within time.Duration) *modelCluster {
	b := make([]byte, 4)
	crand.Read(b)
	cl := &modelCluster{name: name, orderWait: orderWait, within: within, run: hex.EncodeToString(b), hooks: map[string]mHookRoute{}, warns: &modelWarnings{},
		ts: time.Now().UTC().Add(-time.Minute).Truncate(time.Millisecond).Format(time.RFC3339Nano)}
	tr := &http.Transport{MaxIdleConnsPerHost: 4 * modelParallel, IdleConnTimeout: 30 * time.Second}
	cl.hc = &http.Client{Transport: tr, Timeout: 30 * time.Second}
	t.Cleanup(tr.CloseIdleConnections)
	cl.hookSrv = httptest.NewServer(http.HandlerFunc(cl.hook))
	t.Cleanup(cl.hookSrv.Close)
	return cl
}

// startModelEmbedded is one node on its defaults.
func startModelEmbedded(t *testing.T) *modelCluster {
	cl := newModelCluster(t, "embedded", modelOrderWait(t, modelDefaultOrderWait), 15*time.Second)
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks, cfg.OrderWait = true, cl.orderWait
	cl.nodes = []*node{cl.startModelNode(t, cfg)}
	return cl
}

// startModelTwoNodes is two nodes on one PostgreSQL schema, one Redis and
// one kfake cluster, started once the pipeline's consumer group is stable
// with both members (a rebalance later would restart the ordering state of
// the partitions that move).
func startModelTwoNodes(t *testing.T) *modelCluster {
	pg := requireService(t, "FLEETHUB_TEST_DATABASE_URL")
	rd := requireService(t, "FLEETHUB_TEST_REDIS_URL")
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	brokers := cluster.ListenAddrs()
	cl := newModelCluster(t, "two nodes", modelOrderWait(t, time.Second), 30*time.Second)
	cl.probeHooks = true
	crashRedisCleanup(t, rd, func() []string {
		cl.smu.Lock()
		defer cl.smu.Unlock()
		p := []string{"*model-" + cl.run + "*"}
		for _, id := range cl.streamIDs {
			p = append(p, "*"+id+"*")
		}
		return p
	})
	dsn := crashSchema(t, pg)
	// Every stream a node's websocket clients read keeps one of its Redis
	// connections in XREAD BLOCK, for 30 s after its last reader: with
	// go-redis's default pool (10 per CPU) the seeds' streams would starve
	// every other Redis call of the node (rate limits, dedup, appends) and
	// make every phase too slow to judge. The pool is made big enough
	// here; the starvation itself is a finding of its own.
	ru, err := url.Parse(rd)
	if err != nil {
		t.Fatalf("FLEETHUB_TEST_REDIS_URL: %v", err)
	}
	q := ru.Query()
	if q.Get("pool_size") == "" {
		q.Set("pool_size", "1000")
	}
	ru.RawQuery = q.Encode()
	for range 2 {
		cfg := testConfig(t)
		cfg.DatabaseURL, cfg.RedisURL, cfg.KafkaBrokers = dsn, ru.String(), strings.Join(brokers, ",")
		cfg.AllowPrivateWebhooks, cfg.OrderWait = true, cl.orderWait
		cl.nodes = append(cl.nodes, cl.startModelNode(t, cfg))
	}
	// the group: stable, two members, every partition of both topics
	kc := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	last := ""
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := kc.DescribeGroups(ctx, &kafka.DescribeGroupsRequest{GroupIDs: []string{crashPipelineGroup}})
		cancel()
		if err == nil && len(res.Groups) == 1 {
			g := res.Groups[0]
			parts, withParts := 0, 0
			for _, m := range g.Members {
				n := 0
				for _, tp := range m.MemberAssignments.Topics {
					n += len(tp.Partitions)
				}
				parts += n
				if n > 0 {
					withParts++
				}
			}
			last = fmt.Sprintf("state %s, %d members, %d with partitions, %d partitions", g.GroupState, len(g.Members), withParts, parts)
			if g.GroupState == "Stable" && len(g.Members) == 2 && withParts == 2 && parts == 16 {
				break
			}
		} else {
			last = fmt.Sprint(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pipeline's consumer group did not settle with both nodes within 60 s: %s", last)
		}
		crashPause(100 * time.Millisecond) // the interval of a poll with a deadline
	}
	return cl
}

// hook is the webhook receiver of every run of the cluster.
func (cl *modelCluster) hook(w http.ResponseWriter, req *http.Request) {
	body, _ := io.ReadAll(req.Body)
	token := strings.TrimPrefix(req.URL.Path, "/h/")
	cl.hmu.Lock()
	rt, ok := cl.hooks[token]
	cl.hmu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusOK) // a run that ended: its stream may still deliver
		return
	}
	rt.r.gotHook(rt.stream, req.Header, body)
	w.WriteHeader(http.StatusOK)
}

// call sends a request to node n; errors are returned, never fatal (runs
// are goroutines).
func (cl *modelCluster) call(ctx context.Context, n int, method, path, key string, body any, out any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = strings.NewReader(string(b))
	}
	req, err := http.NewRequestWithContext(ctx, method, cl.nodes[n%len(cl.nodes)].url+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", key)
	res, err := cl.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, b, err
	}
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(b, out); err != nil {
			return res.StatusCode, b, fmt.Errorf("%s %s: %v: %s", method, path, err, b)
		}
	}
	return res.StatusCode, b, nil
}

// modelStreams is the workload's streams and a probe per tenant: ordering,
// unfiltered, without deduplication, so it sees every release (the
// harness waits on it before a phase's late fillers go). On two nodes the
// probes are webhooks, so that every event also goes through the shared
// delivery queue (PostgreSQL, leases taken by either node).
func modelStreams(w *mWorkload, probeHook bool) []mStream {
	out := slices.Clone(w.Streams)
	for t := range w.Tenants {
		out = append(out, mStream{Tenant: t, Order: true, Probe: true, Webhook: probeHook})
	}
	return out
}

func (s mStream) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "tenant %d", s.Tenant)
	if s.Probe {
		b.WriteString(" probe")
	}
	for _, f := range []struct {
		on   bool
		name string
	}{{s.Dedup, "dedup"}, {s.Order, "order"}, {s.Corr, "corr"}, {s.Webhook, "webhook"}, {s.Batch, "batch"}} {
		if f.on {
			b.WriteString(" " + f.name)
		}
	}
	if !s.Webhook {
		b.WriteString(" websocket")
	}
	fb, _ := json.Marshal(s.Filter)
	if string(fb) != "{}" {
		b.WriteString(" filter " + string(fb))
	}
	return b.String()
}

// startBody is the start request of a stream.
func (s mStream) startBody(hookURL string) map[string]any {
	f := map[string]any{}
	set := func(name string, l []string) {
		if len(l) > 0 {
			f[name] = l
		}
	}
	set("categories", s.Filter.Categories)
	set("severity_levels", s.Filter.Severities)
	set("priority_levels", s.Filter.Priorities)
	set("vehicle_ids", s.Filter.Vehicles)
	set("driver_ids", s.Filter.Drivers)
	var conds []map[string]any
	if len(s.Filter.Types) > 0 {
		conds = append(conds, map[string]any{"field": "event_type", "operator": "in", "value": s.Filter.Types})
	}
	if s.Filter.MinLevel > 0 {
		conds = append(conds, map[string]any{"field": "event_data.level", "operator": ">=", "value": s.Filter.MinLevel})
	}
	if conds != nil {
		f["custom_conditions"] = conds
	}
	sc := map[string]any{"delivery_method": "websocket"}
	if s.Webhook {
		sc["delivery_method"] = "webhook"
	}
	if s.Batch {
		sc["batch_events"], sc["batch_size"], sc["max_wait_time"] = true, 3, 50
	}
	body := map[string]any{"event_filters": f, "stream_config": sc,
		"processing_rules": map[string]any{"deduplication": s.Dedup, "event_ordering": s.Order, "correlation_enabled": s.Corr}}
	if s.Webhook {
		body["webhook_url"] = hookURL
	}
	return body
}

// body is the event as POSTed.
func (e mEvent) body(ts string) map[string]any {
	src := map[string]any{}
	if e.Vehicle != "" {
		src["vehicle_id"] = e.Vehicle
	}
	if e.Driver != "" {
		src["driver_id"] = e.Driver
	}
	if e.Trip != "" {
		src["trip_id"] = e.Trip
	}
	m := map[string]any{"event_id": e.ID, "event_type": e.Type, "category": e.Category, "timestamp": ts, "severity": e.Severity,
		"priority": e.Priority, "source": src, "event_data": map[string]any{"level": e.Level}}
	md := map[string]any{}
	if e.Seq > 0 {
		md["sequence_number"] = e.Seq
	}
	if e.Corr != "" {
		md["correlation_id"] = e.Corr
	}
	if len(md) > 0 {
		m["metadata"] = md
	}
	return m
}

// mGot is a message a client received.
type mGot struct {
	Offset  int64
	ID      string
	Late    bool
	Pos     int // enrichment.correlation.position (0: absent)
	Related int
	CorrID  string // enrichment.correlation.correlation_id
	HasCorr bool
	Print   string
	Hook    string    // webhook-id
	Event   mEvent    // as read back
	At      time.Time // when it arrived
}

func (g mGot) String() string {
	s := g.ID
	if g.Late {
		s += "(late)"
	}
	if g.HasCorr {
		s += fmt.Sprintf("@%s#%d", g.CorrID, g.Pos)
	}
	return s
}

// mWire is the part of a delivered event the comparison reads.
type mWire struct {
	StreamID string `json:"stream_id"`
	Offset   int64  `json:"offset"`
	Type     string `json:"type"`
	Code     string `json:"code"`
	Message  *struct {
		EventID   string `json:"event_id"`
		EventType string `json:"event_type"`
		Category  string `json:"category"`
		Severity  string `json:"severity"`
		Priority  string `json:"priority"`
		Source    struct {
			VehicleID string `json:"vehicle_id"`
			DriverID  string `json:"driver_id"`
			TripID    string `json:"trip_id"`
		} `json:"source"`
		EventData struct {
			Level float64 `json:"level"`
		} `json:"event_data"`
		Metadata struct {
			CorrelationID  string `json:"correlation_id"`
			SequenceNumber int64  `json:"sequence_number"`
			Late           bool   `json:"late"`
		} `json:"metadata"`
		Enrichment struct {
			Correlation *struct {
				CorrelationID string `json:"correlation_id"`
				Position      int    `json:"position"`
				RelatedEvents int    `json:"related_events"`
			} `json:"correlation"`
		} `json:"enrichment"`
	} `json:"message"`
}

func (m mWire) got() mGot {
	e := m.Message
	ev := mEvent{ID: e.EventID, Type: e.EventType, Category: e.Category, Severity: e.Severity, Priority: e.Priority, Vehicle: e.Source.VehicleID,
		Driver: e.Source.DriverID, Trip: e.Source.TripID, Seq: e.Metadata.SequenceNumber, Corr: e.Metadata.CorrelationID, Level: int(e.EventData.Level)}
	g := mGot{Offset: m.Offset, ID: e.EventID, Late: e.Metadata.Late, Print: ev.print(), Event: ev}
	if c := e.Enrichment.Correlation; c != nil {
		g.HasCorr, g.Pos, g.Related, g.CorrID = true, c.Position, c.RelatedEvents, c.CorrelationID
	}
	return g
}

// mParseFrames reads a websocket frame or webhook body: one wrapper or an
// array of them.
func mParseFrames(data []byte) ([]mWire, error) {
	if len(data) > 0 && data[0] == '[' {
		var many []mWire
		err := json.Unmarshal(data, &many)
		return many, err
	}
	var one mWire
	err := json.Unmarshal(data, &one)
	return []mWire{one}, err
}

// mIssue is one difference from the model.
type mIssue struct {
	Class  string
	Stream int // -1: not of a stream
	Msg    string
}

// classes, in the order a failure is named by.
var mClasses = []string{"request", "content", "extra", "missing", "duplicate", "offsets", "webhook", "websocket", "order", "late", "correlation"}

// mOutcome is the verdict of one run of a workload.
type mOutcome struct {
	issues  []mIssue
	tooSlow string // no verdict: a phase outlasted a third of the order wait, or a node answered 503
	notes   []string
	took    time.Duration
	sendMax time.Duration // the longest phase's sending
	warns   []string      // what the servers warned of during the run
	streams []mStream     // the workload's and the probes
}

func (o *mOutcome) failed() bool { return len(o.issues) > 0 }

// primary is the class a failure is known by.
func (o *mOutcome) primary() string {
	for _, c := range mClasses {
		for _, is := range o.issues {
			if is.Class == c {
				return c
			}
		}
	}
	return ""
}

// rebalanced reports whether a server warned, during the run, of a
// consumer group rebalance (which restarts the ordering state of the
// partitions that move and replays what was not committed).
func (o *mOutcome) rebalanced() bool {
	for _, w := range o.warns {
		if strings.Contains(w, "rebalancing the group") || strings.Contains(w, "not in the current generation") {
			return true
		}
	}
	return false
}

func (o *mOutcome) has(class string) bool {
	for _, is := range o.issues {
		if is.Class == class {
			return true
		}
	}
	return false
}

// mRun is one execution of a workload.
type mRun struct {
	cl      *modelCluster
	w       *mWorkload
	streams []mStream
	keys    []string // per tenant
	orgs    []string
	ids     []string // per stream
	secrets []string
	tokens  []string

	crash bool // a server may be killed: a webhook-id may come again

	mu       sync.Mutex
	got      [][]mGot           // per stream, in arrival order
	offs     []map[int64]string // per stream: offset → the webhook-id or "ws" it came under
	count    []map[string]int   // per stream: event id → messages at distinct offsets
	hookIDs  []map[string]string
	problems []mIssue
	notify   chan struct{}
	closing  bool
	conns    []*websocket.Conn
}

func (r *mRun) signal() {
	select {
	case r.notify <- struct{}{}:
	default:
	}
}

func (r *mRun) problem(class string, stream int, format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.problems) < 50 {
		r.problems = append(r.problems, mIssue{class, stream, fmt.Sprintf(format, args...)})
	}
}

// record keeps a received message; via is the webhook-id or "ws".
func (r *mRun) record(i int, m mWire, via string) {
	g := m.got()
	g.Hook, g.At = via, time.Now()
	r.mu.Lock()
	r.got[i] = append(r.got[i], g)
	if _, seen := r.offs[i][m.Offset]; !seen {
		r.offs[i][m.Offset] = via
		r.count[i][g.ID]++
	}
	r.mu.Unlock()
	r.signal()
}

func (r *mRun) gotHook(i int, h http.Header, body []byte) {
	if err := verifyWebhook(r.secrets[i], h, body); err != nil {
		r.problem("webhook", i, "signature: %v", err)
	}
	id := h.Get("webhook-id")
	frames, err := mParseFrames(body)
	if err != nil {
		r.problem("webhook", i, "body %.200s: %v", body, err)
		return
	}
	var canon []string // what the webhook-id carries
	for _, f := range frames {
		if f.Message != nil {
			canon = append(canon, fmt.Sprintf("%d:%s", f.Offset, f.Message.EventID))
		}
	}
	r.mu.Lock()
	prev, again := r.hookIDs[i][id]
	r.hookIDs[i][id] = strings.Join(canon, " ")
	r.mu.Unlock()
	if again {
		switch {
		case prev != strings.Join(canon, " "):
			r.problem("webhook", i, "webhook-id %s received twice with different messages: %s, then %s", id, prev, strings.Join(canon, " "))
		case !r.crash: // after a crash a delivery may come again, under its webhook-id
			r.problem("webhook", i, "webhook-id %s (%s) received twice", id, prev)
		}
		return
	}
	for _, f := range frames {
		if f.Message == nil || f.StreamID != r.ids[i] {
			r.problem("webhook", i, "webhook-id %s: an element of stream %q (want %s) or without message: %.200s", id, f.StreamID, r.ids[i], body)
			continue
		}
		r.record(i, f, id)
	}
}

// read follows stream i over a websocket from offset 0, resuming after
// the last offset read when the connection drops.
func (r *mRun) read(ctx context.Context, i, node int) {
	last := int64(0)
	for ctx.Err() == nil {
		u := strings.Replace(r.cl.nodes[node%len(r.cl.nodes)].url, "http://", "ws://", 1) + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(r.ids[i]) +
			"&last_offset=" + strconv.FormatInt(last, 10)
		d := websocket.Dialer{HandshakeTimeout: 10 * time.Second}
		c, res, err := d.DialContext(ctx, u, http.Header{"X-Api-Key": []string{r.keys[r.streams[i].Tenant]}})
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			status := 0
			if res != nil {
				status = res.StatusCode
			}
			r.problem("websocket", i, "dial: %v (status %d)", err, status)
			crashPause(200 * time.Millisecond) // between dial attempts
			continue
		}
		r.mu.Lock()
		if r.closing {
			r.mu.Unlock()
			c.Close()
			return
		}
		r.conns = append(r.conns, c)
		r.mu.Unlock()
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				r.mu.Lock()
				closing := r.closing
				r.mu.Unlock()
				if !closing && ctx.Err() == nil {
					r.problem("websocket", i, "connection lost after offset %d, resuming: %v", last, err)
				}
				break
			}
			frames, err := mParseFrames(data)
			if err != nil {
				r.problem("websocket", i, "frame %.200s: %v", data, err)
				continue
			}
			for _, f := range frames {
				switch {
				case f.Type == "subscribed" || f.Type == "lag":
				case f.Type != "":
					r.problem("websocket", i, "frame %.300s", data)
				case f.Message == nil || f.StreamID != r.ids[i]:
					r.problem("websocket", i, "a message of stream %q (want %s) or without message: %.200s", f.StreamID, r.ids[i], data)
				default:
					last = max(last, f.Offset)
					r.record(i, f, "ws")
				}
			}
		}
		c.Close()
	}
}

// spread is how long after the first of them the probes received the
// last of the messages phase p released at once (not at its end).
func (r *mRun) spread(exp [][]mDelivery, p int, since time.Time) time.Duration {
	r.mu.Lock()
	defer r.mu.Unlock()
	var first, last time.Time
	for i, s := range r.streams {
		if !s.Probe {
			continue
		}
		now := map[string]bool{}
		for _, d := range exp[i] {
			if d.Phase == p && !d.Flushed {
				now[d.ID] = true
			}
		}
		for _, g := range r.got[i] {
			if g.At.Before(since) || !now[g.ID] {
				continue
			}
			if first.IsZero() || g.At.Before(first) {
				first = g.At
			}
			if g.At.After(last) {
				last = g.At
			}
		}
	}
	return last.Sub(first)
}

// arrived reports whether every stream received what the model releases
// through phase p (by event id, at distinct offsets).
func (r *mRun) arrived(exp [][]mDelivery, p int) (bool, string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, ds := range exp {
		need := map[string]int{}
		for _, d := range ds {
			if d.Phase <= p {
				need[d.ID]++
			}
		}
		for id, n := range need {
			if r.count[i][id] < n {
				return false, fmt.Sprintf("stream %d (%s) has %d of %d messages of %s", i, r.streams[i], r.count[i][id], n, id)
			}
		}
	}
	return true, ""
}

// serverView is what the nodes say of stream i: status counters, log
// offset and, for a webhook stream, its deliveries not delivered.
func (r *mRun) serverView(ctx context.Context, i int) string {
	cl := r.cl
	var b strings.Builder
	fmt.Fprintf(&b, "stream %d is %s; on each node:", i, r.ids[i])
	key := r.keys[r.streams[i].Tenant]
	for ni := range cl.nodes {
		var st struct {
			Counters map[string]any `json:"counters"`
			Lag      struct {
				LastOffset any `json:"last_offset"`
			} `json:"lag"`
			Webhook map[string]any `json:"webhook"`
		}
		status, body, err := cl.call(ctx, ni, "GET", "/api/v1/streaming/events/status/"+r.ids[i], key, nil, &st)
		if err != nil || status != 200 {
			fmt.Fprintf(&b, " node %d: status %d %.200s %v;", ni, status, body, err)
			continue
		}
		fmt.Fprintf(&b, " node %d: last_offset %v, counters %v", ni, st.Lag.LastOffset, st.Counters)
		if st.Webhook != nil {
			fmt.Fprintf(&b, ", webhook %v", st.Webhook)
		}
		b.WriteString(";")
	}
	if r.streams[i].Webhook {
		for _, state := range []string{"pending", "failed", "dead_lettered"} {
			var l struct {
				Deliveries []struct {
					ID          string `json:"id"`
					Offset      int64  `json:"offset"`
					Attempts    int    `json:"attempts"`
					LastError   string `json:"last_error"`
					NextAttempt any    `json:"next_attempt_at"`
					CreatedAt   string `json:"created_at"`
				} `json:"deliveries"`
			}
			status, body, err := cl.call(ctx, 0, "GET", "/api/v1/streaming/events/deliveries/"+r.ids[i]+"?limit=5&status="+state, key, nil, &l)
			if err != nil || status != 200 {
				fmt.Fprintf(&b, " deliveries %s: %d %.200s %v;", state, status, body, err)
				continue
			}
			for _, d := range l.Deliveries {
				fmt.Fprintf(&b, " %s delivery %s offset %d attempts %d next %v created %s error %q;", state, d.ID, d.Offset, d.Attempts, d.NextAttempt, d.CreatedAt, d.LastError)
			}
		}
	}
	return b.String()
}

// runWorkload runs w on the cluster and compares.
// newRun prepares a run of w on streams (keys and streams not made yet).
func (cl *modelCluster) newRun(w *mWorkload, streams []mStream) *mRun {
	r := &mRun{cl: cl, w: w, streams: streams, notify: make(chan struct{}, 1)}
	n := len(streams)
	r.got, r.offs, r.count, r.hookIDs = make([][]mGot, n), make([]map[int64]string, n), make([]map[string]int, n), make([]map[string]string, n)
	r.ids, r.secrets, r.tokens = make([]string, n), make([]string, n), make([]string, n)
	for i := range n {
		r.offs[i], r.count[i], r.hookIDs[i] = map[int64]string{}, map[string]int{}, map[string]string{}
	}
	return r
}

// close ends the run's websocket readers and webhook routes.
func (r *mRun) close() {
	r.mu.Lock()
	r.closing = true
	for _, c := range r.conns {
		c.Close()
	}
	r.mu.Unlock()
	r.cl.hmu.Lock()
	for _, tok := range r.tokens {
		delete(r.cl.hooks, tok)
	}
	r.cl.hmu.Unlock()
}

// startStreams starts the run's streams (r.keys set) and makes every node
// know them before the first event (the listing reads the store's
// changes).
func (r *mRun) startStreams(ctx context.Context, exec int64) error {
	cl := r.cl
	for i, s := range r.streams {
		r.tokens[i] = fmt.Sprintf("%s-%d-%d", cl.run, exec, i)
		cl.hmu.Lock()
		cl.hooks[r.tokens[i]] = mHookRoute{r, i}
		cl.hmu.Unlock()
		var st struct {
			StreamID      string `json:"stream_id"`
			WebhookSecret string `json:"webhook_secret"`
		}
		status, b, err := cl.call(ctx, i, "POST", "/api/v1/streaming/events/start", r.keys[s.Tenant], s.startBody(cl.hookSrv.URL+"/h/"+r.tokens[i]), &st)
		if err != nil || status != 201 {
			return fmt.Errorf("start stream %d (%s): %d %s %v", i, s, status, b, err)
		}
		r.ids[i], r.secrets[i] = st.StreamID, st.WebhookSecret
		cl.smu.Lock()
		cl.streamIDs = append(cl.streamIDs, st.StreamID)
		cl.smu.Unlock()
	}
	for ni := range cl.nodes {
		for t := range r.w.Tenants {
			if status, b, err := cl.call(ctx, ni, "GET", "/api/v1/streaming/streams?kind=events&limit=200", r.keys[t], nil, nil); err != nil || status != 200 {
				return fmt.Errorf("list streams on node %d: %d %s %v", ni, status, b, err)
			}
		}
	}
	return nil
}

// snapshot copies what the clients received so far, and the problems met.
func (r *mRun) snapshot() ([][]mGot, []mIssue) {
	r.mu.Lock()
	defer r.mu.Unlock()
	got := make([][]mGot, len(r.got))
	for i := range got {
		got[i] = slices.Clone(r.got[i])
	}
	return got, slices.Clone(r.problems)
}

func (cl *modelCluster) runWorkload(ctx context.Context, w *mWorkload) *mOutcome {
	began := time.Now()
	exec := cl.execs.Add(1)
	streams := modelStreams(w, cl.probeHooks)
	o := &mOutcome{streams: streams}
	r := cl.newRun(w, streams)
	runCtx, cancel := context.WithCancel(ctx)
	var readers sync.WaitGroup
	defer func() {
		r.close()
		cancel()
		readers.Wait()
		o.took = time.Since(began)
		if o.failed() {
			// a rebalance is asked for after a partition looked stalled
			// for 6 s and takes up to 4 s more: look back that far
			o.warns = cl.warns.between(began.Add(-10*time.Second), time.Now())
		}
	}()
	fail := func(format string, args ...any) *mOutcome {
		o.issues = append(o.issues, mIssue{"request", -1, fmt.Sprintf(format, args...)})
		return o
	}
	for t, tn := range w.Tenants {
		org := fmt.Sprintf("model-%s-%d-%s", cl.run, exec, tn.Org)
		c, err := cl.nodes[0].app.keys.Create(ctx, keys.CreateRequest{Org: org, Env: tn.Env, Name: "model", Permissions: []string{"all"}, RPM: 10_000_000})
		if err != nil {
			return fail("create key of tenant %d: %v", t, err)
		}
		r.orgs, r.keys = append(r.orgs, org), append(r.keys, c.Key)
	}
	if err := r.startStreams(ctx, exec); err != nil {
		return fail("%v", err)
	}
	for i, s := range streams {
		if !s.Webhook {
			readers.Add(1)
			go func() {
				defer readers.Done()
				r.read(runCtx, i, i+1)
			}()
		}
	}
	exp := modelExpect(w, streams)
	for p, phase := range w.Phases {
		// tenants are independent: each sends its requests in order, all
		// tenants at once
		start := time.Now()
		perTenant := make([][]mRequest, len(w.Tenants))
		for _, req := range phase {
			perTenant[req.Tenant] = append(perTenant[req.Tenant], req)
		}
		var swg sync.WaitGroup
		var smu sync.Mutex
		var sendErr error
		var unavailable string
		for t, reqs := range perTenant {
			swg.Add(1)
			go func() {
				defer swg.Done()
				for k, req := range reqs {
					if err := cl.send(ctx, t+k, r.keys[t], req, cl.ts); err != nil {
						smu.Lock()
						var un *mUnavailable
						if errors.As(err, new(*mRequestIssue)) {
							o.issues = append(o.issues, mIssue{"request", -1, fmt.Sprintf("phase %d: %v", p, err)})
						} else if errors.As(err, &un) {
							if unavailable == "" {
								unavailable = fmt.Sprintf("phase %d: %v", p, err)
							}
						} else if sendErr == nil {
							sendErr = err
						}
						smu.Unlock()
					}
				}
			}()
		}
		swg.Wait()
		if sendErr != nil {
			return fail("phase %d: %v", p, sendErr)
		}
		if unavailable != "" {
			// a node that could not reach its shared state in time
			// (Redis answering slower than its timeout on a machine
			// busy with other work) refused a request as a client is
			// told to retry: no verdict, the run goes again, and alone
			// if need be, as a run too slow for the order wait does
			o.tooSlow = unavailable
			return o
		}
		took := time.Since(start)
		o.sendMax = max(o.sendMax, took)
		if took > cl.orderWait/3 {
			o.tooSlow = fmt.Sprintf("phase %d's %d requests took %v, more than a third of the order wait %v", p, len(phase), took.Round(time.Millisecond), cl.orderWait)
			return o
		}
		deadline := time.NewTimer(cl.within)
		for {
			ok, why := r.arrived(exp, p)
			if ok {
				break
			}
			select {
			case <-r.notify:
				continue
			case <-deadline.C:
			case <-ctx.Done():
				return fail("cancelled: %v", ctx.Err())
			}
			// what arrived is compared with the phases sent so far
			o.notes = append(o.notes, fmt.Sprintf("phase %d's deliveries did not all arrive within %v (%s): later phases not sent", p, cl.within, why))
			cut := w.clone()
			cut.Phases = cut.Phases[:p+1]
			exp = modelExpect(cut, streams)
			break
		}
		deadline.Stop()
		if len(o.notes) > 0 {
			break
		}
		// the timing guard: the messages the probes got at once (not
		// behind a skipped gap) show how spread out the pipeline's
		// handling of the phase was; over half the order wait, a gap
		// might have been skipped before its filler of the same phase
		// was seen, and the run has no verdict
		if spread := r.spread(exp, p, start); spread > cl.orderWait/2 {
			o.tooSlow = fmt.Sprintf("the probes got phase %d's messages over %v, more than half the order wait %v", p, spread.Round(time.Millisecond), cl.orderWait)
			return o
		}
	}
	// the documented quiet period: extra copies have time to show
	crashPause(2 * cl.orderWait)
	got, problems := r.snapshot()
	o.issues = append(o.issues, problems...)
	o.issues = append(o.issues, compareModel(w, streams, exp, got)...)
	// what the server says of the streams that miss messages
	asked := map[int]bool{}
	for _, is := range o.issues {
		if is.Class == "missing" && is.Stream >= 0 && !asked[is.Stream] {
			asked[is.Stream] = true
			o.notes = append(o.notes, r.serverView(ctx, is.Stream))
		}
	}
	return o
}

// mRequestIssue is an answer to POST /v1/events that is a 202 but not
// the one the contract describes.
type mRequestIssue struct{ msg string }

func (e *mRequestIssue) Error() string { return e.msg }

// mUnavailable is a 503 answer to POST /v1/events: the node refused the
// request whole (a shared part it depends on did not answer in time), as
// a client is told to retry later.
type mUnavailable struct{ msg string }

func (e *mUnavailable) Error() string { return e.msg }

// send POSTs one request of events and checks the answer: 202, every
// event accepted, the in-request repeats counted in duplicates.
func (cl *modelCluster) send(ctx context.Context, node int, key string, req mRequest, ts string) error {
	evs := make([]map[string]any, len(req.Events))
	ids := map[string]bool{}
	repeats := 0
	for j, e := range req.Events {
		evs[j] = e.body(ts)
		if ids[e.ID] {
			repeats++
		}
		ids[e.ID] = true
	}
	var res struct {
		Accepted   int  `json:"accepted"`
		Duplicates *int `json:"duplicates"`
	}
	began := time.Now()
	status, b, err := cl.call(ctx, node, "POST", "/v1/events", key, map[string]any{"events": evs}, &res)
	cl.lmu.Lock()
	cl.lat = append(cl.lat, time.Since(began))
	cl.lmu.Unlock()
	if err == nil && status == http.StatusServiceUnavailable {
		return &mUnavailable{fmt.Sprintf("POST /v1/events: %d %.300s", status, b)}
	}
	if err != nil || status != 202 {
		return fmt.Errorf("POST /v1/events: %d %s %v", status, b, err)
	}
	if res.Accepted != len(evs) || (res.Duplicates == nil && repeats > 0) || (res.Duplicates != nil && *res.Duplicates != repeats) {
		return &mRequestIssue{fmt.Sprintf("POST /v1/events of %d events with %d repeated ids answered %s", len(evs), repeats, b)}
	}
	return nil
}

// compareModel compares what each stream got (in arrival order) with the
// model.
func compareModel(w *mWorkload, streams []mStream, exp [][]mDelivery, got [][]mGot) []mIssue {
	var out []mIssue
	add := func(class string, i int, format string, args ...any) {
		out = append(out, mIssue{class, i, fmt.Sprintf(format, args...)})
	}
	// the events of each tenant by id (copies are equal)
	byID := make([]map[string]mEvent, len(w.Tenants))
	for t := range byID {
		byID[t] = map[string]mEvent{}
	}
	for _, ph := range w.Phases {
		for _, r := range ph {
			for _, e := range r.Events {
				byID[r.Tenant][e.ID] = e
			}
		}
	}
	for i, s := range streams {
		// offsets: websocket in arrival order 1, 2, 3…; webhook each once
		var msgs []mGot
		seen := map[int64]bool{}
		if !s.Webhook {
			for j, g := range got[i] {
				if g.Offset != int64(j+1) {
					add("offsets", i, "message %d of the websocket has offset %d (want %d)", j+1, g.Offset, j+1)
					break
				}
			}
		}
		for _, g := range got[i] {
			if seen[g.Offset] {
				if s.Webhook {
					add("webhook", i, "offset %d received again (webhook-id %s)", g.Offset, g.Hook)
				}
				continue
			}
			seen[g.Offset] = true
			msgs = append(msgs, g)
		}
		slices.SortFunc(msgs, func(a, b mGot) int { return int(a.Offset - b.Offset) })
		for j, g := range msgs {
			if g.Offset != int64(j+1) {
				add("offsets", i, "offsets are not 1..%d: the %d-th lowest is %d", len(msgs), j+1, g.Offset)
				break
			}
		}
		// content
		var known []mGot
		for _, g := range msgs {
			e, ok := byID[s.Tenant][g.ID]
			switch {
			case !ok:
				add("extra", i, "offset %d: %s is no event of tenant %d (%s)", g.Offset, g.ID, s.Tenant, g.Print)
				continue
			case e.print() != g.Print:
				add("content", i, "offset %d: %s reads %s, tenant %d sent %s", g.Offset, g.ID, g.Print, s.Tenant, e.print())
				continue
			}
			switch {
			case s.Corr && e.Corr != "":
				if !g.HasCorr || g.CorrID != e.Corr || g.Related != g.Pos-1 {
					add("correlation", i, "offset %d: %s has enrichment.correlation %v %q position %d related %d (its correlation_id %s)", g.Offset, g.ID, g.HasCorr, g.CorrID, g.Pos, g.Related, e.Corr)
				}
			case g.HasCorr:
				add("correlation", i, "offset %d: %s has enrichment.correlation, the stream or event has no correlation", g.Offset, g.ID)
			}
			if g.Late && !s.Order {
				add("late", i, "offset %d: %s marked late in a stream without ordering", g.Offset, g.ID)
			}
			known = append(known, g)
		}
		// multiset
		want, have := map[string]int{}, map[string]int{}
		for _, d := range exp[i] {
			want[d.ID]++
		}
		for _, g := range known {
			have[g.ID]++
		}
		var missing, extra, dup []string
		for id, n := range want {
			if have[id] < n {
				missing = append(missing, fmt.Sprintf("%s×%d", id, n-have[id]))
			}
		}
		for id, n := range have {
			switch {
			case want[id] == 0:
				extra = append(extra, fmt.Sprintf("%s×%d", id, n))
			case n > want[id]:
				dup = append(dup, fmt.Sprintf("%s×%d", id, n-want[id]))
			}
		}
		for _, l := range []struct {
			class string
			ids   []string
			what  string
		}{{"missing", missing, "missing"}, {"extra", extra, "not expected at all"}, {"duplicate", dup, "received more often than expected"}} {
			if len(l.ids) > 0 {
				slices.Sort(l.ids)
				add(l.class, i, "%s: %s", l.what, strings.Join(l.ids, " "))
			}
		}
		// order, late flags and positions per key
		keyOf := func(e mEvent) string {
			if s.Order {
				return e.orderKey()
			}
			return e.partitionKey()
		}
		expBy, gotBy := map[string][]mDelivery{}, map[string][]mGot{}
		var keys []string
		for _, d := range exp[i] {
			if _, ok := expBy[d.Key]; !ok {
				keys = append(keys, d.Key)
			}
			expBy[d.Key] = append(expBy[d.Key], d)
		}
		for _, g := range known {
			k := keyOf(g.Event)
			gotBy[k] = append(gotBy[k], g)
		}
		for _, k := range keys {
			e, g := expBy[k], gotBy[k]
			if !mSameIDs(e, g) {
				continue // missing or extra, reported above
			}
			for j := range e {
				class := ""
				switch {
				case e[j].ID != g[j].ID:
					class = "order"
				case e[j].Late != g[j].Late:
					class = "late"
				case e[j].Pos != g[j].Pos:
					class = "correlation"
				}
				if class != "" {
					add(class, i, "key %s, message %d of the key: want %s, got %s\n\twant %v\n\tgot  %v", k, j+1, e[j], g[j], mWithSeq(e), mWithSeqGot(g))
					break
				}
			}
		}
	}
	return out
}

func mSameIDs(e []mDelivery, g []mGot) bool {
	if len(e) != len(g) {
		return false
	}
	a, b := make([]string, len(e)), make([]string, len(g))
	for i := range e {
		a[i], b[i] = e[i].ID, g[i].ID
	}
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

func mWithSeq(ds []mDelivery) string {
	var b []string
	for _, d := range ds {
		b = append(b, fmt.Sprintf("%s[%d]", d, d.Event.Seq))
	}
	return strings.Join(b, " ")
}

func mWithSeqGot(gs []mGot) string {
	var b []string
	for _, g := range gs {
		b = append(b, fmt.Sprintf("%s[%d]", g, g.Event.Seq))
	}
	return strings.Join(b, " ")
}

// mStats counts what the workloads exercised, so that a passing run shows
// what it checked.
type mStats struct {
	deliveries, websocket, webhook, late, afterGap, suppressed, correlated, unmatched, copies, reusedIDs int
	combos                                                                                               map[string]bool
}

func (st *mStats) add(w *mWorkload, probeHook bool) {
	streams := modelStreams(w, probeHook)
	exp := modelExpect(w, streams)
	if st.combos == nil {
		st.combos = map[string]bool{}
	}
	ids := map[string]map[int]bool{}
	for i, s := range streams {
		if !s.Probe {
			st.combos[fmt.Sprintf("dedup=%v order=%v corr=%v", s.Dedup, s.Order, s.Corr)] = true
		}
		matching := 0
		for _, ph := range w.Phases {
			for _, r := range ph {
				if r.Tenant != s.Tenant {
					continue
				}
				for _, e := range r.Events {
					if s.Filter.match(e) {
						matching++
					}
				}
			}
		}
		st.suppressed += matching - len(exp[i])
		st.deliveries += len(exp[i])
		if s.Webhook {
			st.webhook += len(exp[i])
		} else {
			st.websocket += len(exp[i])
		}
		last := map[string]int64{}
		for _, d := range exp[i] {
			if d.Late {
				st.late++
			}
			if d.Pos > 1 {
				st.correlated++
			}
			if s.Order && !d.Late && d.Event.Seq > 0 {
				if prev, ok := last[d.Key]; ok && d.Event.Seq > prev+1 {
					st.afterGap++
				}
				last[d.Key] = d.Event.Seq
			}
		}
	}
	seen := map[string]bool{}
	for _, ph := range w.Phases {
		for _, r := range ph {
			for _, e := range r.Events {
				k := strconv.Itoa(r.Tenant) + "/" + e.ID
				if seen[k] {
					st.copies++
				}
				seen[k] = true
				if ids[e.ID] == nil {
					ids[e.ID] = map[int]bool{}
				}
				ids[e.ID][r.Tenant] = true
				any := false
				for _, s := range w.Streams {
					if s.Tenant == r.Tenant && s.Filter.match(e) {
						any = true
					}
				}
				if !any {
					st.unmatched++
				}
			}
		}
	}
	for _, ts := range ids {
		if len(ts) > 1 {
			st.reusedIDs++
		}
	}
}

func (st *mStats) String() string {
	return fmt.Sprintf("%d deliveries expected (%d websocket, %d webhook): %d late, %d released past a skipped gap, %d copies suppressed by deduplication, %d correlation positions > 1; %d events sent that no stream but the probe matches, %d copies sent, %d event ids used by several tenants; %d of 8 rule combinations",
		st.deliveries, st.websocket, st.webhook, st.late, st.afterGap, st.suppressed, st.correlated, st.unmatched, st.copies, st.reusedIDs, len(st.combos))
}

// describe is a readable account of an outcome.
func (o *mOutcome) describe(w *mWorkload) string {
	var b strings.Builder
	streams := o.streams
	probes := ""
	if n := len(streams) - len(w.Streams); n > 0 {
		probes = fmt.Sprintf(" (+%d probes)", n)
	}
	fmt.Fprintf(&b, "%d tenants, %d streams%s, %d phases, %d requests, %d events\n", len(w.Tenants), len(w.Streams), probes, len(w.Phases), w.requests(), w.events())
	for _, n := range o.notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	for k, wn := range o.warns {
		if k == 6 {
			fmt.Fprintf(&b, "  … %d more server warnings\n", len(o.warns)-k)
			break
		}
		fmt.Fprintf(&b, "  server warning during the run: %.400s\n", wn)
	}
	shown := map[int]bool{}
	for k, is := range o.issues {
		if k == 12 {
			fmt.Fprintf(&b, "  … and %d more\n", len(o.issues)-k)
			break
		}
		where := ""
		if is.Stream >= 0 {
			where = fmt.Sprintf("stream %d", is.Stream)
			if !shown[is.Stream] {
				shown[is.Stream] = true
				where += " (" + streams[is.Stream].String() + ")"
			}
			where += ": "
		}
		fmt.Fprintf(&b, "  [%s] %s%s\n", is.Class, where, is.Msg)
	}
	return b.String()
}

func modelEnvInt(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s=%q: want a count", name, v)
	}
	return n
}

// modelSeeds are the seeds of a test: FLEETHUB_MODEL_SEED alone, else
// FLEETHUB_MODEL_SEEDS (or def) seeds from a random start.
func modelSeeds(t *testing.T, def int) []uint64 {
	if v := os.Getenv("FLEETHUB_MODEL_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("FLEETHUB_MODEL_SEED=%q: %v", v, err)
		}
		return []uint64{s}
	}
	n := modelEnvInt(t, "FLEETHUB_MODEL_SEEDS", def)
	b := make([]byte, 8)
	crand.Read(b)
	base := uint64(0)
	for _, x := range b[:4] {
		base = base<<8 | uint64(x)
	}
	out := make([]uint64, n)
	for i := range out {
		out[i] = base + uint64(i)
	}
	return out
}

// modelReplay is the workload of FLEETHUB_MODEL_REPLAY, if set.
func modelReplay(t *testing.T) *mWorkload {
	path := os.Getenv("FLEETHUB_MODEL_REPLAY")
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("FLEETHUB_MODEL_REPLAY: %v", err)
	}
	var w mWorkload
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatalf("FLEETHUB_MODEL_REPLAY %s: %v", path, err)
	}
	return &w
}

// modelDefaultSeeds is the default number of seeds of a mode: the full
// count without the race detector, a fifth of it (a quarter on two
// nodes) under it; `make test` runs both.
func modelDefaultSeeds(full int) int {
	if raceOn {
		return max(full/5, 12)
	}
	return full
}

func TestModelEmbedded(t *testing.T) {
	cl := startModelEmbedded(t)
	runModel(t, cl, "TestModelEmbedded", modelDefaultSeeds(200))
}

func TestModelTwoNodes(t *testing.T) {
	cl := startModelTwoNodes(t)
	runModel(t, cl, "TestModelTwoNodes", modelDefaultSeeds(50))
}

// runModel runs the seeds (or the replayed workload) on cl, reports every
// failing seed and shrinks the first failures of each class.
func runModel(t *testing.T, cl *modelCluster, test string, defSeeds int) {
	ctx := context.Background()
	if w := modelReplay(t); w != nil {
		o := cl.runWorkload(ctx, w)
		if o.tooSlow != "" {
			t.Fatalf("machine too slow: %s", o.tooSlow)
		}
		if o.failed() {
			t.Fatalf("%s: the replayed workload (seed %d) differs from the model:\n%s", cl.name, w.Seed, o.describe(w))
		}
		t.Logf("%s: the replayed workload (seed %d) matches the model (%v)", cl.name, w.Seed, o.took.Round(time.Millisecond))
		return
	}
	seeds := modelSeeds(t, defSeeds)
	par := max(1, modelEnvInt(t, "FLEETHUB_MODEL_PARALLEL", modelParallel))
	if len(cl.nodes) > 1 && os.Getenv("FLEETHUB_MODEL_PARALLEL") == "" {
		par = modelParallel / 2
	}
	began := time.Now()
	outs := make([]*mOutcome, len(seeds))
	works := make([]*mWorkload, len(seeds))
	runAll := func(idx []int, par int) {
		sem := make(chan struct{}, par)
		var wg sync.WaitGroup
		for _, i := range idx {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				outs[i] = cl.runWorkload(ctx, works[i])
			}()
		}
		wg.Wait()
	}
	all := make([]int, len(seeds))
	for i, s := range seeds {
		all[i], works[i] = i, genModelWorkload(s)
	}
	runAll(all, par)
	// a run that could not keep its phases short has no verdict: it runs
	// again, four at a time, then alone up to three times (a machine
	// busy with other work slows a run now and then, not every run)
	retried := 0
	var slow []string
	for _, par := range []int{4, 1, 1, 1} {
		var again []int
		for i, o := range outs {
			if o.tooSlow != "" {
				again = append(again, i)
			}
		}
		if par == 4 {
			retried = len(again)
		}
		runAll(again, par)
	}
	for i, o := range outs {
		if o.tooSlow != "" {
			slow = append(slow, fmt.Sprintf("seed %d: %s", seeds[i], o.tooSlow))
		}
	}
	var sendMax, tookMax time.Duration
	var st mStats
	for _, w := range works {
		st.add(w, cl.probeHooks)
	}
	events := 0
	var failing []int
	for i, o := range outs {
		sendMax, tookMax = max(sendMax, o.sendMax), max(tookMax, o.took)
		events += works[i].events()
		if o.failed() {
			failing = append(failing, i)
		}
	}
	t.Logf("%s: %d seeds (%d events) in %v, %d at a time, order wait %v; longest phase sending %v, longest run %v; %d run again (too slow at first); %d failed; %s",
		cl.name, len(seeds), events, time.Since(began).Round(time.Millisecond), par, cl.orderWait, sendMax.Round(time.Millisecond), tookMax.Round(time.Millisecond), retried, len(failing), cl.latencies())
	t.Logf("%s: the workloads exercised %s", cl.name, &st)
	t.Logf("%s: server warnings and errors: %s", cl.name, cl.warns.summary())
	if len(slow) > 0 {
		t.Errorf("machine too slow: %d seeds could not keep a phase within the order wait's bounds (%v) or had a request refused 503, even alone; no verdict for them:\n%s",
			len(slow), cl.orderWait, strings.Join(slow, "\n"))
	}
	if len(failing) == 0 {
		return
	}
	byClass := map[string]int{}
	rebalanced := 0
	for _, i := range failing {
		byClass[outs[i].primary()]++
		if outs[i].rebalanced() {
			rebalanced++
		}
	}
	t.Errorf("%s: %d of %d seeds differ from the model (by first class: %v); %d of them ran while the bus's consumer group rebalanced",
		cl.name, len(failing), len(seeds), byClass, rebalanced)
	for k, i := range failing {
		if k == 8 {
			var rest []string
			for _, j := range failing[k:] {
				rest = append(rest, fmt.Sprintf("%d(%s)", seeds[j], outs[j].primary()))
			}
			t.Errorf("more failing seeds: %s", strings.Join(rest, " "))
			break
		}
		t.Errorf("seed %d (FLEETHUB_MODEL_SEED=%d go test -race -run '^%s$' ./cmd/fleethub/): %s", seeds[i], seeds[i], test, outs[i].describe(works[i]))
	}
	// shrink the first failing seed of each class (at most 3)
	budget := 60 * time.Second
	if v := os.Getenv("FLEETHUB_MODEL_SHRINK"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("FLEETHUB_MODEL_SHRINK=%q: %v", v, err)
		}
		budget = d
	}
	if budget <= 0 {
		return
	}
	var chosen []int
	done := map[string]bool{}
	for _, i := range failing {
		if c := outs[i].primary(); !done[c] && len(chosen) < 3 {
			done[c] = true
			chosen = append(chosen, i)
		}
	}
	for _, i := range chosen {
		class := outs[i].primary()
		again := cl.runWorkload(ctx, works[i])
		if !again.has(class) {
			t.Errorf("seed %d: run again alone, its %s difference did not come back (a timing dependence?): %s", seeds[i], class, again.describe(works[i]))
			continue
		}
		small, tries := mShrink(ctx, works[i], budget/time.Duration(len(chosen)), 8, func(ctx context.Context, c *mWorkload) bool {
			o := cl.runWorkload(ctx, c)
			return ctx.Err() == nil && o.has(class)
		})
		final := cl.runWorkload(ctx, small)
		js, _ := json.MarshalIndent(small, "", " ")
		path := filepath.Join(os.TempDir(), fmt.Sprintf("fleethub-model-%d-%s.json", seeds[i], class))
		werr := os.WriteFile(path, js, 0o644)
		t.Errorf("seed %d, class %s: shrunk in %d tries to %d events, %d requests, %d phases, %d streams; replay: FLEETHUB_MODEL_REPLAY=%s go test -race -run '^%s$' ./cmd/fleethub/ (write: %v)\n%s\nits run: %s",
			seeds[i], class, tries, small.events(), small.requests(), len(small.Phases), len(small.Streams), path, test, werr, mCompactJSON(small), final.describe(small))
	}
}

// mCompactJSON prints a workload with one request per line.
func mCompactJSON(w *mWorkload) string {
	var b strings.Builder
	fmt.Fprintf(&b, "{\"seed\": %d,\n \"tenants\": %s,\n \"streams\": [", w.Seed, mMustJSON(w.Tenants))
	for i, s := range w.Streams {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  " + mMustJSON(s))
	}
	b.WriteString("],\n \"phases\": [")
	for p, ph := range w.Phases {
		if p > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n  [")
		for i, r := range ph {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString("\n   " + mMustJSON(r))
		}
		b.WriteString("]")
	}
	b.WriteString("]}")
	return b.String()
}

func mMustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
