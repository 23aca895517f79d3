// Package bustest is test support: the contract every hub.Bus passes, run
// by the tests of hub/embedbus and hub/kafkabus so that both buses keep one
// behaviour. A bus's test calls Run with a Factory:
//
//	func TestContract(t *testing.T) {
//		bustest.Run(t, bustest.Factory{
//			Storage: func(t *testing.T, partitions int) func(*testing.T) hub.Bus {
//				dir := t.TempDir()
//				return func(t *testing.T) hub.Bus {
//					b, err := embedbus.Open(embedbus.Config{Dir: dir, Partitions: partitions})
//					if err != nil {
//						t.Fatal(err)
//					}
//					t.Cleanup(func() { b.Close(context.Background()) })
//					return b
//				}
//			},
//			MembersPerBus: true,
//			Restart:       true,
//		})
//	}
//
// Each case is a parallel subtest on storage of its own. Cases wait on what
// the handlers were given, with a deadline against hangs; none sleeps or
// measures time.
package bustest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Topic is the topic of every case.
const Topic = "bustest"

// waitLimit bounds every wait: a case that waits longer has hung.
const waitLimit = 30 * time.Second

// Factory makes the buses of the cases.
type Factory struct {
	// Storage makes the storage of one case (a fresh directory, a fresh
	// cluster) whose Topic has the given number of partitions, and returns
	// a function that opens a bus over it: every bus opened there sees
	// the same messages and committed offsets. open registers the bus's
	// Close with t.Cleanup; the suite may close it before. Storage is
	// called from parallel subtests.
	Storage func(t *testing.T, partitions int) (open func(t *testing.T) hub.Bus)
	// MembersPerBus: several Subscribe calls of one group and topic share
	// a bus (embedbus), and open is never called while a bus of the storage
	// is open. When false (kafkabus: a bus is one member of a group), each
	// member of a group gets a bus of its own, open beside the others.
	MembersPerBus bool
	// Restart: a bus opened after another closed sees its messages and
	// committed offsets, as after a process restart. False (a bus in
	// memory) skips the restart variants.
	Restart bool
}

// Run runs every case against buses made by f.
func Run(t *testing.T, f Factory) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"GroupOfTwoGetsEachMessageOnce", groupOfTwo},
		{"FailedBatchComesBackWhole", failedBatch},
		{"HeldMessage", heldMessage},
		{"ReleasedHoldCommitsWithoutNewMessages", releasedHold},
		{"GroupResumesAfterCommit", groupResumes},
		{"GrouplessReadsFromEarliest", groupless},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, f)
		})
	}
}

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

// variant is how a group member leaves before the next one joins.
type variant struct {
	name    string
	restart bool
}

// variants: a member leaves as its Subscribe's ctx ends, and, with
// f.Restart, as its bus closes and another opens over the same storage.
func variants(f Factory) []variant {
	vs := []variant{{name: "Cancel"}}
	if f.Restart {
		vs = append(vs, variant{name: "Restart", restart: true})
	}
	return vs
}

// leave makes m leave as v says, and returns the bus for the next member.
func (v variant) leave(t *testing.T, open func(*testing.T) hub.Bus, b hub.Bus, m *member) hub.Bus {
	t.Helper()
	if !v.restart {
		m.leave(t)
		return b
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m.wait(t, true)
	return open(t)
}

// member is a running Subscribe call.
type member struct {
	cancel context.CancelFunc
	done   chan error
}

func join(t *testing.T, b hub.Bus, sub hub.Subscription, h hub.Handler) *member {
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- b.Subscribe(ctx, sub, h) }()
	t.Cleanup(cancel)
	return m
}

// leave ends the member's ctx and waits for its Subscribe to return (nil):
// its handler calls are over then.
func (m *member) leave(t *testing.T) {
	t.Helper()
	m.cancel()
	m.wait(t, false)
}

// wait waits for Subscribe to return; after the bus closed, it may return
// hub.ErrClosed.
func (m *member) wait(t *testing.T, closed bool) {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case err := <-m.done:
		if err != nil && !(closed && errors.Is(err, hub.ErrClosed)) {
			t.Errorf("Subscribe returned %v", err)
		}
	case <-timer.C:
		t.Fatalf("Subscribe did not return within %v of its end", waitLimit)
	}
}

func value(key, seq int) string { return fmt.Sprintf("k%02d:%05d", key, seq) }

// publish publishes, in one call, messages from through to-1 of keys keys,
// key "kKK", value "kKK:SEQ".
func publish(t *testing.T, b hub.Bus, keys, from, to int) {
	t.Helper()
	var msgs []hub.Message
	for s := from; s < to; s++ {
		for k := range keys {
			msgs = append(msgs, hub.Message{Topic: Topic, Key: fmt.Appendf(nil, "k%02d", k), Value: []byte(value(k, s))})
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := b.Publish(ctx, msgs...); err != nil {
		t.Fatalf("Publish: %v", err)
	}
}

// clone copies msgs with their keys and values.
func clone(msgs []hub.Message) []hub.Message {
	out := slices.Clone(msgs)
	for i := range out {
		out[i].Key, out[i].Value = slices.Clone(out[i].Key), slices.Clone(out[i].Value)
	}
	return out
}

// recorder keeps what a handler was given and checks each batch as it
// comes: messages of Topic, of one partition, offsets rising, each key's
// sequence numbers following on from start.
type recorder struct {
	mu      sync.Mutex
	start   int
	count   map[string]int   // value → deliveries
	offsets map[string]int64 // value → offset of its last delivery
	next    map[string]int   // key → sequence number due
	errs    []string
	changed chan struct{} // closed and replaced at each batch
}

func newRecorder(start int) *recorder {
	return &recorder{start: start, count: map[string]int{}, offsets: map[string]int64{}, next: map[string]int{},
		changed: make(chan struct{})}
}

func (r *recorder) handle(_ context.Context, msgs []hub.Message) error {
	r.add(msgs)
	return nil
}

func (r *recorder) add(msgs []hub.Message) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, m := range msgs {
		if m.Topic != Topic || m.Partition != msgs[0].Partition || (i > 0 && m.Offset <= msgs[i-1].Offset) {
			r.errs = append(r.errs, fmt.Sprintf("batch of %s/%d: message of %s/%d at offset %d after offset %d",
				msgs[0].Topic, msgs[0].Partition, m.Topic, m.Partition, m.Offset, msgs[max(i-1, 0)].Offset))
		}
		key, seq, _ := strings.Cut(string(m.Value), ":")
		s, err := strconv.Atoi(seq)
		if err != nil || key != string(m.Key) {
			r.errs = append(r.errs, fmt.Sprintf("message with key %q and value %q", m.Key, m.Value))
			continue
		}
		due, ok := r.next[string(m.Key)]
		if !ok {
			due = r.start
		}
		if s != due {
			r.errs = append(r.errs, fmt.Sprintf("key %s: got #%d at offset %d, want #%d", m.Key, s, m.Offset, due))
		}
		r.next[string(m.Key)] = s + 1
		r.count[string(m.Value)]++
		r.offsets[string(m.Value)] = m.Offset
	}
	close(r.changed)
	r.changed = make(chan struct{})
}

func (r *recorder) offset(v string) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.offsets[v]
}

// awaitAll waits until messages from through to-1 of keys keys were
// handled at least once; it fails at once when a batch showed an error.
func (r *recorder) awaitAll(t *testing.T, keys, from, to int) {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	for {
		r.mu.Lock()
		missing := ""
		for s := from; s < to && missing == ""; s++ {
			for k := range keys {
				if r.count[value(k, s)] == 0 {
					missing = value(k, s)
					break
				}
			}
		}
		changed, errs := r.changed, slices.Clone(r.errs)
		r.mu.Unlock()
		if len(errs) > 0 { // no need to wait for the rest: a message came twice or out of order
			t.Fatalf("waiting for #%d to #%d of %d keys: %v", from, to-1, keys, errs[:min(len(errs), 10)])
		}
		if missing == "" {
			return
		}
		select {
		case <-changed:
		case <-timer.C:
			r.mu.Lock()
			defer r.mu.Unlock()
			t.Fatalf("message %s not handled within %v (%d distinct handled)", missing, waitLimit, len(r.count))
		}
	}
}

// check reports the errors seen in batches, and any message that was not
// handled exactly once: those from through to-1 of keys keys, and no
// other.
func (r *recorder) check(t *testing.T, keys, from, to int) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, e := range r.errs {
		if i == 10 {
			t.Errorf("... and %d more", len(r.errs)-10)
			break
		}
		t.Error(e)
	}
	want := map[string]bool{}
	for s := from; s < to; s++ {
		for k := range keys {
			want[value(k, s)] = true
		}
	}
	var missing, twice, extra []string
	for v := range want {
		switch n := r.count[v]; {
		case n == 0:
			missing = append(missing, v)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s ×%d", v, n))
		}
	}
	for v := range r.count {
		if !want[v] {
			extra = append(extra, v)
		}
	}
	for _, l := range []struct {
		what string
		vs   []string
	}{{"never handled", missing}, {"handled more than once", twice}, {"handled, not expected", extra}} {
		if len(l.vs) > 0 {
			slices.Sort(l.vs)
			t.Errorf("%d messages %s: %v", len(l.vs), l.what, l.vs[:min(len(l.vs), 10)])
		}
	}
}
