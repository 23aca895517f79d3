package ws

import (
	"context"
	"sync"

	"github.com/fleethub/fleethub/hub"
)

// lot is where the caught-up pumps of one stream wait without a
// goroutine of their own: a pump with nothing to deliver parks here and
// its goroutine ends; one waiter goroutine per stream (while any pump is
// parked) waits for the log's next offset and runs every parked pump
// again, on its own goroutine for as long as the pump need not block
// (pump.resumeInline): a pump that reads the new entries, queues their
// frames and parks again costs no goroutine start. The waiter also looks
// at the stream once a second (when the Server's stateClock ticks, the
// same moment for every lot) and wakes the pumps when it was paused,
// stopped or removed, or its history changed (Epoch), which they then
// handle as before.
//
// A parked pump keeps its place in its connection's wait group; when its
// subscription is cancelled (unsubscribe, resume, the connection's end)
// the pump's cancel hook takes it out of the lot and ends it. Whoever
// takes a pump out of the lot, under mu, owns it.
type lot struct {
	s  *Server
	id string

	mu      sync.Mutex // guards the fields below and pump.parked
	pumps   []*pump
	waiting bool  // a waiter goroutine runs
	waitFor int64 // the offset the waiter waits for

	kick   chan struct{} // capacity 1: a pump parked that waits for an earlier offset, or the lot emptied
	woken  []*pump       // the waiter's
	waitFn func()        // l.waitLoop, made once: go allocates nothing for it
}

func (l *lot) init(s *Server, id string) {
	l.s, l.id = s, id
	l.kick = make(chan struct{}, 1)
	l.waitFn = l.waitLoop
}

// park adds p to the lot; p's goroutine ends right after.
func (l *lot) park(p *pump) {
	l.mu.Lock()
	p.parked = true
	l.pumps = append(l.pumps, p)
	start := !l.waiting
	kick := !start && p.next < l.waitFor
	if start {
		l.waiting = true
	}
	l.mu.Unlock()
	if p.sb.ctx.Err() != nil {
		// cancelled before it was parked: its hook found nothing to end
		if l.unpark(p) {
			p.end()
		}
	}
	switch {
	case start:
		go l.waitFn()
	case kick:
		select {
		case l.kick <- struct{}{}:
		default:
		}
	}
}

// unpark takes p out of the lot; false when it was not there.
func (l *lot) unpark(p *pump) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !p.parked {
		return false
	}
	p.parked = false
	for i, q := range l.pumps {
		if q == p {
			last := len(l.pumps) - 1
			l.pumps[i] = l.pumps[last]
			l.pumps[last] = nil
			l.pumps = l.pumps[:last]
			break
		}
	}
	if len(l.pumps) == 0 && l.waiting {
		select { // the waiter ends now, not at its next tick
		case l.kick <- struct{}{}:
		default:
		}
	}
	return true
}

// waitLoop is the lot's waiter: it runs while pumps are parked.
func (l *lot) waitLoop() {
	for {
		l.mu.Lock()
		if len(l.pumps) == 0 {
			l.waiting = false
			l.mu.Unlock()
			return
		}
		p0 := l.pumps[0]
		next, mixed := p0.next, false
		for _, p := range l.pumps[1:] {
			next = min(next, p.next)
			mixed = mixed || p.epoch != p0.epoch
		}
		l.waitFor = next
		org, env, epoch := p0.c.org, p0.c.env, p0.epoch
		l.mu.Unlock()
		wake := false
		select {
		case <-l.s.log.Wait(l.id, next):
			wake = true
		case <-l.s.stateClock.tick():
			// pumps of two histories: one parked after the stream's
			// history changed but before it looked, the other after it
			// moved to the new one; each then finds out for itself
			wake = mixed || l.changed(org, env, epoch)
		case <-l.kick:
		}
		if wake {
			l.wakeAll()
		}
	}
}

// changed reports whether the stream was paused, stopped or removed, or
// turned to webhook delivery, or its history is no longer epoch: the pumps have something to do (the
// same states a pump's refresh acts on).
func (l *lot) changed(org, env, epoch string) bool {
	info, ok := l.s.streams.Stream(org, env, l.id)
	if !ok || info.State == hub.StatePaused || info.State == hub.StateStopped || info.Delivery == "webhook" {
		return true
	}
	e, err := l.s.log.Epoch(context.Background(), l.id)
	return err == nil && e != epoch
}

// wakeAll runs every parked pump again, each on this goroutine until it
// parks again or would block (resumeInline).
func (l *lot) wakeAll() {
	l.mu.Lock()
	l.woken = append(l.woken[:0], l.pumps...)
	for _, p := range l.pumps {
		p.parked = false
	}
	clear(l.pumps)
	l.pumps = l.pumps[:0]
	l.mu.Unlock()
	for _, p := range l.woken {
		p.resumeInline()
	}
	clear(l.woken)
}
