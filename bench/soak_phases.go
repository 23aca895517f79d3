package bench

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"syscall"
	"time"
)

// soakSinks are the soak's subscribers: a websocket subscriber of the
// event stream per node and the webhook receiver, and a websocket
// subscriber of the telemetry stream on node 0.
type soakSinks struct {
	events []*soakReceipts // per node, then the webhook receiver
	tel    *soakSink
	stop   context.CancelFunc
	wg     sync.WaitGroup
}

// startSinks starts the websocket subscribers, stopped at the end if not
// before.
func (r *soakRun) startSinks(ctx context.Context) *soakSinks {
	sctx, stop := context.WithCancel(ctx)
	r.atEnd(stop)
	s := &soakSinks{stop: stop}
	for i := range r.bases {
		ws := &soakSink{soakReceipts: newReceipts(fmt.Sprintf("ws node %d", i), r.began), base: r.bases[i], key: r.key, stream: r.evStream}
		s.events = append(s.events, ws.soakReceipts)
		s.wg.Add(1)
		go func() { defer s.wg.Done(); ws.run(sctx) }()
	}
	s.events = append(s.events, r.receiver.soakReceipts)
	s.tel = &soakSink{soakReceipts: newReceipts("telemetry", r.began), base: r.bases[0], key: r.key, stream: r.telStream, telemetry: true}
	s.wg.Add(1)
	go func() { defer s.wg.Done(); s.tel.run(sctx) }()
	return s
}

// all are every sink's receipts, the telemetry subscriber's last.
func (s *soakSinks) all() []*soakReceipts {
	return append(slices.Clone(s.events), s.tel.soakReceipts)
}

// drain waits, ten minutes at most, until every sink has every
// acknowledged message, then stops the subscribers.
func (s *soakSinks) drain(ctx context.Context, led *soakLedger) {
	deadline := time.Now().Add(10 * time.Minute)
	for time.Now().Before(deadline) && !soakDrained(led, s.events, s.tel.soakReceipts) && ctx.Err() == nil {
		time.Sleep(time.Second)
	}
	s.stop()
	s.wg.Wait()
}

// soakDrained reports whether every sink has every acknowledged message.
func soakDrained(led *soakLedger, evSinks []*soakReceipts, tel *soakReceipts) bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	has := func(r *soakReceipts, acked map[int64]int) bool {
		r.mu.Lock()
		defer r.mu.Unlock()
		for seq := range acked {
			if r.got[seq].n == 0 {
				return false
			}
		}
		return true
	}
	for _, s := range evSinks {
		if !has(s, led.evAcked) {
			return false
		}
	}
	return has(tel, led.telAcked)
}

// soakTimeline is when each phase began and when its fault ended.
type soakTimeline struct {
	names             []string
	starts, faultEnds []time.Time
}

// phaseNames are the phases in order; with a Redis of the soak's own,
// Redis is restarted rather than cut.
func (r *soakRun) phaseNames() []string {
	names := slices.Clone(soakPhaseNames)
	if r.redisProc != nil {
		names[slices.Index(names, "redis cut")] = "redis restarted"
	}
	return names
}

// runPhases runs the phases one after the other, each a fault from its
// start and then the load alone, and keeps the ledger told which phase
// it is and whether its fault is over. The receiver's outage is the
// longest: it gets its own time (at most a quarter of the soak) on top of
// a phase; the other faults last at most 3/4 of a phase.
func (r *soakRun) runPhases(ctx context.Context, led *soakLedger) (soakTimeline, error) {
	receiverDown := min(r.cfg.ReceiverDown, r.cfg.Duration/4)
	phase := (r.cfg.Duration - receiverDown) / time.Duration(len(soakPhaseNames))
	longest := phase * 3 / 4
	tl := soakTimeline{names: r.phaseNames(), starts: make([]time.Time, len(soakPhaseNames)), faultEnds: make([]time.Time, len(soakPhaseNames))}
	for i, name := range tl.names {
		led.mu.Lock()
		led.phase, led.faultOver = i, false
		led.mu.Unlock()
		r.logf("phase %q", name)
		tl.starts[i] = time.Now()
		if err := r.fault(ctx, name, longest, receiverDown); err != nil {
			return tl, err
		}
		tl.faultEnds[i] = time.Now()
		length := phase
		if name == "receiver down" {
			length += receiverDown
		}
		led.mu.Lock()
		led.faultOver = true
		led.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-time.After(length - time.Since(tl.starts[i])):
		}
	}
	return tl, nil
}

// fault brings about the fault of the phase named and ends it: a node or
// the broker killed and restarted, Redis cut or killed and restarted,
// PostgreSQL hung, each for at most longest, or the webhook receiver
// down for receiverDown.
func (r *soakRun) fault(ctx context.Context, name string, longest, receiverDown time.Duration) error {
	wait := func(d time.Duration) {
		select {
		case <-ctx.Done():
		case <-time.After(min(d, longest)):
		}
	}
	switch name {
	case "node killed":
		if err := r.nodes[1].signal(syscall.SIGKILL); err != nil {
			return err
		}
		wait(r.cfg.NodeDown)
		return r.nodes[1].start()
	case "redis cut":
		r.rdProxy.Cut(true)
		wait(r.cfg.StoreDown)
		r.rdProxy.Cut(false)
	case "redis restarted":
		if err := r.redisProc.signal(syscall.SIGKILL); err != nil {
			return err
		}
		wait(r.cfg.StoreDown)
		return r.redisProc.start()
	case "postgres hung":
		r.pgProxy.Hang(true)
		wait(r.cfg.StoreDown)
		r.pgProxy.Hang(false)
	case "receiver down":
		if err := r.receiver.setDown(true); err != nil {
			return fmt.Errorf("bench: soak: receiver down: %w", err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(receiverDown):
		}
		if err := r.receiver.setDown(false); err != nil {
			return fmt.Errorf("bench: soak: receiver up: %w", err)
		}
	case "broker killed":
		if err := r.broker.signal(syscall.SIGKILL); err != nil {
			return err
		}
		wait(r.cfg.NodeDown)
		return r.broker.start()
	}
	return nil
}
