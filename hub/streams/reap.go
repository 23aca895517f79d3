package streams

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// LogDeleter drops a stream's log; the Service deletes an ephemeral
// stream's log when it ends if its log can.
type LogDeleter interface {
	Delete(ctx context.Context, streamID string) error
}

// Lease elects the one node that ends idle ephemeral streams: Hold
// reports whether this node holds it now (taking or renewing it). Without
// one (a single node) the node always holds it.
type Lease interface {
	Hold(ctx context.Context) (bool, error)
}

// WithClock sets the service's clock (tests).
func WithClock(now func() time.Time) Option { return func(s *Service) { s.now = now } }

// WithLease makes ReapIdle run only on the node holding l.
func WithLease(l Lease) Option { return func(s *Service) { s.lease = l } }

// reaper is what ReapIdle remembers between rounds.
type reaper struct {
	mu   sync.Mutex
	from time.Time            // when this node began to reap (took the lease)
	seen map[string]time.Time // stream id → when a client was last seen connected
}

// ReapIdle ends every ephemeral stream that has had no client connected
// (on any node: the registry's shared counters) for its idle timeout:
// stopped with stop_reason idle, its log deleted. A stream's idle time
// counts from the last round that saw a client, or from its start, or
// from when this node began to reap, whichever is latest, so a node that
// takes over never ends a stream early. It returns the ids it ended.
func (s *Service) ReapIdle(ctx context.Context) ([]string, error) {
	s.reap.mu.Lock()
	defer s.reap.mu.Unlock()
	if s.lease != nil {
		held, err := s.lease.Hold(ctx)
		if err != nil || !held {
			s.reap.from, s.reap.seen = time.Time{}, nil
			return nil, err
		}
	}
	now := s.now()
	if s.reap.seen == nil {
		s.reap.from, s.reap.seen = now, map[string]time.Time{}
	}
	var ended []string
	var errs []error
	live := map[string]bool{}
	for _, e := range s.reg.snapshot() {
		on, timeout := e.Cfg.Ephemeral()
		if !on || e.Rec.State == hub.StateStopped {
			continue
		}
		id := e.Rec.ID
		live[id] = true
		if _, conn := s.reg.totals(ctx, e); conn > 0 {
			s.reap.seen[id] = now
			continue
		}
		since := s.reap.seen[id]
		for _, t := range []time.Time{e.Rec.CreatedAt, s.reap.from} {
			if t.After(since) {
				since = t
			}
		}
		if now.Sub(since) < timeout {
			continue
		}
		err := s.endIdle(ctx, e)
		var te *TransitionError
		switch {
		case err == nil:
			ended = append(ended, id)
		case errors.As(err, &te), errors.Is(err, ErrNotFound):
		default:
			errs = append(errs, fmt.Errorf("streams: end idle stream %s: %w", id, err))
			continue
		}
		delete(live, id)
	}
	for id := range s.reap.seen {
		if !live[id] {
			delete(s.reap.seen, id)
		}
	}
	return ended, errors.Join(errs...)
}

// endIdle stops an ephemeral stream with reason idle and deletes its log.
func (s *Service) endIdle(ctx context.Context, e *Entry) error {
	_, err := s.update(ctx, e.Rec.Org, e.Rec.Env, e.Rec.Kind, e.Rec.ID, func(rec *store.Stream) error {
		if rec.State == hub.StateStopped {
			return &TransitionError{From: rec.State, To: hub.StateStopped}
		}
		var cfg Config
		if err := json.Unmarshal(rec.Config, &cfg); err != nil {
			return fmt.Errorf("streams: config of %s: %w", rec.ID, err)
		}
		cfg.StopReason = StopIdle
		raw, err := json.Marshal(cfg)
		if err != nil {
			return fmt.Errorf("streams: config of %s: %w", rec.ID, err)
		}
		rec.Config, rec.State = raw, hub.StateStopped
		rec.StoppedAt = apitime.Of(s.now())
		return nil
	})
	if err != nil {
		return err
	}
	return s.deleteLog(ctx, e.Rec.ID)
}

// deleteLog drops a stream's log when the log can.
func (s *Service) deleteLog(ctx context.Context, id string) error {
	if d, ok := s.log.(LogDeleter); ok {
		if err := d.Delete(ctx, id); err != nil {
			return fmt.Errorf("streams: delete the log of %s: %w", id, err)
		}
	}
	return nil
}

// RunReaper calls ReapIdle every period until ctx ends, logging what it
// ends and its failures.
func (s *Service) RunReaper(ctx context.Context, every time.Duration) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			ended, err := s.ReapIdle(ctx)
			if err != nil && ctx.Err() == nil {
				s.reg.log.Warn("ending idle ephemeral streams failed", "error", err)
			}
			for _, id := range ended {
				s.reg.log.Info("ephemeral stream ended: no client connected for its idle timeout", "stream_id", id)
			}
		}
	}
}

// snapshot returns every stream the registry holds.
func (r *Registry) snapshot() []*Entry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Entry, 0, len(r.streams))
	for _, e := range r.streams {
		out = append(out, e)
	}
	return out
}

// MakeEphemeral makes every stream that is not stopped and whose start
// body was exactly one of bodies (kind → JSON start body, compared once
// decoded) ephemeral with the default idle timeout: streams a client
// left behind then end once idle, while one with a client connected keeps
// running. A stream made ephemeral no longer matches, so a second call
// changes nothing. It returns the ids it changed.
func (s *Service) MakeEphemeral(ctx context.Context, bodies map[string]string) ([]string, error) {
	want := map[string]string{}
	for kind, body := range bodies {
		norm, err := normalized(kind, []byte(body))
		if err != nil {
			return nil, err
		}
		want[kind] = norm
	}
	var changed []string
	var errs []error
	for _, e := range s.reg.snapshot() {
		w, ok := want[e.Rec.Kind]
		if !ok || e.Rec.State == hub.StateStopped {
			continue
		}
		if cur, err := normalized(e.Rec.Kind, e.Rec.Config); err != nil || cur != w {
			continue
		}
		_, err := s.update(ctx, e.Rec.Org, e.Rec.Env, e.Rec.Kind, e.Rec.ID, func(rec *store.Stream) error {
			var cfg Config
			if err := json.Unmarshal(rec.Config, &cfg); err != nil {
				return fmt.Errorf("streams: config of %s: %w", rec.ID, err)
			}
			switch {
			case cfg.Telemetry != nil:
				cfg.Telemetry.Ephemeral = true
			case cfg.Events != nil:
				cfg.Events.Ephemeral = true
			}
			raw, err := json.Marshal(cfg)
			rec.Config = raw
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("streams: make %s ephemeral: %w", e.Rec.ID, err))
			continue
		}
		changed = append(changed, e.Rec.ID)
	}
	return changed, errors.Join(errs...)
}

// normalized is a configuration of kind as canonical JSON: raw is either
// a stored Config or a start body.
func normalized(kind string, raw []byte) (string, error) {
	var cfg Config
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return "", fmt.Errorf("streams: configuration: %w", err)
	}
	var body any = cfg.Events
	if kind == hub.KindTelemetry {
		body = cfg.Telemetry
	}
	if cfg.Events == nil && cfg.Telemetry == nil { // a start body
		if kind == hub.KindTelemetry {
			body = &TelemetryConfig{}
		} else {
			body = &EventsConfig{}
		}
		if err := json.Unmarshal(raw, body); err != nil {
			return "", fmt.Errorf("streams: configuration: %w", err)
		}
	}
	b, err := json.Marshal(body)
	return string(b), err
}
