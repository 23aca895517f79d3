package webhook

import (
	"context"
	"os"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

var osHostname = os.Hostname

// hostname is the host's name, "fleethub" when it has none or it cannot
// be read.
func hostname() string {
	h, err := osHostname()
	if err != nil || h == "" {
		return "fleethub"
	}
	return h
}

// idleAfter is how long an endpoint with nothing to do is kept.
const idleAfter = 10 * time.Minute

// purgeBatch bounds the rows one purge statement deletes.
const purgeBatch = 5_000

// Run sends deliveries until ctx ends or Close is called, then shuts down
// in two phases: workers stop taking deliveries and requests in flight
// get Drain (or Close's deadline) to finish before they are cut; what is
// still held goes back to the store and the last outcomes are written.
func (d *Dispatcher) Run(ctx context.Context) error {
	if !d.started.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer close(d.done)
	recorded := make(chan struct{})
	go func() {
		defer close(recorded)
		d.recordLoop()
	}()
	d.accept.Lock()
	d.live = true
	d.accept.Unlock()

	t := time.NewTicker(d.cfg.PollEvery)
	defer t.Stop()
	var lastRenew, lastPurge time.Time
	for {
		now := d.cfg.Now()
		d.unpark(ctx, now)
		if err := d.poll(ctx, now); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook poll failed", "error", err)
		}
		if now.Sub(lastRenew) >= d.cfg.Lease/3 {
			lastRenew = now
			d.renew(ctx, now)
		}
		if now.Sub(lastPurge) >= d.cfg.PurgeEvery {
			lastPurge = now
			d.purge(ctx, now)
		}
		d.sweep(now)
		select {
		case <-ctx.Done():
			d.shutdown(context.Background())
			<-recorded
			return nil
		case <-d.closing:
			d.shutdown(d.closeCtx)
			<-recorded
			return nil
		case <-t.C:
		case <-d.wake:
			d.refill(ctx)
			continue
		}
	}
}

// unparkBatch bounds the parked deliveries moved in one transaction, so
// that the move never holds the store's writer for long; unparkRound
// bounds what one poll moves of a stream that no longer sends.
const (
	unparkBatch = 250
	unparkRound = 10_000
)

// unpark moves parked deliveries into the queue as their endpoints can
// take them: an endpoint with room claims (claimFor unparks first) no
// more than it has room for, so a dead receiver's backlog stays parked
// while its circuit half-opens for one probe; one that takes nothing
// (circuit open, queue full) keeps them parked, counted as pending. A
// stream with no
// endpoint on this node yet (after a restart) has a batch moved, and
// the poll that follows finds it.
func (d *Dispatcher) unpark(ctx context.Context, now time.Time) {
	ids, err := d.q.ParkedStreams(ctx)
	if err != nil {
		if ctx.Err() == nil {
			d.log.Warn("webhook parked streams", "error", err)
		}
		return
	}
	for _, id := range ids {
		d.mu.Lock()
		e := d.endpoints[id]
		d.mu.Unlock()
		switch {
		case e == nil:
			d.unparkStream(ctx, id, unparkBatch)
		case !d.sends(e):
			// stopped, or no longer a webhook stream: the poll dead-letters
			// what is in the queue
			d.unparkStream(ctx, id, unparkRound)
		case e.refillRoom(now) > 0:
			if err := d.claimFor(ctx, e, now); err != nil && ctx.Err() == nil {
				d.log.Warn("webhook claim failed", "stream_id", id, "error", err)
			}
		}
	}
}

// sends reports whether e's stream still delivers by webhook.
func (d *Dispatcher) sends(e *endpoint) bool {
	e.mu.Lock()
	org, env := e.info.Org, e.info.Env
	e.mu.Unlock()
	info, ok := d.streams.Stream(org, env, e.id)
	return ok && info.Delivery == "webhook" && info.WebhookURL != ""
}

// unparkStream moves up to max of a stream's parked deliveries, in
// transactions of unparkBatch.
func (d *Dispatcher) unparkStream(ctx context.Context, id string, max int) {
	for moved := 0; moved < max && ctx.Err() == nil; {
		n, err := d.q.UnparkDeliveries(ctx, id, min(unparkBatch, max-moved))
		if err != nil {
			if ctx.Err() == nil {
				d.log.Warn("webhook unpark failed", "stream_id", id, "error", err)
			}
			return
		}
		if n == 0 {
			return
		}
		moved += int(n)
	}
}

// refill claims due deliveries for the endpoints that ran low while the
// store held more for them.
func (d *Dispatcher) refill(ctx context.Context) {
	d.hungryMu.Lock()
	eps := make([]*endpoint, 0, len(d.hungrySet))
	for id, e := range d.hungrySet {
		eps = append(eps, e)
		delete(d.hungrySet, id)
	}
	d.hungryMu.Unlock()
	now := d.cfg.Now()
	for _, e := range eps {
		if err := d.claimFor(ctx, e, now); err != nil && ctx.Err() == nil {
			d.log.Warn("webhook refill failed", "stream_id", e.id, "error", err)
		}
	}
}

// claimFor claims what e has room for, once it has drained to half its
// queue (refillRoom).
func (d *Dispatcher) claimFor(ctx context.Context, e *endpoint, now time.Time) error {
	room := e.refillRoom(now)
	if room <= 0 {
		return nil
	}
	d.unparkStream(ctx, e.id, room) // what was parked while it took nothing
	ds, err := d.q.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: d.cfg.Node, StreamIDs: []string{e.id}, Now: now, Until: now.Add(d.cfg.Lease), Limit: room})
	if err != nil {
		return err
	}
	if len(ds) == 0 {
		return nil
	}
	if refused := e.add(ds, len(ds) == room, now); len(refused) > 0 {
		d.release(refused, now)
	}
	return nil
}

// Close stops Run, waiting for requests in flight until ctx ends (then
// they are cut and their deliveries released unattempted).
func (d *Dispatcher) Close(ctx context.Context) error {
	d.closeOnce.Do(func() {
		d.closeCtx = ctx
		close(d.closing)
	})
	if !d.started.Load() {
		return nil
	}
	<-d.done
	return nil
}

// endpointList is a copy of the endpoints, for work done outside d.mu.
func (d *Dispatcher) endpointList() []*endpoint {
	d.mu.Lock()
	defer d.mu.Unlock()
	eps := make([]*endpoint, 0, len(d.endpoints))
	for _, e := range d.endpoints {
		eps = append(eps, e)
	}
	return eps
}

// shutdown: stop taking work, drain, release, flush.
func (d *Dispatcher) shutdown(ctx context.Context) {
	d.accept.Lock()
	d.live = false
	d.accept.Unlock()
	eps := d.endpointList()
	var queued []string
	for _, e := range eps {
		queued = append(queued, e.stop()...)
	}
	close(d.stopping)
	d.release(queued, d.cfg.Now())
	drained := make(chan struct{})
	go func() {
		d.workers.Wait()
		close(drained)
	}()
	var deadline <-chan struct{}
	if ctx != nil {
		deadline = ctx.Done()
	}
	timer := time.NewTimer(d.cfg.Drain)
	defer timer.Stop()
	select {
	case <-drained:
	case <-timer.C:
	case <-deadline:
	}
	d.sendCancel() // cut what is still in flight: released as aborted
	<-drained
	close(d.results)
}

// recordLoop writes outcomes in batches: from the first outcome it
// collects for RecordEvery (or until RecordBatch are waiting), then
// writes them in one transaction. Outcomes arrive one response at a
// time; written one by one, each held the store's single writer for a
// commit that the next enqueue (on the path of a message to its
// receiver) had to wait for.
func (d *Dispatcher) recordLoop() {
	batch := make([]store.DeliveryResult, 0, d.cfg.RecordBatch)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for r := range d.results {
		batch = append(batch[:0], r.r)
		timer.Reset(d.cfg.RecordEvery)
	fill:
		for len(batch) < d.cfg.RecordBatch {
			select {
			case r, ok := <-d.results:
				if !ok {
					break fill
				}
				batch = append(batch, r.r)
			case <-timer.C:
				break fill
			}
		}
		timer.Stop()
		for attempt := 0; ; attempt++ {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			err := d.q.RecordDeliveries(ctx, d.cfg.Node, batch)
			cancel()
			if err == nil {
				break
			}
			if attempt >= 5 {
				// the leases run out and the deliveries are sent again:
				// at-least-once holds, the outcomes are lost
				d.log.Error("recording webhook outcomes failed; they will be retried after their leases expire", "count", len(batch), "error", err)
				break
			}
			d.log.Warn("recording webhook outcomes failed; retrying", "count", len(batch), "error", err)
			time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
		}
	}
}

// poll claims due deliveries for every endpoint with room. An endpoint
// the store still has disabled (an earlier version disabled an
// endpoint that answered 410 Gone) is enabled again: no answer disables
// an endpoint, its deliveries are retried as any failed one is.
func (d *Dispatcher) poll(ctx context.Context, now time.Time) error {
	streams, err := d.q.DeliveryStreams(ctx, now, d.fullEndpoints(now))
	if err != nil {
		return err
	}
	for _, s := range streams {
		if s.Disabled {
			n, err := d.q.EnableDeliveries(ctx, store.Scope{Org: s.Org, Env: s.Env}, s.StreamID, now)
			if err != nil {
				return err
			}
			d.log.Info("webhook endpoint enabled: no answer disables an endpoint", "stream_id", s.StreamID, "requeued", n)
		}
		info, ok := d.streams.Stream(s.Org, s.Env, s.StreamID)
		if !ok || info.Delivery != "webhook" || info.WebhookURL == "" {
			if err := d.abandon(ctx, s, now); err != nil {
				return err
			}
			continue
		}
		if err := d.claimFor(ctx, d.endpoint(info), now); err != nil {
			return err
		}
	}
	return nil
}

// fullEndpoints lists the streams whose endpoints take no deliveries
// from the store now (a full queue, an open circuit): the poll would only look for their due deliveries to
// leave them, and for a receiver that never answers that look walks
// every delivery its queue holds.
func (d *Dispatcher) fullEndpoints(now time.Time) []string {
	eps := d.endpointList()
	var full []string
	for _, e := range eps {
		if e.full(now) {
			full = append(full, e.id)
		}
	}
	return full
}

// abandon dead-letters the due deliveries of a stream that no longer
// exists or no longer delivers by webhook.
func (d *Dispatcher) abandon(ctx context.Context, s store.DeliveryStream, now time.Time) error {
	ds, err := d.q.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: d.cfg.Node, StreamIDs: []string{s.StreamID}, Now: now, Until: now.Add(d.cfg.Lease), Limit: 1000})
	if err != nil || len(ds) == 0 {
		return err
	}
	rs := make([]store.DeliveryResult, len(ds))
	for i, x := range ds {
		rs[i] = store.DeliveryResult{ID: x.ID, Status: store.DeliveryDeadLettered, Error: "the stream no longer exists or no longer delivers by webhook", At: now}
	}
	d.count(s.StreamID, "dead_lettered", int64(len(rs)))
	return d.q.RecordDeliveries(ctx, d.cfg.Node, rs)
}

// renew extends the leases of everything held, and forgets what another
// node took over.
func (d *Dispatcher) renew(ctx context.Context, now time.Time) {
	eps := d.endpointList()
	var ids []string
	for _, e := range eps {
		ids = e.heldIDs(ids)
	}
	if len(ids) == 0 {
		return
	}
	lost, err := d.q.RenewDeliveryLeases(ctx, d.cfg.Node, ids, now.Add(d.cfg.Lease))
	if err != nil {
		d.log.Warn("renewing webhook leases failed", "error", err)
		return
	}
	if len(lost) == 0 {
		return
	}
	m := make(map[string]bool, len(lost))
	for _, id := range lost {
		m[id] = true
	}
	for _, e := range eps {
		e.drop(m)
	}
}

// purge deletes delivered rows past DeliveredRetention and dead-lettered
// or disabled rows past DeadLetterRetention.
func (d *Dispatcher) purge(ctx context.Context, now time.Time) {
	for _, p := range []struct {
		statuses []string
		keep     time.Duration
	}{
		{[]string{store.DeliveryDelivered}, d.cfg.DeliveredRetention},
		{[]string{store.DeliveryDeadLettered, store.DeliveryDisabled}, d.cfg.DeadLetterRetention},
	} {
		for ctx.Err() == nil {
			n, err := d.q.PurgeDeliveries(ctx, p.statuses, now.Add(-p.keep), purgeBatch)
			if err != nil {
				d.log.Warn("purging webhook deliveries failed", "error", err)
				return
			}
			if n < purgeBatch {
				break
			}
		}
	}
}

// sweep forgets endpoints idle for idleAfter, closing their connections.
func (d *Dispatcher) sweep(now time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for id, e := range d.endpoints {
		if e.idle(now, idleAfter) {
			delete(d.endpoints, id)
			d.secrets.forget(id)
			e.client.CloseIdleConnections()
		}
	}
}
