package ws

import (
	"time"

	"github.com/fasthttp/websocket"
)

// pingSlots spreads the pings: the Server's pinger wakes pingSlots times
// per PingInterval and pings the connections of one slot, so 10,000
// connections are not pinged in one burst.
const pingSlots = 16

// startPinger starts the pinger with the first connection; mu held.
func (s *Server) startPinger() {
	if s.pinging {
		return
	}
	s.pinging = true
	s.pingStop = make(chan struct{})
	s.pingDone = make(chan struct{})
	go s.pingLoop(s.pingStop, s.pingDone)
}

// stopPinger ends the pinger and waits for it; Shutdown calls it.
func (s *Server) stopPinger() {
	s.mu.Lock()
	stop, done := s.pingStop, s.pingDone
	s.pingStop = nil
	s.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// pingLoop is the Server's one pinger: every connection gets a ping
// frame in its queue once per PingInterval, which its writer sends (a
// connection has no timer of its own). The client's pong extends the
// read deadline (ReadTimeout).
func (s *Server) pingLoop(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	tick := time.NewTicker(max(s.cfg.PingInterval/pingSlots, time.Millisecond))
	defer tick.Stop()
	var due []*conn
	slot := 0
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		for c := range s.conns {
			if c.pingSlot == slot {
				due = append(due, c)
			}
		}
		s.mu.Unlock()
		for _, c := range due {
			c.ping()
		}
		clear(due)
		due = due[:0]
		slot = (slot + 1) % pingSlots
	}
}

// ping queues a ping frame. A queue past even its control slack gets
// none: its client is about to be closed as a slow consumer.
func (c *conn) ping() {
	c.q.pushControl(frame{ctl: websocket.PingMessage, size: 2})
}
