package webhook

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"log/slog"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/store"
)

// keySource gives the keys a stream's deliveries are signed with (the
// dispatcher's secretCache).
type keySource interface {
	get(ctx context.Context, sc store.Scope, streamID string) (*signingKeys, error)
}

// recorder takes what an endpoint is done with (the Dispatcher: the
// store and the outcome writer behind it).
type recorder interface {
	// release gives deliveries back to the store unattempted, due at next.
	release(ids []string, next time.Time)
	// record queues a delivery's outcome to be written.
	record(x store.Delivery, o outcome, now time.Time)
	// hungry asks for a refill of e from the store.
	hungry(e *endpoint)
}

// endpointEnv is what an endpoint is given by its owner: the settings,
// copied, and the few things it shares with the other endpoints.
type endpointEnv struct {
	cfg     Config          // a copy; an endpoint never changes it
	log     *slog.Logger    // never nil
	keys    keySource       // signing keys by stream
	rec     recorder        // outcomes, releases, refills
	rate    ratelimit.Pacer // a full bucket under Rate and Burst: each endpoint paces with a copy
	sendCtx context.Context // requests' context: cancelled to cut those in flight
	conns   *connSet        // every endpoint's connections, cut with sendCtx (nil: none kept)
	halt    <-chan struct{} // closed when workers must stop taking jobs
	running *sync.WaitGroup // the workers of every endpoint, waited for at shutdown
}

// endpoint is one stream's webhook receiver: the deliveries this node
// holds for it (leased in the store), the workers that send them, its
// rate limit, circuit breaker and connection pool. Nothing here is shared
// with another endpoint, which is what keeps a dead or slow receiver from
// delaying the others.
type endpoint struct {
	endpointEnv
	id     string
	client *fasthttp.Client

	mu       sync.Mutex // guards the fields below
	info     hub.StreamInfo
	queue    []item         // held, waiting to be sent, oldest first
	held     map[string]int // ids leased by this node (queued or in flight) and their payload bytes
	heldSize int            // bytes of the held payloads
	reserved int            // room taken by Accepts still writing
	workers  int
	stopping bool
	br       breaker
	pacer    ratelimit.Pacer // the endpoint's rate limit
	changed  chan struct{}   // closed and replaced when queue or circuit change
	active   time.Time       // last time it held anything
	// progress is when it last finished a request, or started holding
	// deliveries after holding none: stalled tells a receiver that
	// stopped answering from one that is merely busy
	progress time.Time
	// backlog: the store may hold due deliveries this endpoint had no
	// room for; when its queue runs half empty it asks for a refill
	// instead of waiting for the next poll.
	backlog bool
	// the rate it finishes deliveries at while it has more waiting: rate
	// (a second) is the count over the last full window in which its
	// queue never ran empty (0: none such), finished the count since
	// windowAt, ranEmpty whether its queue ran empty since
	rate     float64
	finished int
	windowAt time.Time
	ranEmpty bool
}

// item is a held delivery and when it joined the queue. d points into
// the slice the store returned (never changed after), so queueing and
// batching copy a pointer, not the delivery.
type item struct {
	d  *store.Delivery
	at time.Time
}

// job is what one request carries: one delivery, or a batch.
type job struct {
	items []item
	probe bool
}

// newEndpoint makes the endpoint of a stream; env.cfg has its defaults.
func newEndpoint(env endpointEnv, info hub.StreamInfo) *endpoint {
	c := env.cfg
	return &endpoint{endpointEnv: env, id: info.ID, info: info, client: newClient(c.Concurrency, c.Timeout, c.AllowPrivate, env.conns),
		held: map[string]int{}, changed: make(chan struct{}),
		br:    breaker{threshold: c.BreakerThreshold, cooldown: c.BreakerCooldown},
		pacer: env.rate, active: c.Now(), progress: c.Now(), windowAt: c.Now()}
}

// unhold forgets a held delivery; lock held.
func (e *endpoint) unhold(id string) {
	e.heldSize -= e.held[id]
	delete(e.held, id)
}

// signal wakes waiting workers; lock held.
func (e *endpoint) signal() {
	close(e.changed)
	e.changed = make(chan struct{})
}

// update takes a newer view of the stream; a new URL resets the circuit.
func (e *endpoint) update(info hub.StreamInfo) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if info.Version < e.info.Version {
		return
	}
	if info.WebhookURL != e.info.WebhookURL {
		e.br.reset()
		e.signal()
	}
	e.info = info
}

// refillRoom is what a claim from the store may give the endpoint at now:
// its room once no more than half its queue limit waits to be sent, else
// nothing. An endpoint with more waiting is not short of work, and asks
// for a refill itself when it drains to half (hungry, the same bound);
// claiming the few slots a slow receiver frees at every poll cost a claim
// (an index walk past the rows it holds) and an unpark each time.
func (e *endpoint) refillRoom(now time.Time) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refillRoomLocked(now)
}

func (e *endpoint) refillRoomLocked(now time.Time) int {
	if len(e.queue)+e.reserved > e.cfg.QueueLimit/2 {
		return 0
	}
	return e.roomLocked(now)
}

// full reports whether e takes no deliveries from the store at now.
func (e *endpoint) full(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.refillRoomLocked(now) == 0
}

// roomLocked is how many more deliveries the endpoint takes at now: none
// while the circuit is open or the endpoint stalled, one batch while
// half-open, else up to the queue limit; lock held.
func (e *endpoint) roomLocked(now time.Time) int {
	if e.stopping || e.stalledLocked(now) {
		return 0
	}
	free := max(e.cfg.QueueLimit-len(e.held)-e.reserved, 0)
	if e.heldSize >= e.cfg.QueueBytes {
		free = 0
	}
	switch e.br.state(now) {
	case CircuitOpen:
		return 0
	case CircuitHalfOpen:
		if len(e.held) > 0 || e.reserved > 0 {
			return 0
		}
		return min(free, e.batchSize())
	}
	return free
}

// parks reports whether what the endpoint has no room for at now is
// parked: while its circuit is not closed, while it is stalled (it holds
// deliveries and has finished no request for StallAfter: a receiver
// that accepts connections and never answers, before its first
// timeout), or while it is slow (what it holds would take more than
// SlowDrain to send at the rate it finished deliveries over its last
// full second: a receiver that answers, far slower than its messages
// come). A receiver that is merely busy, its queue full but draining
// within SlowDrain, has its surplus queued in the store as usual, to be
// claimed as the queue drains: parking it would write it twice, where a
// slow one's surplus would otherwise sit in the delivery log every
// stream's commit shares for as long as it takes to send.
func (e *endpoint) parks(now time.Time) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.br.state(now) != CircuitClosed || e.stalledLocked(now) || e.slowLocked()
}

// slowLocked: holding half its queue or more, which would take longer
// than SlowDrain at the rate measured (none measured yet: not slow);
// lock held.
func (e *endpoint) slowLocked() bool {
	n := len(e.held) + e.reserved
	return e.rate > 0 && n >= e.cfg.QueueLimit/2 && float64(n) > e.rate*e.cfg.SlowDrain.Seconds()
}

// countFinished adds n finished deliveries to the rate's window, which
// closes once a second has passed. Only a window in which the queue never
// ran empty measures how fast the receiver takes deliveries (otherwise it
// took what came); lock held.
func (e *endpoint) countFinished(n int, now time.Time) {
	e.finished += n
	e.ranEmpty = e.ranEmpty || len(e.queue) == 0
	if d := now.Sub(e.windowAt); d >= time.Second {
		e.rate = 0
		if !e.ranEmpty {
			e.rate = float64(e.finished) / d.Seconds()
		}
		e.finished, e.windowAt, e.ranEmpty = 0, now, false
	}
}

// stalledLocked: holding deliveries, no request finished for
// StallAfter; lock held. A stalled endpoint takes nothing more.
func (e *endpoint) stalledLocked(now time.Time) bool {
	return len(e.held) > 0 && now.Sub(e.progress) >= e.cfg.StallAfter
}

// reserve takes up to want of the room at now for deliveries about to be
// leased and handed over (Accept), so that concurrent Accepts (one per
// bus partition) never lease more than the queue holds; unreserve gives
// the reservation back once they are held, or were not written.
func (e *endpoint) reserve(now time.Time, want int) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	n := min(e.roomLocked(now), want)
	e.reserved += n
	return n
}

func (e *endpoint) unreserve(n int) {
	if n == 0 {
		return
	}
	e.mu.Lock()
	e.reserved -= n
	e.mu.Unlock()
}

// batchSize is the most deliveries one request carries; lock held.
func (e *endpoint) batchSize() int {
	if e.info.BatchEvents {
		return max(e.info.BatchSize, 1)
	}
	return 1
}

// add holds deliveries leased to this node and starts workers for them;
// more says the store may hold more for it. It returns the ids it did not
// take (already held, or stopping).
func (e *endpoint) add(ds []store.Delivery, more bool, now time.Time) (refused []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if more {
		e.backlog = true
	}
	if e.stopping {
		for _, d := range ds {
			refused = append(refused, d.ID)
		}
		return refused
	}
	if len(e.held) == 0 {
		e.progress = now
	}
	for i := range ds {
		d := &ds[i]
		if _, ok := e.held[d.ID]; ok {
			continue
		}
		e.held[d.ID] = len(d.Payload)
		e.heldSize += len(d.Payload)
		e.queue = append(e.queue, item{d: d, at: now})
	}
	e.active = now
	bs := e.batchSize()
	want := min(e.cfg.Concurrency, (len(e.queue)+bs-1)/bs)
	for e.workers < want {
		e.workers++
		e.running.Add(1)
		go e.work()
	}
	e.signal()
	return nil
}

// work sends jobs until there are none.
func (e *endpoint) work() {
	defer e.running.Done()
	for {
		j, ok := e.take()
		if !ok {
			return
		}
		e.run(j)
	}
}

// take returns the next job, waiting while a batch fills (at most
// MaxWait from its oldest delivery) or a half-open probe is out. It
// returns false when the worker should exit.
func (e *endpoint) take() (job, bool) {
	e.mu.Lock()
	for {
		if e.stopping || len(e.queue) == 0 {
			e.workers--
			e.mu.Unlock()
			return job{}, false
		}
		now := e.cfg.Now()
		state := e.br.state(now)
		if state == CircuitOpen {
			// give what waits back to the store, due when the circuit
			// half-opens, so a long cool-down never outlives a lease
			var ids []string
			for _, it := range e.queue {
				ids = append(ids, it.d.ID)
				e.unhold(it.d.ID)
			}
			e.queue = nil
			reopen := e.br.reopenAt
			e.workers--
			e.mu.Unlock()
			e.rec.release(ids, reopen)
			return job{}, false
		}
		bs := e.batchSize()
		waitProbe := state == CircuitHalfOpen && e.br.probing
		var wait time.Duration
		if !waitProbe && bs > 1 && len(e.queue) < bs {
			wait = e.queue[0].at.Add(e.info.MaxWait).Sub(now)
		}
		if waitProbe || wait > 0 {
			ch := e.changed
			e.mu.Unlock()
			var t *time.Timer
			var tc <-chan time.Time
			if wait > 0 {
				t = time.NewTimer(wait)
				tc = t.C
			}
			select {
			case <-ch:
			case <-tc:
			case <-e.halt:
			}
			if t != nil {
				t.Stop()
			}
			e.mu.Lock()
			continue
		}
		n := min(bs, len(e.queue))
		j := job{items: make([]item, n)}
		copy(j.items, e.queue[:n])
		e.queue = e.queue[n:]
		if len(e.queue) == 0 {
			e.queue = nil
		}
		if e.backlog && len(e.queue) <= e.cfg.QueueLimit/2 {
			e.backlog = false
			e.rec.hungry(e)
		}
		if state == CircuitHalfOpen {
			e.br.probing, j.probe = true, true
		}
		delay := e.pacer.Reserve(now)
		e.mu.Unlock()
		if delay > 0 {
			t := time.NewTimer(delay)
			select {
			case <-t.C:
			case <-e.halt:
			}
			t.Stop()
		}
		return j, true
	}
}

// run sends a job and hands its outcome on.
func (e *endpoint) run(j job) {
	e.mu.Lock()
	info := e.info
	e.mu.Unlock()
	first := j.items[0].d
	id, body := first.ID, first.Payload
	if info.BatchEvents {
		// a batching stream always sends an array, even of one
		id, body = batchBody(j.items)
	}
	var o outcome
	keys, err := e.keys.get(e.sendCtx, store.Scope{Org: first.Org, Env: first.Env}, first.StreamID)
	now := e.cfg.Now()
	switch {
	case e.sendCtx.Err() != nil:
		o = outcome{kind: aborted}
	case err != nil:
		o = outcome{kind: skipped, err: err.Error()}
	default:
		ts := now.Unix()
		o = send(e.sendCtx, e.client, request{url: info.WebhookURL, id: id, timestamp: ts, signature: keys.sign(now, id, ts, body),
			body: body, userAgent: e.cfg.UserAgent}, e.cfg.Timeout, e.cfg.Now)
	}
	e.finish(j, o, info)
}

// finish updates the circuit, lets go of the job's deliveries and passes
// their outcomes to the recorder.
func (e *endpoint) finish(j job, o outcome, info hub.StreamInfo) {
	now := e.cfg.Now()
	e.mu.Lock()
	opened := false
	if o.kind != aborted && o.kind != skipped {
		opened = e.br.result(o.breakerFailure(), j.probe, now)
	} else if j.probe {
		e.br.probing = false
	}
	for _, it := range j.items {
		e.unhold(it.d.ID)
	}
	if o.kind != aborted {
		e.progress = now
		e.countFinished(len(j.items), now)
	}
	e.active = now
	e.signal()
	e.mu.Unlock()
	if opened {
		e.log.Warn("webhook circuit opened", "stream_id", e.id, "url", info.WebhookURL, "error", o.err, "cooldown", e.cfg.BreakerCooldown)
	}
	ids := make([]string, len(j.items))
	for i, it := range j.items {
		ids[i] = it.d.ID
	}
	if o.kind == aborted {
		e.log.Debug("webhook request cut by shutdown; deliveries released", "stream_id", e.id, "count", len(ids))
		e.rec.release(ids, now)
		return
	}
	for _, it := range j.items {
		e.rec.record(*it.d, o, now)
	}
}

// lease ids held for renewal.
func (e *endpoint) heldIDs(dst []string) []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	for id := range e.held {
		dst = append(dst, id)
	}
	return dst
}

// drop forgets deliveries whose lease this node lost (queued ones only;
// a request in flight finishes and its outcome is refused by the store).
func (e *endpoint) drop(lost map[string]bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	kept := e.queue[:0]
	for _, it := range e.queue {
		if lost[it.d.ID] {
			e.unhold(it.d.ID)
			continue
		}
		kept = append(kept, it)
	}
	e.queue = kept
}

// stop makes workers exit after their current request and returns the
// ids still queued.
func (e *endpoint) stop() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stopping = true
	var ids []string
	for _, it := range e.queue {
		ids = append(ids, it.d.ID)
		e.unhold(it.d.ID)
	}
	e.queue = nil
	e.signal()
	return ids
}

// state reports the circuit state.
func (e *endpoint) state(now time.Time) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.br.state(now)
}

// idle reports whether the endpoint can be forgotten at now.
func (e *endpoint) idle(now time.Time, after time.Duration) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.held) == 0 && e.workers == 0 && !e.br.open && now.Sub(e.active) > after
}

// batchBody returns the webhook-id and body of a batch: a JSON array of
// the payloads. The id is derived from the deliveries' ids, so the same
// deliveries batched again get the same webhook-id, and different
// contents never share one.
func batchBody(items []item) (string, []byte) {
	n := 2
	h := sha256.New()
	for _, it := range items {
		n += len(it.d.Payload) + 1
		h.Write([]byte(it.d.ID))
		h.Write([]byte{0})
	}
	body := make([]byte, 0, n)
	body = append(body, '[')
	for i, it := range items {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, it.d.Payload...)
	}
	body = append(body, ']')
	var sum [sha256.Size]byte
	return "msg_batch_" + base64.RawURLEncoding.EncodeToString(h.Sum(sum[:0])[:16]), body
}
