package ws

import (
	"sync"
	"time"
)

// stateClock is the Server's one clock of the lots' state checks
// (lot.waitLoop): a waiter waits on the channel of the current period,
// which is closed stateCheckEvery after the first waiter of the period
// asked for it. With 1,000 streams each with a parked subscriber, a
// ticker per lot fired 1,000 times a second, at moments spread over the
// second, and each firing woke a sleeping thread to run one waiter;
// the lots now wake together, once a second, from one timer. No timer
// runs while no lot waits.
type stateClock struct {
	mu    sync.Mutex
	c     chan struct{} // closed when the period ends; nil: no period runs
	timer *time.Timer
}

// tick returns a channel closed at the end of the current period (at
// most stateCheckEvery from now), starting a period when none runs.
func (sc *stateClock) tick() <-chan struct{} {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.c == nil {
		sc.c = make(chan struct{})
		if sc.timer == nil {
			sc.timer = time.AfterFunc(stateCheckEvery, sc.fire)
		} else {
			sc.timer.Reset(stateCheckEvery)
		}
	}
	return sc.c
}

// fire ends the period: every lot waiting on it wakes.
func (sc *stateClock) fire() {
	sc.mu.Lock()
	c := sc.c
	sc.c = nil
	sc.mu.Unlock()
	if c != nil {
		close(c)
	}
}
