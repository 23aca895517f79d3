package embedbus

import (
	"context"
	"fmt"
	"os"
	"sync"
)

// The states Health answers (those of hub.HealthReporter).
const (
	healthy   = "healthy"
	degraded  = "degraded"
	unhealthy = "unhealthy"
)

// writeState keeps the outcome of the bus's last writes: the last
// append to the log (a publish: its records written and synced, with a
// directory) and the last write of the groups' committed offsets.
type writeState struct {
	mu         sync.Mutex
	appendErr  error // nil after an append that succeeded
	commitsErr error // nil after a write of the offsets that succeeded
}

func (s *writeState) appended(err error) {
	s.mu.Lock()
	s.appendErr = err
	s.mu.Unlock()
}

func (s *writeState) committed(err error) {
	s.mu.Lock()
	s.commitsErr = err
	s.mu.Unlock()
}

func (s *writeState) last() (appendErr, commitsErr error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appendErr, s.commitsErr
}

// Health is the bus's state as its writes and its directory show it:
// unhealthy once closed, or while its last append failed (publishing
// fails until one succeeds); degraded while its directory takes no new
// file (a file created, synced and removed there: the log could not start
// its next segment, nor the committed offsets be written) or the last
// write of the committed offsets failed; healthy otherwise. A bus in
// memory fails only by being closed. Each failure is logged.
func (b *Bus) Health(ctx context.Context) string {
	b.mu.Lock()
	closed := b.closed
	b.mu.Unlock()
	if closed {
		return unhealthy
	}
	appendErr, commitsErr := b.state.last()
	if appendErr != nil {
		b.cfg.Logger.Warn("bus: unhealthy: the last append failed", "error", appendErr)
		return unhealthy
	}
	if b.cfg.Dir == "" {
		return healthy
	}
	if err := probeDir(b.cfg.Dir); err != nil {
		b.cfg.Logger.Warn("bus: degraded: its directory takes no new file", "error", err)
		return degraded
	}
	if commitsErr != nil {
		b.cfg.Logger.Warn("bus: degraded: the last write of the committed offsets failed", "error", commitsErr)
		return degraded
	}
	return healthy
}

// probeDir creates a file in dir, syncs it and removes it.
func probeDir(dir string) error {
	f, err := os.CreateTemp(dir, ".health-*")
	if err != nil {
		return fmt.Errorf("bus: health probe: %w", err)
	}
	_, err = f.Write([]byte{0})
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if rerr := os.Remove(f.Name()); err == nil {
		err = rerr
	}
	if err != nil {
		return fmt.Errorf("bus: health probe: %w", err)
	}
	return nil
}
