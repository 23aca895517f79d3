package ratelimit

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
)

// Failover limits with a Redis limiter and, whenever a Redis call fails,
// answers from a local Memory instead, so that a Redis outage degrades
// limiting to per-node budgets rather than failing requests.
type Failover struct {
	primary *Redis
	local   *Memory
	fault   atomic.Pointer[fault] // nil while healthy
}

// fault is the error of the last failed Redis call.
type fault struct{ err error }

// NewFailover returns a Failover over primary with local as its fallback.
func NewFailover(primary *Redis, local *Memory) *Failover {
	return &Failover{primary: primary, local: local}
}

// Allow asks primary and, if that fails with anything but ErrRevoked or
// ErrInvalid, records the failure and answers from local. A key revoked
// through this Failover stays revoked even if Redis never stored the marker.
func (f *Failover) Allow(ctx context.Context, key string, lim Limit) (Result, error) {
	if f.local.revoked(key) {
		return Result{}, ErrRevoked
	}
	res, err := f.primary.Allow(ctx, key, lim)
	switch {
	case err == nil || errors.Is(err, ErrRevoked):
		f.recovered()
		return res, err
	case errors.Is(err, ErrInvalid):
		return res, err
	}
	f.fault.Store(&fault{err: err})
	return f.local.Allow(ctx, key, lim)
}

// Revoke revokes key in local, then in primary. If primary fails the key
// is still revoked on this node, the failure is recorded, and the returned
// error says that other nodes may still accept the key.
func (f *Failover) Revoke(ctx context.Context, key string) error {
	if err := f.local.Revoke(ctx, key); err != nil {
		return err
	}
	if err := f.primary.Revoke(ctx, key); err != nil {
		f.fault.Store(&fault{err: err})
		return fmt.Errorf("ratelimit: revoked on this node only: %w", err)
	}
	f.recovered()
	return nil
}

// Degraded reports whether the last Redis call failed, and its error.
func (f *Failover) Degraded() (bool, error) {
	if p := f.fault.Load(); p != nil {
		return true, p.err
	}
	return false, nil
}

// InFault reports whether limits are answered from this node's memory
// after a failed Redis call (Degraded without the cause).
func (f *Failover) InFault() bool { return f.fault.Load() != nil }

// recovered clears the recorded fault after a successful Redis call. The
// load first keeps the healthy path free of shared-cache-line writes.
func (f *Failover) recovered() {
	if p := f.fault.Load(); p != nil {
		f.fault.CompareAndSwap(p, nil)
	}
}
