package bustest

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// failedBatch: a batch whose handler fails comes back whole (the next call
// for its partition begins with the same messages), nothing is skipped,
// and nothing handled is handed again; with a group and without.
func failedBatch(t *testing.T, f Factory) {
	for _, group := range []string{"g", ""} {
		name := "Group"
		if group == "" {
			name = "Groupless"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			const keys, perKey = 10, 20
			b := f.Storage(t, 2)(t)
			publish(t, b, keys, 0, perKey)
			r := newRecorder(0)
			var mu sync.Mutex
			var failed, retried []hub.Message
			m := join(t, b, hub.Subscription{Topic: Topic, Group: group, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
				mu.Lock()
				if failed == nil {
					failed = clone(msgs)
					mu.Unlock()
					return errors.New("bustest: downstream unavailable")
				}
				if retried == nil && msgs[0].Partition == failed[0].Partition {
					retried = clone(msgs)
				}
				mu.Unlock()
				r.add(msgs)
				return nil
			})
			r.awaitAll(t, keys, 0, perKey)
			m.leave(t)
			r.check(t, keys, 0, perKey)
			mu.Lock()
			defer mu.Unlock()
			if len(retried) < len(failed) {
				t.Fatalf("failed batch of %d messages came back as %d", len(failed), len(retried))
			}
			for i, want := range failed {
				if got := retried[i]; got.Offset != want.Offset || string(got.Value) != string(want.Value) {
					t.Fatalf("message %d of the failed batch was offset %d (%s), came back as offset %d (%s)",
						i, want.Offset, want.Value, got.Offset, got.Value)
				}
			}
		})
	}
}

// heldMessage: member A handles ten messages and keeps holding the fourth
// (offset k, Subscription.Held). While it runs, messages published after
// reach it once each and none of the earlier ones comes again (a bus whose
// read position fell back to the held offset would hand them over and
// over). Once A left, member B starts at offset k; it holds nothing, so its
// commit reaches the end and member C, after B left, gets only what is
// published next.
func heldMessage(t *testing.T, f Factory) {
	for _, v := range variants(f) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			open := f.Storage(t, 1)
			b := open(t)
			publish(t, b, 1, 0, 10)

			var mu sync.Mutex
			var k int64
			part, holding := 0, false
			held := func(p int) (int64, bool) {
				mu.Lock()
				defer mu.Unlock()
				return k, holding && p == part
			}
			a := newRecorder(0)
			ma := join(t, b, hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest, Held: held},
				func(_ context.Context, msgs []hub.Message) error {
					mu.Lock()
					for _, m := range msgs {
						if string(m.Value) == value(0, 3) {
							k, part, holding = m.Offset, m.Partition, true
						}
					}
					mu.Unlock()
					a.add(msgs)
					return nil
				})
			a.awaitAll(t, 1, 0, 10)
			for s := 10; s < 15; s++ { // one publish, so one batch, each
				publish(t, b, 1, s, s+1)
				a.awaitAll(t, 1, s, s+1)
			}
			b = v.leave(t, open, b, ma)
			a.check(t, 1, 0, 15)

			rb := newRecorder(3)
			mb := join(t, b, hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest,
				Held: func(int) (int64, bool) { return 0, false }}, rb.handle)
			rb.awaitAll(t, 1, 3, 15)
			b = v.leave(t, open, b, mb)
			rb.check(t, 1, 3, 15)
			mu.Lock()
			if got := rb.offset(value(0, 3)); got != k {
				t.Errorf("the next member got the held message at offset %d, want %d", got, k)
			}
			mu.Unlock()

			publish(t, b, 1, 15, 16)
			rc := newRecorder(15)
			mc := join(t, b, hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest}, rc.handle)
			rc.awaitAll(t, 1, 15, 16)
			mc.leave(t)
			rc.check(t, 1, 15, 16)
		})
	}
}

// releasedHold: a member handles ten messages while holding the fourth,
// then releases it and no message comes. The bus asks Held again by
// itself and commits to the end (a commit that stood still would look
// like a dead member and replay the partition after a restart): the next
// member gets only what is published after.
func releasedHold(t *testing.T, f Factory) {
	for _, v := range variants(f) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			open := f.Storage(t, 1)
			b := open(t)
			publish(t, b, 1, 0, 10)
			var mu sync.Mutex
			holding, asked := true, 0
			askedAgain := make(chan struct{})
			held := func(int) (int64, bool) {
				mu.Lock()
				defer mu.Unlock()
				if holding {
					return 0, false // set below, once the offset is known
				}
				if asked++; asked == 1 {
					close(askedAgain)
				}
				return 0, false
			}
			var k int64 = -1
			heldAt := func(p int) (int64, bool) {
				mu.Lock()
				h, off := holding, k
				mu.Unlock()
				if h && off >= 0 {
					return off, true
				}
				return held(p)
			}
			a := newRecorder(0)
			ma := join(t, b, hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest, Held: heldAt},
				func(_ context.Context, msgs []hub.Message) error {
					mu.Lock()
					for _, m := range msgs {
						if string(m.Value) == value(0, 3) {
							k = m.Offset
						}
					}
					mu.Unlock()
					a.add(msgs)
					return nil
				})
			a.awaitAll(t, 1, 0, 10)
			mu.Lock()
			holding = false
			mu.Unlock()
			// the bus asks again by itself and commits; the member's leave
			// waits for that commit to return
			select {
			case <-askedAgain:
			case <-time.After(waitLimit):
				t.Fatal("the bus never asked Held again after the last batch: the commit stays at the held message")
			}
			b = v.leave(t, open, b, ma)
			a.check(t, 1, 0, 10)

			publish(t, b, 1, 10, 11)
			rb := newRecorder(10)
			mb := join(t, b, hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest}, rb.handle)
			rb.awaitAll(t, 1, 10, 11)
			mb.leave(t)
			rb.check(t, 1, 10, 11)
		})
	}
}
