package ws

import (
	"sync"
	"time"
)

// lingerSlack divides WriteLinger into how much earlier than its due
// time the lingerer writes a held connection: the held connections whose
// lingers end within that of one another are written on one firing.
const lingerSlack = 5

// lingerer holds the busy connections' writes (conn.pushed) until their
// lingers end, on one timer for the whole Server: a firing writes every
// connection then due, each with its own writev, and sets the timer for
// the next. A timer per connection (time.AfterFunc) started a goroutine
// per held write, about as many as deliveries in a burst at 100
// subscribers.
type lingerer struct {
	since func() time.Duration // the Server's clock (Server.since)
	slack time.Duration        // WriteLinger / lingerSlack
	mu    sync.Mutex           // guards held, timer and armed
	held  []heldConn
	timer *time.Timer
	armed time.Duration // the due time the timer is set for, since the Server's start; 0: not set
}

type heldConn struct {
	c   *conn
	due time.Duration // since the Server's start
}

// hold keeps c's write until due (since the Server's start); c.wg counts
// it until it has run.
func (l *lingerer) hold(c *conn, due time.Duration) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = append(l.held, heldConn{c, due})
	if l.armed == 0 || due < l.armed {
		l.arm(due)
	}
}

// arm sets the timer for due; mu held.
func (l *lingerer) arm(due time.Duration) {
	l.armed = due
	wait := due - l.since()
	if l.timer == nil {
		l.timer = time.AfterFunc(wait, l.fire)
		return
	}
	l.timer.Reset(wait)
}

// fire writes the held connections due by now (and within the slack), in
// the order they were held, and sets the timer for the rest.
func (l *lingerer) fire() {
	until := l.since() + l.slack
	l.mu.Lock()
	var due []*conn
	keep := l.held[:0]
	var next time.Duration
	for _, h := range l.held {
		switch {
		case h.due <= until:
			due = append(due, h.c)
		default:
			keep = append(keep, h)
			if next == 0 || h.due < next {
				next = h.due
			}
		}
	}
	clear(l.held[len(keep):])
	l.held = keep
	l.armed = 0
	if next != 0 {
		l.arm(next)
	}
	l.mu.Unlock()
	for _, c := range due {
		c.lingered()
	}
}
