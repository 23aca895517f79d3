package bustest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// value is the value of message number seq of key number key.
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
