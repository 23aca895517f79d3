package dedup

import (
	"context"
	"errors"
)

// Failover is a shared window with a local one behind it: every call goes
// to primary (Redis), and one that fails with anything but ErrEmptyID is
// answered by local instead, so that an outage of the shared window
// narrows dedup to this node's own ids rather than failing or slowing
// the caller. Across the switch a copy may pass twice: one seen by
// primary before the outage and again by local during it, or one claimed
// on local and then seen by primary once it is back.
type Failover struct {
	primary Window
	local   Window
}

var _ Window = (*Failover)(nil)

// NewFailover returns a Failover over primary with local (a Local or a
// Compact) as its fallback.
func NewFailover(primary Window, local Window) *Failover {
	return &Failover{primary: primary, local: local}
}

func (f *Failover) failed(err error) bool { return err != nil && !errors.Is(err, ErrEmptyID) }

// Seen implements Window.
func (f *Failover) Seen(ctx context.Context, id string) (bool, error) {
	dup, err := f.primary.Seen(ctx, id)
	if f.failed(err) {
		return f.local.Seen(ctx, id)
	}
	return dup, err
}

// Claim implements Window.
func (f *Failover) Claim(ctx context.Context, id string) (State, error) {
	st, err := f.primary.Claim(ctx, id)
	if f.failed(err) {
		return f.local.Claim(ctx, id)
	}
	return st, err
}

// ClaimAll implements Batcher: when primary fails, every id is
// claimed in local.
func (f *Failover) ClaimAll(ctx context.Context, ids []string, states []State) error {
	err := ClaimAll(ctx, f.primary, ids, states)
	if f.failed(err) {
		return ClaimAll(ctx, f.local, ids, states)
	}
	return err
}

// Done implements Window: ids primary cannot record are recorded locally.
func (f *Failover) Done(ctx context.Context, ids ...string) error {
	err := f.primary.Done(ctx, ids...)
	if f.failed(err) {
		return f.local.Done(ctx, ids...)
	}
	return err
}

// Forget implements Window: the id is forgotten in both windows.
func (f *Failover) Forget(ctx context.Context, id string) error {
	err := f.primary.Forget(ctx, id)
	if lerr := f.local.Forget(ctx, id); f.failed(err) {
		return lerr
	}
	return err
}

// ForgetAll implements Batcher: the ids are forgotten in both windows.
func (f *Failover) ForgetAll(ctx context.Context, ids ...string) error {
	err := ForgetAll(ctx, f.primary, ids...)
	if lerr := ForgetAll(ctx, f.local, ids...); f.failed(err) {
		return lerr
	}
	return err
}
