package dedup

import (
	"context"
	"errors"
)

// Batcher is a Window that claims and forgets several ids in one call:
// one lock and one look at the clock for an in-memory window, one round
// trip for Redis. ClaimAll and ForgetAll, the functions, use it when a
// window has it.
type Batcher interface {
	// ClaimAll claims ids as Claim would one after the other, and sets
	// states[i] to what it found for ids[i]; states must be at least as
	// long as ids. An id listed twice is InFlight the second time. It
	// fails with ErrEmptyID, claiming nothing, when an id is empty; on
	// another error, states are not set and some ids may be claimed
	// (their claims lapse after the lease unless Done or Forget).
	ClaimAll(ctx context.Context, ids []string, states []State) error
	// ForgetAll forgets ids as Forget would each.
	ForgetAll(ctx context.Context, ids ...string) error
}

// Private is a Batcher that one process keeps for itself, used by one
// caller that tells its own copies in flight apart itself (Compact, the
// embedded hub's pipeline): nothing outside the process reads it, and
// it is gone with the process. Such a caller needs no claim that differs
// from a record, so it may record ids as it claims them, with one call
// per batch instead of ClaimAll then Done.
type Private interface {
	Batcher
	// RecordAll records each of ids that is neither recorded nor
	// claimed as seen now and sets states[i] to Unseen for it, else to
	// Duplicate (recorded) or InFlight (claimed), recording nothing; an
	// id listed twice is Duplicate the second time. ForgetAll undoes a
	// record (the caller's hand-off failed). states must be at least as
	// long as ids; ErrEmptyID as ClaimAll.
	RecordAll(ctx context.Context, ids []string, states []State) error
}

var (
	_ Private = (*Compact)(nil)
	_ Batcher = (*Local)(nil)
	_ Batcher = (*Compact)(nil)
	_ Batcher = (*Redis)(nil)
	_ Batcher = (*Failover)(nil)
)

// ClaimAll claims ids in w, in one call when w is a Batcher, else with
// one Claim after the other (stopping at the first error).
func ClaimAll(ctx context.Context, w Window, ids []string, states []State) error {
	if b, ok := w.(Batcher); ok {
		return b.ClaimAll(ctx, ids, states)
	}
	if err := checkIDs(ids); err != nil {
		return err
	}
	for i, id := range ids {
		st, err := w.Claim(ctx, id)
		if err != nil {
			return err
		}
		states[i] = st
	}
	return nil
}

// ForgetAll forgets ids in w, in one call when w is a Batcher, else with
// one Forget after the other; it returns their errors joined.
func ForgetAll(ctx context.Context, w Window, ids ...string) error {
	if b, ok := w.(Batcher); ok {
		return b.ForgetAll(ctx, ids...)
	}
	if err := checkIDs(ids); err != nil {
		return err
	}
	var errs []error
	for _, id := range ids {
		if err := w.Forget(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// checkIDs fails with ErrEmptyID when an id is empty.
func checkIDs(ids []string) error {
	for _, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
	}
	return nil
}
