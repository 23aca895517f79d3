package ws

import (
	"context"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// sub is one followed stream of a connection. Its pump pulls entries from
// the shared log into the connection's queue: a slow connection only
// leaves its own pump behind, and loses nothing while the log retains it.
type sub struct {
	c      *conn
	id     string
	feed   bool   // the organization's feed (feedsub.go), not a stream
	epoch  string // the epoch of the subscribed frame
	ring   *ring
	ctx    context.Context // cancelled by unsubscribe, resume or the connection's end
	cancel context.CancelFunc
	done   chan struct{} // closed when the pump returned

	sentMu    sync.Mutex // guards sent and sentEpoch
	sent      int64      // the highest offset of sentEpoch sent on the connection (or before the subscribed frame's)
	sentEpoch string
}

// wrote records that a frame of the stream carrying offsets up to last
// of history epoch goes to the socket.
func (sb *sub) wrote(last int64, epoch string) {
	sb.sentMu.Lock()
	if epoch != sb.sentEpoch || last > sb.sent {
		sb.sent, sb.sentEpoch = last, epoch
	}
	sb.sentMu.Unlock()
}

// sentPos is the highest offset sent on the connection and its history.
func (sb *sub) sentPos() (int64, string) {
	sb.sentMu.Lock()
	defer sb.sentMu.Unlock()
	return sb.sent, sb.sentEpoch
}

// pump is the state of a sub's goroutine; only that goroutine touches it.
type pump struct {
	sb    *sub
	c     *conn
	info  hub.StreamInfo
	cache hub.StreamCache // refresh's look-ups of the stream
	epoch string          // the history next and pos belong to
	next  int64           // next offset to read from the log
	pos   int64           // last offset the queue accepted
	held  []hub.Entry     // read, not yet framed

	out    frame // framed, not yet accepted by the queue
	hasOut bool

	batch      [][]byte     // wrappers of the batch being filled; reused
	batchFirst *entryFrames // of the batch's first entry, which shares the built batch
	batchLast  int64
	batchDue   time.Time

	lagSince time.Time // since when the sub is beyond MaxLag
	noticed  time.Time // last lag notice

	tick  *time.Ticker
	timer *time.Timer // the batch's MaxWait

	unwoken bool // frames were pushed without waking the writer
	// caughtUp: the last read was short, so the pump was at the log's
	// head: it waits for the next offset before it reads again
	caughtUp bool

	// parking: the pump has nothing to deliver and waits for the log in
	// its stream's lot (park.go) instead of in its own goroutine
	parking  bool
	parked   bool   // in the lot; guarded by the lot's mu
	resumeFn func() // p.resume, made once: go allocates nothing for it
	// inline says the pump runs on its lot's waiter (resumeInline); at
	// the first step that would block, or at a second read of the log, it
	// sets handoff and stops, and goes on on a goroutine of its own
	inline, handoff bool
	inlineRead      bool        // the log was read once since resumeInline began
	stopCancel      func() bool // stops the hook that ends a parked pump on cancel
}

// wakeWriter wakes the writer for frames pushed without waking it; the
// pump calls it before it blocks.
func (p *pump) wakeWriter() {
	if p.unwoken {
		p.unwoken = false
		p.c.q.wake()
	}
}

// run is the pump's first goroutine; a pump that parks (park.go) ends its
// goroutine and gets a new one (resume) when the log moves on.
func (sb *sub) run(info hub.StreamInfo, st start) {
	c := sb.c
	p := &pump{sb: sb, c: c, info: info, epoch: st.epoch, next: st.next, pos: st.next - 1}
	p.tick = time.NewTicker(stateCheckEvery)
	p.timer = time.NewTimer(time.Hour)
	p.timer.Stop()
	p.resumeFn = p.resume
	p.stopCancel = context.AfterFunc(sb.ctx, func() {
		if sb.ring.lot.unpark(p) {
			p.end() // cancelled while parked
		}
	})
	p.drive()
}

// resume runs a woken pump again. Its ticker ran on while it was
// parked (a tick that came meanwhile makes one early state check), so a
// delivery to a parked pump costs no timer change.
func (p *pump) resume() {
	p.drive()
}

// resumeInline runs a woken pump on the goroutine that woke it (its
// lot's waiter) for as long as it need not block: in the common case it
// reads the new entries, hands their frames to its connection's queue
// and parks again, and no goroutine is started for it. At the first step
// that would block (a full queue, a batch not yet due, a paused stream)
// it goes on on a goroutine of its own, as resume does; so does a pump
// with more than one read of the log to deliver (a burst), so that no
// pump keeps the others of its stream waiting.
func (p *pump) resumeInline() {
	p.inline, p.inlineRead = true, false
	p.loop()
	p.inline = false
	if p.handoff {
		p.handoff = false
		go p.resumeFn()
		return
	}
	p.stopped()
}

// drive runs the pump until it ends or parks.
func (p *pump) drive() {
	p.loop()
	p.stopped()
}

// stopped parks a pump whose loop stopped to park, and ends it
// otherwise.
func (p *pump) stopped() {
	if p.parking {
		p.parking = false
		p.sb.ring.lot.park(p) // the last thing this goroutine does with p
		return
	}
	p.wakeWriter()
	p.end()
}

// end releases what the pump holds; its sub is done.
func (p *pump) end() {
	p.stopCancel()
	p.tick.Stop()
	p.timer.Stop()
	p.c.s.releaseRing(p.sb.ring)
	close(p.sb.done)
	p.c.wg.Done()
}

// loop runs the pump until its sub ends: it hands the framed entry to
// the queue, frames held entries, flushes a due batch, and otherwise
// reads on from the log.
func (p *pump) loop() {
	ctx := p.sb.ctx
	for ctx.Err() == nil {
		ok := true
		switch {
		case p.hasOut:
			ok = p.pushOut(ctx)
		case len(p.held) > 0:
			p.frameHeld()
		case len(p.batch) > 0 && !time.Now().Before(p.batchDue):
			p.flushBatch()
		default:
			ok = p.read(ctx)
		}
		if !ok {
			return
		}
	}
}

// pushOut offers the framed entry to the queue; false when the pump is
// done.
func (p *pump) pushOut(ctx context.Context) bool {
	// with entries still held, the next frame follows at once: the writer
	// is woken by the last one
	more := len(p.held) > 0
	ok, space := p.c.q.push(p.out, more)
	if ok {
		p.unwoken = more
		p.pos = p.out.last
		p.out, p.hasOut = frame{}, false
		return true
	}
	if p.inline {
		p.handoff = true // waits for the writer on a goroutine of its own
		return false
	}
	// the queue is full: wait for the writer, looking at the stream and
	// the lag once a second meanwhile
	select {
	case <-ctx.Done():
		return false
	case <-space:
	case <-p.tick.C:
		if !p.refresh() || !p.checkLag() {
			return false
		}
	}
	return true
}

// read looks the stream up and reads on from the log; false when the
// pump is done.
func (p *pump) read(ctx context.Context) bool {
	if p.caughtUp {
		// a read now would find nothing (or what Wait tells at once): a
		// single-message publish costs one lookup, read and epoch, not two
		p.caughtUp = false
		if p.wait(); p.parking || p.handoff || ctx.Err() != nil {
			return false
		}
	}
	if !p.refresh() {
		return false
	}
	if p.info.State == hub.StatePaused {
		if len(p.batch) > 0 {
			p.flushBatch()
			return true
		}
		return p.idle(ctx)
	}
	if p.inline {
		if p.inlineRead {
			p.handoff = true
			return false
		}
		p.inlineRead = true
	}
	entries, skipTo, err := p.readLog(ctx)
	if err == nil {
		var moved bool
		if moved, err = p.followEpoch(ctx); moved {
			return true
		}
	}
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		p.c.s.logger.Warn("websocket stream read failed", "stream_id", p.sb.id, "error", err)
		return p.idle(ctx)
	}
	return p.take(entries, skipTo)
}

// idle waits a tick (to look at the stream's state again) after waking
// the writer; false when the sub ended meanwhile.
func (p *pump) idle(ctx context.Context) bool {
	p.wakeWriter()
	if p.inline {
		p.handoff = true
		return false
	}
	select {
	case <-ctx.Done():
		return false
	case <-p.tick.C:
	}
	return true
}

// readLog reads up to ReadBatch entries from next on. With none read
// though the log holds next, everything from next on is past retention
// and skipTo is the offset after the log's last.
func (p *pump) readLog(ctx context.Context) (entries []hub.Entry, skipTo int64, err error) {
	s := p.c.s
	entries, err = s.log.Read(ctx, p.sb.id, p.next, s.cfg.ReadBatch)
	if err == nil && len(entries) == 0 {
		var last int64
		if last, err = s.log.Last(ctx, p.sb.id); err == nil && last >= p.next {
			// an append raced the read, or everything from next on is
			// past retention: read again to tell which
			if entries, err = s.log.Read(ctx, p.sb.id, p.next, s.cfg.ReadBatch); err == nil && len(entries) == 0 {
				skipTo = last + 1
			}
		}
	}
	return entries, skipTo, err
}

// followEpoch moves the pump to the stream's current history when it is
// not the pump's, flushing the old history's batch first; moved is true
// when it did either, and what was read is then dropped.
func (p *pump) followEpoch(ctx context.Context) (moved bool, err error) {
	// asked after the reads, the epoch names their history or a later
	// one: entries of a history that replaced the pump's are never
	// delivered as its continuation
	epoch, err := p.c.s.log.Epoch(ctx, p.sb.id)
	if err != nil || epoch == p.epoch {
		return false, err
	}
	if len(p.batch) > 0 {
		p.flushBatch() // the old history's messages go first
		return true, nil
	}
	if err = p.lost(ctx, epoch); err != nil {
		return false, err
	}
	return true, nil
}

// take holds the entries read (or skips past expired offsets, or waits
// for more) and checks the lag after a full read; false when the
// connection was closed as a slow consumer.
func (p *pump) take(entries []hub.Entry, skipTo int64) bool {
	if skipTo > 0 {
		p.expired(skipTo)
		p.next = skipTo
		return true
	}
	if len(entries) == 0 {
		p.lagSince = time.Time{}
		p.wait()
		return !p.parking && !p.handoff
	}
	if first := entries[0].Offset; first > p.next {
		p.expired(first)
	}
	p.held = entries
	p.next = entries[len(entries)-1].Offset + 1
	p.caughtUp = len(entries) < p.c.s.cfg.ReadBatch
	// a short read leaves the sub less than ReadBatch behind: worth a
	// look only for a stream that is told sooner than that
	if len(entries) >= p.c.s.cfg.ReadBatch || p.lagNotice() < int64(p.c.s.cfg.ReadBatch) {
		return p.checkLag()
	}
	p.lagSince = time.Time{}
	return true
}

// wait blocks until the log has offset next, the batch is due, a second
// passed (to look at the stream's state) or the sub ends. A pump with
// nothing pending parks instead (parking set): its stream's lot waits
// for it, without its goroutine.
func (p *pump) wait() {
	p.wakeWriter()
	if len(p.batch) == 0 && !p.hasOut && len(p.held) == 0 && p.info.State != hub.StatePaused {
		p.parking = true
		return
	}
	if p.inline {
		p.handoff = true // waits on a goroutine of its own
		return
	}
	var due <-chan time.Time
	if len(p.batch) > 0 {
		p.timer.Reset(time.Until(p.batchDue))
		due = p.timer.C
	}
	select {
	case <-p.sb.ctx.Done():
	case <-p.c.s.log.Wait(p.sb.id, p.next):
	case <-p.tick.C:
	case <-due:
	}
}

// frameHeld turns held entries into frames: one per entry, or batches.
// It stops at the first frame ready for the queue.
func (p *pump) frameHeld() {
	bin := p.c.bin
	compress := p.c.compress && p.info.Compression
	for len(p.held) > 0 && !p.hasOut {
		e := p.held[0]
		if !p.info.BatchEvents {
			p.held = p.held[1:]
			p.out = frame{sub: p.sb, msgs: 1, last: e.Offset, epoch: p.epoch, bin: bin}
			switch r := p.sb.ring; {
			case compress:
				f := r.get(e, p.epoch)
				if p.out.data = f.deflated(bin); p.out.data != nil {
					p.out.deflated = true
				} else {
					p.out.data = f.wrapper(bin) // not compressed: see deflate
				}
			case r.shared():
				p.out.data = r.get(e, p.epoch).wrapper(bin)
			default:
				p.out.data = r.wrap(e, bin) // followed once: one allocation
			}
			p.out.size = len(p.out.data)
			p.hasOut = true
			break
		}
		if len(p.batch) > 0 && !e.Time.Before(p.batchDue) {
			p.flushBatch() // e is due after the batch: the next one's
			break
		}
		p.held = p.held[1:]
		p.addToBatch(e, p.sb.ring.get(e, p.epoch), bin)
	}
	if len(p.held) == 0 {
		p.held = nil // do not pin the log's array
	}
}

// addToBatch adds an entry to the batch being filled, and makes the
// batch the frame for the queue once full. A batch is due max_wait after
// its first entry was appended (not read): the subscriptions of a stream
// cut the same batches, however late they read, and share them.
func (p *pump) addToBatch(e hub.Entry, ef *entryFrames, bin bool) {
	if len(p.batch) == 0 {
		maxWait := p.info.MaxWait
		if maxWait <= 0 {
			maxWait = DefaultMaxWait
		}
		now := time.Now()
		p.batchDue = e.Time.Add(maxWait)
		if e.Time.IsZero() || p.batchDue.After(now.Add(maxWait)) {
			p.batchDue = now.Add(maxWait) // a clock ahead of this one's
		}
		p.batchFirst = ef
	}
	p.batch = append(p.batch, ef.wrapper(bin))
	p.batchLast = e.Offset
	size := p.info.BatchSize
	if size <= 0 {
		size = DefaultBatchSize
	}
	if len(p.batch) >= size {
		p.flushBatch()
	}
}

// flushBatch makes the batch being filled the frame for the queue.
func (p *pump) flushBatch() {
	bin := p.c.bin
	bf := p.batchFirst.batchOf(p.batch, p.batchLast, bin)
	p.out = frame{sub: p.sb, msgs: len(p.batch), last: p.batchLast, epoch: p.epoch, bin: bin, data: bf.data}
	if p.c.compress && p.info.Compression {
		if z := bf.deflated(p.sb.ring.flate); z != nil { // else not compressed: see deflate
			p.out.data, p.out.deflated = z, true
		}
	}
	p.out.size = len(p.out.data)
	p.hasOut = true
	clear(p.batch)
	p.batch, p.batchFirst = p.batch[:0], nil
}

// refresh looks the stream up again; false when it was stopped (or is
// gone) or now delivers by webhook, after dropping the subscription.
func (p *pump) refresh() bool {
	info, ok := p.cache.Stream(p.c.s.streams, p.c.org, p.c.env, p.sb.id)
	switch {
	case !ok || info.State == hub.StateStopped:
		p.c.dropStopped(p.sb, stoppedNotice(p.sb.id))
		return false
	case info.Delivery == "webhook":
		// configured to deliver by webhook: a websocket no longer
		// receives its messages, as a new one could not subscribe
		p.c.dropStopped(p.sb, webhookNotice(p.sb.id))
		return false
	}
	p.info = info
	return true
}

// lagNotice is how far behind the sub may fall before a lag notice: the
// stream's own bound (a telemetry stream's buffer_size), else LagNotice.
func (p *pump) lagNotice() int64 {
	if p.info.LagNotice > 0 {
		return p.info.LagNotice
	}
	return p.c.s.cfg.LagNotice
}

// checkLag sends a lag notice (at most one per lagNoticeEvery) when the
// sub is more than lagNotice behind the head, and closes the connection
// as a slow consumer when it stayed more than MaxLag behind for longer
// than LagGrace; false then.
func (p *pump) checkLag() bool {
	s := p.c.s
	last, err := s.log.Last(p.sb.ctx, p.sb.id)
	if err != nil {
		return true
	}
	behind := last - p.pos
	now := time.Now()
	if behind > p.lagNotice() && now.Sub(p.noticed) >= lagNoticeEvery {
		p.noticed = now
		p.c.notice(notice{Type: "lag", StreamID: p.sb.id, Behind: behind})
	}
	if behind <= s.cfg.MaxLag {
		p.lagSince = time.Time{}
		return true
	}
	if p.lagSince.IsZero() {
		p.lagSince = now
	} else if now.Sub(p.lagSince) > s.cfg.LagGrace {
		p.c.close(ErrSlowConsumer)
		return false
	}
	return true
}

// lost moves the pump to the oldest retained offset of history epoch,
// which replaced the one it followed, and tells the client.
func (p *pump) lost(ctx context.Context, epoch string) error {
	first, err := hub.FirstAvailable(ctx, p.c.s.log, p.sb.id)
	if err != nil {
		return err
	}
	p.epoch, p.next, p.pos = epoch, first, first-1
	p.c.notice(historyLost(p.sb.id, epoch, first))
	return nil
}

// expired tells the client that offsets before first are gone.
func (p *pump) expired(first int64) {
	p.c.notice(notice{Type: "error", Code: "offsets_expired", StreamID: p.sb.id, FirstAvailable: first,
		Message: "offsets before first_available are past retention"})
}
