package webhook

import (
	"context"
	crand "crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/store"
)

// ErrRunning is returned by a second Run.
var ErrRunning = errors.New("webhook: dispatcher already running")

// Dispatcher is the webhook sink and the senders behind it: Accept makes
// matched messages durable deliveries, Run sends them.
type Dispatcher struct {
	cfg     Config
	q       store.Deliveries
	streams hub.Streams
	secrets *secretCache
	counter hub.Counter
	log     *slog.Logger
	env     endpointEnv // what each endpoint is given

	mu        sync.Mutex // guards endpoints
	endpoints map[string]*endpoint

	// accept is read-locked by Accept while it may hand deliveries to
	// endpoints; shutdown write-locks it to close that door.
	accept sync.RWMutex
	live   bool // Run is sending; guarded by accept

	started    atomic.Bool
	closing    chan struct{}   // closed by Close
	closeCtx   context.Context // Close's context: the drain deadline
	closeOnce  sync.Once
	stopping   chan struct{} // closed when workers must stop taking jobs
	sendCtx    context.Context
	sendCancel context.CancelFunc // aborts requests in flight
	workers    sync.WaitGroup
	results    chan result
	done       chan struct{} // closed when Run has returned

	// group commit of Accept: concurrent calls (one per bus partition)
	// share one store transaction
	enqMu    sync.Mutex // guards enqBusy and enqQueue
	enqBusy  bool
	enqQueue []*enqueueReq

	wake      chan struct{}        // a hungry endpoint wants a refill
	hungryMu  sync.Mutex           // guards hungrySet
	hungrySet map[string]*endpoint // endpoints waiting for a refill
}

// result is an outcome waiting for the recorder.
type result struct {
	r      store.DeliveryResult
	stream string
	final  bool // it left the queue (delivered, dead-lettered)
}

// New makes a dispatcher. q is the delivery queue (the store), streams
// resolves stream ids (hub.Streams: the stream registry), secrets reads
// signing secrets (the store), counter may be nil.
func New(cfg Config, q store.Deliveries, streams hub.Streams, secrets StreamStore, counter hub.Counter, log *slog.Logger) (*Dispatcher, error) {
	if q == nil || streams == nil || secrets == nil {
		return nil, errors.New("webhook: New needs a queue, a stream lookup and a secret store")
	}
	if cfg.Node == "" {
		var b [4]byte
		_, _ = crand.Read(b[:])
		cfg.Node = hostname() + "-" + hex.EncodeToString(b[:])
	}
	cfg.defaults()
	pacer, err := cfg.pacer()
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	d := &Dispatcher{cfg: cfg, q: q, streams: streams, counter: counter, log: log,
		secrets:   newSecretCache(secrets, cfg.SecretTTL, cfg.Now),
		endpoints: map[string]*endpoint{},
		closing:   make(chan struct{}), stopping: make(chan struct{}), done: make(chan struct{}),
		results: make(chan result, 2*cfg.RecordBatch),
		wake:    make(chan struct{}, 1), hungrySet: map[string]*endpoint{}}
	d.sendCtx, d.sendCancel = context.WithCancel(context.Background())
	conns := &connSet{}
	context.AfterFunc(d.sendCtx, conns.cut)
	d.env = endpointEnv{cfg: cfg, log: log, keys: d.secrets, rec: d, rate: pacer, sendCtx: d.sendCtx, conns: conns, halt: d.stopping, running: &d.workers}
	return d, nil
}

// Node returns the name this dispatcher leases deliveries under.
func (d *Dispatcher) Node() string { return d.cfg.Node }

func (d *Dispatcher) count(stream, name string, n int64) {
	if d.counter != nil && n != 0 {
		d.counter.Count(stream, name, n)
	}
}

// payload wraps a log entry as {"stream_id","offset","message"}.
func payload(quotedID []byte, e hub.Entry) []byte {
	b := make([]byte, 0, len(quotedID)+len(e.Data)+48)
	b = append(b, `{"stream_id":`...)
	b = append(b, quotedID...)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, e.Offset, 10)
	b = append(b, `,"message":`...)
	b = append(b, e.Data...)
	return append(b, '}')
}

// deliveryID is the webhook-id of the payload p of the entry at offset:
// derived from p's bytes (which hold the stream id and offset), so
// enqueueing the same entry again is recognised, while a log that starts
// its offsets again (its history lost) does not collide with old
// deliveries. The hash follows the offset's low 48 bits in an alphabet
// that sorts like the numbers it encodes, so the ids a stream enqueues
// grow at the end of the delivery log's unique index rather than at
// random places in it: a random key writes a leaf page of that index per
// row once the index outgrows the store's cache.
func deliveryID(offset int64, p []byte) string {
	sum := sha256.Sum256(p)
	var b [4 + 8 + 22]byte
	copy(b[:], "msg_")
	for i := range 8 {
		b[4+i] = orderedDigits[(uint64(offset)>>(42-6*i))&63]
	}
	base64.RawURLEncoding.Encode(b[12:], sum[:16])
	return string(b[:])
}

// orderedDigits are the 64 characters of base64url in byte order.
const orderedDigits = "-0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ_abcdefghijklmnopqrstuvwxyz"

// Accept stores entries of a webhook stream as deliveries and returns
// once they are durable (the bus offset is committed after it). While
// Run is sending, the deliveries are leased to this node and handed to
// the stream's endpoint at once, with no store read in between.
func (d *Dispatcher) Accept(ctx context.Context, info hub.StreamInfo, entries []hub.Entry) error {
	return d.AcceptMany(ctx, []hub.StreamInfo{info}, [][]hub.Entry{entries})
}

// accepted is one stream's part of an AcceptMany.
type accepted struct {
	info   hub.StreamInfo
	ep     *endpoint
	parked bool // those it had no room for were parked
	leased int  // those leased to this node, in the queue
	n      int
}

// AcceptMany stores the entries of several streams in one group commit
// and hands each endpoint, leased to this node, what it has room for
// (reserved at once, so that the concurrent calls of several bus
// partitions never overfill a queue); it returns once all are durable.
// The rest wait in the store: queued when the endpoint is busy, parked
// (store.Delivery Park) when it takes nothing (circuit open or
// half-open, stalled, slow). Parked deliveries are written after the
// commit the healthy streams wait for.
func (d *Dispatcher) AcceptMany(ctx context.Context, infos []hub.StreamInfo, entries [][]hub.Entry) error {
	now := d.cfg.Now()
	until := now.Add(d.cfg.Lease)
	d.accept.RLock()
	defer d.accept.RUnlock()
	// parked deliveries go in a write of their own, after the others:
	// the healthy streams' commit is no larger than without them
	total := 0
	for _, es := range entries {
		total += len(es)
	}
	ds := make([]store.Delivery, 0, total)
	var parkedDs []store.Delivery
	parts := make([]accepted, 0, len(infos))
	for k, info := range infos {
		if len(entries[k]) == 0 {
			continue
		}
		quoted, err := json.Marshal(info.ID)
		if err != nil {
			return fmt.Errorf("webhook: stream id %q: %w", info.ID, err)
		}
		var ep *endpoint
		room := 0
		if d.live && info.WebhookURL != "" {
			ep = d.endpoint(info)
			room = ep.reserve(now, len(entries[k]))
		}
		// what the endpoint has no room for is parked if it takes
		// nothing (circuit open, or stalled)
		park := ep != nil && room < len(entries[k]) && ep.parks(now)
		parts = append(parts, accepted{info: info, ep: ep, parked: park, leased: room, n: len(entries[k])})
		for i, e := range entries[k] {
			p := payload(quoted, e)
			x := store.Delivery{ID: deliveryID(e.Offset, p), Org: info.Org, Env: info.Env, StreamID: info.ID, Offset: e.Offset, Payload: p,
				NextAttemptAt: now, QueuedAt: now, CreatedAt: now}
			switch {
			case i < room:
				x.LeaseOwner, x.LeaseUntil = d.cfg.Node, until
				ds = append(ds, x)
			case park:
				x.Park = true
				parkedDs = append(parkedDs, x)
			default:
				ds = append(ds, x)
			}
		}
	}
	var err error
	if len(ds) > 0 {
		err = d.persist(ctx, now, parts, ds)
	}
	for _, part := range parts {
		if part.ep != nil {
			part.ep.unreserve(part.leased) // held now, or never written
		}
	}
	if err != nil {
		return err
	}
	// parked deliveries are written once the others are handed over: on SQLite one write at the end of a spool
	// file, on PostgreSQL one insert into parked_deliveries, after the
	// commit that the healthy streams' receivers wait for, not in it
	if len(parkedDs) > 0 {
		if _, err := d.q.EnqueueDeliveries(ctx, parkedDs); err != nil {
			return err
		}
	}
	for _, part := range parts {
		if part.parked {
			part.ep.add(nil, true, now) // the store holds more for it
		}
	}
	return nil
}

// persist enqueues the deliveries of parts durably, then hands each
// endpoint the ones leased to this node.
func (d *Dispatcher) persist(ctx context.Context, now time.Time, parts []accepted, ds []store.Delivery) error {
	ins, err := d.enqueue(ctx, ds)
	if err != nil {
		return err
	}
	runs := runsOf(parts, ins)
	for k, part := range parts {
		if part.parked && part.leased == 0 {
			continue // AcceptMany accounts for them once they are written
		}
		run := runs[k]
		pending := 0
		for _, x := range run {
			if x.Status == store.DeliveryPending {
				pending++
			}
		}
		hand := leasedTo(run, d.cfg.Node)
		if part.ep != nil && (len(hand) > 0 || pending > len(hand)) {
			if refused := part.ep.add(hand, pending > len(hand), now); len(refused) > 0 {
				d.release(refused, now)
			}
		}
	}
	return nil
}

// runsOf splits ins, the rows inserted for parts, by part. ins keeps the
// order the rows were given in (each part's in a run), so each part's run
// is a sub-slice of it; rows out of that order are grouped by stream.
func runsOf(parts []accepted, ins []store.Delivery) [][]store.Delivery {
	runs := make([][]store.Delivery, len(parts))
	next := 0
	for k, part := range parts {
		from := next
		for next < len(ins) && ins[next].StreamID == part.info.ID {
			next++
		}
		runs[k] = ins[from:next]
	}
	if next == len(ins) {
		return runs
	}
	by := map[string][]store.Delivery{}
	for _, x := range ins {
		by[x.StreamID] = append(by[x.StreamID], x)
	}
	for k, part := range parts {
		runs[k] = by[part.info.ID]
		delete(by, part.info.ID) // a stream named twice is handed over once
	}
	return runs
}

// leasedTo returns the pending rows of run leased to node: the start of
// run when they lead it, as Accept writes them, else a copy.
func leasedTo(run []store.Delivery, node string) []store.Delivery {
	mine := func(x store.Delivery) bool { return x.Status == store.DeliveryPending && x.LeaseOwner == node }
	k := 0
	for k < len(run) && mine(run[k]) {
		k++
	}
	if !slices.ContainsFunc(run[k:], mine) {
		return run[:k]
	}
	var out []store.Delivery
	for _, x := range run {
		if mine(x) {
			out = append(out, x)
		}
	}
	return out
}

// hungry asks the poller to refill e from the store now.
func (d *Dispatcher) hungry(e *endpoint) {
	d.hungryMu.Lock()
	d.hungrySet[e.id] = e
	d.hungryMu.Unlock()
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// enqueueReq is one Accept waiting for a group commit.
type enqueueReq struct {
	ds   []store.Delivery
	ins  []store.Delivery
	err  error
	done chan struct{}
}

// enqueue writes ds durably, in one transaction with whatever other
// Accepts are waiting meanwhile (group commit): the first caller writes,
// and keeps writing the groups that queued up behind it; the others wait
// for their group. The bus partitions call Accept concurrently with a few
// entries each, and one commit per call made the commit itself the
// largest cost (45 % of the store's time in a server profile at 12,000
// messages/s).
func (d *Dispatcher) enqueue(ctx context.Context, ds []store.Delivery) ([]store.Delivery, error) {
	req := &enqueueReq{ds: ds, done: make(chan struct{})}
	d.enqMu.Lock()
	d.enqQueue = append(d.enqQueue, req)
	if d.enqBusy {
		d.enqMu.Unlock()
		<-req.done // the outcome decides durability: wait for it whatever ctx says
		return req.ins, req.err
	}
	d.enqBusy = true
	// the group outlives a caller that gives up: others wait on it
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	for len(d.enqQueue) > 0 {
		group := d.enqQueue
		d.enqQueue = nil
		d.enqMu.Unlock()
		d.writeGroup(wctx, group)
		d.enqMu.Lock()
	}
	d.enqBusy = false
	d.enqMu.Unlock()
	return req.ins, req.err
}

// writeGroup enqueues the deliveries of several Accepts in one call and
// hands each its inserted rows.
func (d *Dispatcher) writeGroup(ctx context.Context, group []*enqueueReq) {
	if len(group) == 1 {
		r := group[0]
		r.ins, r.err = d.q.EnqueueDeliveries(ctx, r.ds)
		close(r.done)
		return
	}
	n := 0
	for _, r := range group {
		n += len(r.ds)
	}
	all := make([]store.Delivery, 0, n)
	owner := make(map[string]*enqueueReq, n)
	for _, r := range group {
		all = append(all, r.ds...)
		for _, x := range r.ds {
			owner[x.ID] = r
		}
	}
	ins, err := d.q.EnqueueDeliveries(ctx, all)
	for _, x := range ins {
		if r := owner[x.ID]; r != nil {
			r.ins = append(r.ins, x)
		}
	}
	for _, r := range group {
		r.err = err
		close(r.done)
	}
}

// endpoint returns the stream's endpoint, made on first use.
func (d *Dispatcher) endpoint(info hub.StreamInfo) *endpoint {
	d.mu.Lock()
	e := d.endpoints[info.ID]
	if e == nil {
		e = newEndpoint(d.env, info)
		d.endpoints[info.ID] = e
		d.mu.Unlock()
		return e
	}
	d.mu.Unlock()
	e.update(info)
	return e
}

// EndpointState reports a stream's circuit (closed, open, half_open) as
// this node knows it.
func (d *Dispatcher) EndpointState(streamID string) (circuit string) {
	d.mu.Lock()
	e := d.endpoints[streamID]
	d.mu.Unlock()
	if e == nil {
		return CircuitClosed
	}
	return e.state(d.cfg.Now())
}

// release gives deliveries back to the store unattempted, due at next.
func (d *Dispatcher) release(ids []string, next time.Time) {
	if len(ids) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := d.q.ReleaseDeliveries(ctx, d.cfg.Node, ids, next); err != nil {
		// the leases run out on their own: at most a delay
		d.log.Warn("releasing webhook deliveries failed", "count", len(ids), "error", err)
	}
}

// record turns an outcome into a delivery's new state and queues it for
// the recorder.
func (d *Dispatcher) record(x store.Delivery, o outcome, now time.Time) {
	r := store.DeliveryResult{ID: x.ID, Seq: x.Seq, Attempted: o.kind != skipped, StatusCode: o.code, Error: o.err, LatencyMS: o.latency.Milliseconds(), At: now}
	final := true
	switch o.kind {
	case delivered:
		r.Status = store.DeliveryDelivered
		d.count(x.StreamID, "delivered", 1)
	case dead:
		r.Status = store.DeliveryDeadLettered
		d.count(x.StreamID, "failed_attempts", 1)
		d.count(x.StreamID, "dead_lettered", 1)
	default: // retry, skipped
		if r.Attempted {
			d.count(x.StreamID, "failed_attempts", 1)
		}
		if now.Sub(x.QueuedAt) >= d.cfg.RetryFor {
			r.Status = store.DeliveryDeadLettered
			r.Error = "retries exhausted: " + r.Error
			d.count(x.StreamID, "dead_lettered", 1)
			break
		}
		final = false
		r.Status = store.DeliveryFailed
		r.NextAttemptAt = now.Add(d.backoff(x.Attempts+1, o.retryAfter))
	}
	d.results <- result{r: r, stream: x.StreamID, final: final}
}

// backoff is the wait before attempt n+1 after n failed ones: full
// jitter over the n-th step of the schedule, at least Retry-After.
func (d *Dispatcher) backoff(n int, after time.Duration) time.Duration {
	s := d.cfg.Schedule
	step := s[min(max(n, 1), len(s))-1]
	wait := time.Duration(rand.Int64N(int64(step) + 1))
	if after > 0 {
		wait = max(wait, min(after, d.cfg.MaxRetryAfter))
	}
	return wait
}
