package bustest

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// groupOfTwo: a group of two members handles every message exactly once,
// and each key's messages in the order they were published. Messages are
// published a round at a time until both members handled some (they share
// the partitions), and five rounds more; then one member leaves and the
// other takes over its partitions for five more rounds. Both have left
// before the count, so a message handed again at a rebalance or a leave
// is counted.
func groupOfTwo(t *testing.T, f Factory) {
	const keys = 20
	open := f.Storage(t, 4)
	b := open(t)
	peer := b
	if !f.MembersPerBus {
		peer = open(t)
	}
	r := newRecorder(0)
	var handled [2]atomic.Int64
	sub := hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest}
	var members []*member
	for i, bus := range []hub.Bus{b, peer} {
		members = append(members, join(t, bus, sub, func(_ context.Context, msgs []hub.Message) error {
			handled[i].Add(int64(len(msgs)))
			r.add(msgs)
			return nil
		}))
	}
	seq := 0
	round := func() {
		publish(t, b, keys, seq, seq+1)
		r.awaitAll(t, keys, seq, seq+1)
		seq++
	}
	deadline := time.Now().Add(waitLimit)
	for handled[0].Load() == 0 || handled[1].Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("after %d rounds, the members handled %d and %d messages: one never got a partition",
				seq, handled[0].Load(), handled[1].Load())
		}
		round()
	}
	shared := seq
	for range 5 {
		round()
	}
	members[0].leave(t)
	before := handled[1].Load()
	for range 5 {
		round()
	}
	if got := handled[1].Load() - before; got != 5*keys {
		t.Errorf("the remaining member handled %d of the %d messages published after the other left", got, 5*keys)
	}
	members[1].leave(t)
	r.check(t, keys, 0, seq)
	t.Logf("%d rounds until both members handled messages; the first handled %d, the second %d before the first left",
		shared, handled[0].Load(), before)
}

// groupResumes: a member that joins after the group's last member left
// gets what was published since, and nothing that was handled (committed)
// before.
func groupResumes(t *testing.T, f Factory) {
	for _, v := range variants(f) {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			const keys = 10
			open := f.Storage(t, 3)
			b := open(t)
			sub := hub.Subscription{Topic: Topic, Group: "g", Start: hub.StartEarliest}
			publish(t, b, keys, 0, 10)
			a := newRecorder(0)
			ma := join(t, b, sub, a.handle)
			a.awaitAll(t, keys, 0, 10)
			b = v.leave(t, open, b, ma)
			a.check(t, keys, 0, 10)

			publish(t, b, keys, 10, 15)
			rb := newRecorder(10)
			mb := join(t, b, sub, rb.handle)
			rb.awaitAll(t, keys, 10, 15)
			mb.leave(t)
			rb.check(t, keys, 10, 15)
		})
	}
}

// groupless: subscriptions without a group and with StartEarliest each
// read every message from the start, and then what is published while
// they run, each once and in key order; they commit nothing, so a later
// one reads everything again.
func groupless(t *testing.T, f Factory) {
	const keys = 10
	b := f.Storage(t, 3)(t)
	sub := hub.Subscription{Topic: Topic, Start: hub.StartEarliest}
	publish(t, b, keys, 0, 10)
	r1, r2 := newRecorder(0), newRecorder(0)
	m1, m2 := join(t, b, sub, r1.handle), join(t, b, sub, r2.handle)
	r1.awaitAll(t, keys, 0, 10)
	r2.awaitAll(t, keys, 0, 10)
	publish(t, b, keys, 10, 15)
	r1.awaitAll(t, keys, 10, 15)
	r2.awaitAll(t, keys, 10, 15)
	m1.leave(t)
	m2.leave(t)
	r1.check(t, keys, 0, 15)
	r2.check(t, keys, 0, 15)

	r3 := newRecorder(0)
	m3 := join(t, b, sub, r3.handle)
	r3.awaitAll(t, keys, 0, 15)
	m3.leave(t)
	r3.check(t, keys, 0, 15)
}
