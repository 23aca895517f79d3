package feed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// fakeConn records what an event stream writes; while gate is open it
// blocks every write, as a client that stopped reading does once its
// socket buffers are full.
type fakeConn struct {
	net.Conn
	mu     sync.Mutex // guards buf, closed
	buf    bytes.Buffer
	closed bool
	gate   chan struct{} // nil: writes pass
	pause  func()        // nil, or a slow reader's pause before each write
}

func (c *fakeConn) Write(b []byte) (int, error) {
	if c.gate != nil {
		<-c.gate
	}
	if c.pause != nil {
		c.pause()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return 0, net.ErrClosed
	}
	return c.buf.Write(b)
}

func (c *fakeConn) SetWriteDeadline(time.Time) error { return nil }

func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

// sent is a chunked event stream's entries so far: their cursors and
// event ids, in order.
type sent struct{ cursors, ids []string }

func (c *fakeConn) entries(t *testing.T) sent {
	t.Helper()
	c.mu.Lock()
	raw := append([]byte(nil), c.buf.Bytes()...)
	c.mu.Unlock()
	var body []byte
	for len(raw) > 0 {
		i := bytes.Index(raw, []byte("\r\n"))
		if i < 0 {
			break // a chunk being written (a vectored write comes part by part)
		}
		n, err := strconv.ParseInt(string(raw[:i]), 16, 64)
		if err != nil {
			t.Fatalf("chunk size %q: %v", raw[:i], err)
		}
		if len(raw) < i+2+int(n)+2 {
			break
		}
		body = append(body, raw[i+2:i+2+int(n)]...)
		raw = raw[i+2+int(n)+2:]
	}
	var s sent
	for _, ev := range bytes.Split(body, []byte("\n\n")) {
		var id string
		for _, line := range bytes.Split(ev, []byte("\n")) {
			switch {
			case bytes.HasPrefix(line, []byte("id: ")):
				id = string(line[4:])
			case bytes.HasPrefix(line, []byte("data: ")):
				var e struct {
					Cursor  string
					Message struct {
						EventID string `json:"event_id"`
					}
				}
				if err := json.Unmarshal(line[6:], &e); err != nil {
					t.Fatalf("data %s: %v", line, err)
				}
				if e.Cursor != id {
					t.Fatalf("id %s, cursor %s in the data", id, e.Cursor)
				}
				s.cursors, s.ids = append(s.cursors, id), append(s.ids, e.Message.EventID)
			}
		}
	}
	return s
}

type tailRig struct {
	t   *testing.T
	bus *embedbus.Bus
	h   *Handlers
	q   feed.Query
	n   int // events published
	// followed counts the streams started: every other one writes as on
	// a TCP connection (net.Buffers, which a fake connection gets as
	// one Write per part), the others as on TLS (one buffer)
	followed int
}

func newTailRig(t *testing.T, entries int) *tailRig {
	bus := embedbus.New(embedbus.Config{Partitions: 4})
	h := New(Config{TailEntries: entries, Heartbeat: time.Hour}, feed.New(bus), nil, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := h.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		bus.Close(context.Background())
	})
	q, _, err := parseParams("org-a", "test", map[string][]string{"severity": {"high", "low"}}, readEvents)
	if err != nil {
		t.Fatal(err)
	}
	return &tailRig{t: t, bus: bus, h: h, q: q}
}

// publish appends n events of the organization, over several vehicles
// (so over several partitions), with another tenant's between them.
func (r *tailRig) publish(n int) {
	for range n {
		r.event(r.n)
		r.n++
	}
}

// event publishes event n of the organization, after another tenant's.
func (r *tailRig) event(n int) {
	for _, org := range []string{"org-b", "org-a"} {
		id := fmt.Sprintf("e%d", n)
		v := fmt.Sprintf("v%d", vehicleOf(n))
		ev := &event.Event{EventID: id, EventType: "harsh_braking", Category: "safety_events", Severity: "high", Priority: "low", Source: event.Source{VehicleID: v}}
		b, err := event.Marshal(&event.Envelope{Org: org, Env: "test", Kind: event.KindEvent, Event: ev})
		if err != nil {
			r.t.Error(err)
			return
		}
		if err := r.bus.Publish(context.Background(), hub.Message{Topic: hub.TopicEvents, Key: []byte(v), Value: b}); err != nil {
			r.t.Error(err)
		}
	}
}

// follow starts an event stream after cursor ("now": the head).
func (r *tailRig) follow(after string, conn *fakeConn) (*fakeConn, *client) {
	q := r.q
	q.After = after
	pos, err := r.h.feed.Start(context.Background(), &q)
	if err != nil {
		r.t.Fatal(err)
	}
	if !r.h.begin() {
		r.t.Fatal("shut down")
	}
	args := map[string][]string{"severity": {"low", "high", "low"}} // the same filter, written otherwise
	cl := r.h.newClient(context.Background(), nil, q, tailKey(q, args), pos.Cursor(q.Topics), true)
	cl.conn = conn
	cl.out.vectored = r.followed%2 == 0
	r.followed++
	go cl.run()
	return conn, cl
}

// checkOnceInOrder fails unless got holds every id of want once, and
// each vehicle's (each partition's) in the order published: the feed
// orders by partition, and across partitions by what each read saw.
func checkOnceInOrder(t *testing.T, who string, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s got %d entries, want %d: %v", who, len(got), len(want), got)
	}
	seen := map[string]bool{}
	last := map[int]int{}
	for _, id := range got {
		if seen[id] {
			t.Fatalf("%s got %s twice: %v", who, id, got)
		}
		seen[id] = true
		n, err := strconv.Atoi(id[1:])
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := last[vehicleOf(n)]; ok && prev > n {
			t.Fatalf("%s got e%d after e%d of the same vehicle: %v", who, n, prev, got)
		}
		last[vehicleOf(n)] = n
	}
	for _, id := range want {
		if !seen[id] {
			t.Fatalf("%s never got %s: %v", who, id, got)
		}
	}
}

// vehicleOf is the vehicle of event n: even ones on v0-v3, odd ones on
// v4-v6, so that two publishers, one of each, keep each vehicle's order.
func vehicleOf(n int) int {
	if n%2 == 0 {
		return n / 2 % 4
	}
	return 4 + n/2%3
}

func wantIDs(from, to int) []string {
	var ids []string
	for i := from; i < to; i++ {
		ids = append(ids, fmt.Sprintf("e%d", i))
	}
	return ids
}

// Clients of one filter share one tail: each gets every entry once and
// in order; a client that stops reading does not hold the others back,
// and once it reads again it gets everything it missed, by its own pull
// from its cursor, then joins again. A client resuming from an old cursor
// pulls up to the head and then joins.
func TestTailClientsGetEveryEntryOnceInOrder(t *testing.T) {
	r := newTailRig(t, 8) // a ring of 8: the stopped client falls out of it
	slowGate := make(chan struct{})
	var fast []*fakeConn
	for range 3 {
		conn, _ := r.follow("now", &fakeConn{})
		fast = append(fast, conn)
	}
	slow, slowClient := r.follow("now", &fakeConn{gate: slowGate})
	ok := waitfor.Poll(5*time.Second, func() bool {
		r.h.tmu.Lock()
		defer r.h.tmu.Unlock()
		if len(r.h.tails) != 1 {
			return false
		}
		for _, tl := range r.h.tails {
			tl.mu.Lock()
			defer tl.mu.Unlock()
			return len(tl.clients) == 4
		}
		return false
	})
	if !ok {
		t.Fatal("the four clients did not join one tail")
	}

	r.publish(300)
	all := wantIDs(0, 300)
	for i, c := range fast {
		if !waitfor.Poll(10*time.Second, func() bool { return len(c.entries(t).ids) >= len(all) }) {
			t.Fatalf("fast client %d got %d of %d entries while another client did not read", i, len(c.entries(t).ids), len(all))
		}
	}
	if slowClient.t.Load() != nil && len(slow.entries(t).ids) != 0 {
		t.Fatal("the stopped client wrote")
	}
	close(slowGate)
	if !waitfor.Poll(10*time.Second, func() bool { return len(slow.entries(t).ids) >= len(all) }) {
		t.Fatalf("the slow client got %d of %d entries", len(slow.entries(t).ids), len(all))
	}
	// it rejoins the tail once it caught up, and all four get what follows
	if !waitfor.Poll(5*time.Second, func() bool { return slowClient.t.Load() != nil }) {
		t.Fatal("the slow client did not join the tail again")
	}
	first := fast[0].entries(t)
	resumed, _ := r.follow(first.cursors[99], &fakeConn{}) // from the 100th entry's cursor
	r.publish(20)
	all = wantIDs(0, 320)
	for i, c := range append(fast, slow) {
		if !waitfor.Poll(10*time.Second, func() bool { return len(c.entries(t).ids) >= len(all) }) {
			t.Fatalf("client %d got %d of %d entries", i, len(c.entries(t).ids), len(all))
		}
		got := c.entries(t)
		checkOnceInOrder(t, fmt.Sprint("client ", i), got.ids, all)
		// its last cursor is where the feed continues: nothing after it
		page, err := r.h.feed.Pull(context.Background(), feed.Query{Org: "org-a", Env: "test", Topics: r.q.Topics, Match: r.q.Match, After: got.cursors[len(got.cursors)-1], Limit: 10})
		if err != nil || len(page.Entries) != 0 {
			t.Fatalf("client %d: a pull after its last cursor: %d entries, %v", i, len(page.Entries), err)
		}
	}
	if !waitfor.Poll(10*time.Second, func() bool { return len(resumed.entries(t).ids) >= 220 }) {
		t.Fatalf("the resumed client got %d of 220 entries", len(resumed.entries(t).ids))
	}
	checkOnceInOrder(t, "the resumed client", resumed.entries(t).ids, wantIDs(100, 320))
}

// A seeded random workload: clients that read at different paces (some
// stall for a while on a write, so they fall out of a small ring, pull on
// their own and join again, often while the tail is in the middle of a
// read), clients that start from a cursor in the middle, and two
// publishers at once. Every client must get what a single pull of the
// feed from its start gets, once, each vehicle's in order.
func TestTailRandomWorkload(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			rng := rand.New(rand.NewSource(seed))
			r := newTailRig(t, 16)
			type follower struct {
				conn  *fakeConn
				start string
			}
			var fs []follower
			add := func() {
				// where it starts: a pull of the feed so far tells the cursor
				start := "now"
				if rng.Intn(2) == 0 {
					page, err := r.h.feed.Pull(context.Background(), feed.Query{Org: "org-a", Env: "test", Topics: r.q.Topics, Match: r.q.Match, Limit: 1 + rng.Intn(feed.MaxLimit)})
					if err != nil {
						t.Fatal(err)
					}
					start = page.Next
				}
				q := r.q
				q.After = start
				pos, err := r.h.feed.Start(context.Background(), &q)
				if err != nil {
					t.Fatal(err)
				}
				start = pos.Cursor(q.Topics)
				conn := &fakeConn{}
				if stall := rng.Intn(3); stall > 0 {
					prng := rand.New(rand.NewSource(rng.Int63()))
					var mu sync.Mutex
					conn.pause = func() {
						mu.Lock()
						d := time.Duration(prng.Intn(stall*2000)) * time.Microsecond
						mu.Unlock()
						time.Sleep(d) // a reader this slow, not a wait for anything
					}
				}
				r.follow(start, conn)
				fs = append(fs, follower{conn, start})
			}
			for range 4 {
				add()
			}
			var wg sync.WaitGroup
			const perPublisher = 300
			for p := range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range perPublisher {
						r.event(2*i + p)
					}
				}()
			}
			for range 3 {
				add() // while the publishers run
			}
			wg.Wait()
			for i, f := range fs {
				page, err := r.h.feed.Pull(context.Background(), feed.Query{Org: "org-a", Env: "test", Topics: r.q.Topics, Match: r.q.Match, After: f.start, Limit: feed.MaxLimit})
				if err != nil {
					t.Fatal(err)
				}
				var want []string
				for _, e := range page.Entries {
					want = append(want, e.Message.Event.EventID)
				}
				if !waitfor.Poll(20*time.Second, func() bool { return len(f.conn.entries(t).ids) >= len(want) }) {
					t.Fatalf("client %d got %d of %d entries", i, len(f.conn.entries(t).ids), len(want))
				}
				got := f.conn.entries(t)
				checkOnceInOrder(t, fmt.Sprint("client ", i), got.ids, want)
				if len(got.cursors) == 0 {
					continue
				}
				page, err = r.h.feed.Pull(context.Background(), feed.Query{Org: "org-a", Env: "test", Topics: r.q.Topics, Match: r.q.Match, After: got.cursors[len(got.cursors)-1], Limit: 10})
				if err != nil || len(page.Entries) != 0 {
					t.Fatalf("client %d: a pull after its last cursor: %d entries, %v", i, len(page.Entries), err)
				}
			}
		})
	}
}

// A client joins a tail while it has read further than the tail in one
// partition and not in another (it pulled on its own while the tail was
// in the middle of a read): it skips what it sent already, and the
// entries it gets before the tail passes its position carry a cursor past
// both, so that resuming from any of them repeats nothing and skips
// nothing. The tail's reads are made here one entry at a time.
func TestTailJoinAheadInOnePartition(t *testing.T) {
	for _, vectored := range []bool{false, true} {
		t.Run(fmt.Sprint("vectored ", vectored), func(t *testing.T) { testTailJoinAhead(t, vectored) })
	}
}

func testTailJoinAhead(t *testing.T, vectored bool) {
	ctx := context.Background()
	r := newTailRig(t, 64)
	q := r.q
	q.After = "now"
	head, err := r.h.feed.Start(ctx, &q)
	if err != nil {
		t.Fatal(err)
	}
	r.publish(20)
	all, err := r.h.feed.PullFrom(ctx, feed.Query{Org: "org-a", Env: "test", Topics: q.Topics, Match: q.Match, Limit: 100}, head.Clone())
	if err != nil || len(all.Entries) != 20 {
		t.Fatalf("%d entries, %v", len(all.Entries), err)
	}
	// y: the first entry of another partition than the first entry's
	first := all.Entries[0]
	var y feed.Entry
	for _, e := range all.Entries {
		if e.Partition != first.Partition {
			y = e
			break
		}
	}
	if y.Cursor == "" {
		t.Fatal("every entry in one partition")
	}
	topic := q.Topics[0]
	p := head.Clone()
	p[topic][y.Partition] = y.Offset + 1 // the client sent y (and what its partition held before it)
	var want []feed.Entry
	for _, e := range all.Entries {
		if e.Partition != y.Partition || e.Offset > y.Offset {
			want = append(want, e)
		}
	}

	tl := r.h.newTail("k", q, head.Clone()) // not run: the test reads for it
	conn := &fakeConn{}
	cl := r.h.newClient(ctx, nil, q, "k", p.Cursor(q.Topics), true)
	cl.conn = conn
	cl.out.vectored = vectored
	if ok, stopped := tl.add(cl, p); !ok || stopped {
		t.Fatalf("join: %v, stopped %v", ok, stopped)
	}
	if cl.skip == nil {
		t.Fatal("joined ahead of the tail with nothing to skip")
	}
	pos := head.Clone()
	read := q
	read.Limit = 1
	sc := &scratch{}
	for range all.Entries {
		page, err := r.h.feed.PullFrom(ctx, read, pos)
		if err != nil {
			t.Fatal(err)
		}
		items, err := encodeItems(nil, page.Entries)
		if err != nil {
			t.Fatal(err)
		}
		tl.publish(items, pos.Clone(), false, nil)
		var beat bool
		var turn int
		sc.items, beat, turn = tl.take(cl, sc.items[:0])
		if turn != turnSend {
			t.Fatalf("turn %d", turn)
		}
		if err := cl.send(sc, beat); err != nil {
			t.Fatal(err)
		}
	}
	got := conn.entries(t)
	var ids []string
	for _, e := range want {
		ids = append(ids, e.Message.Event.EventID)
	}
	if fmt.Sprint(got.ids) != fmt.Sprint(ids) {
		t.Fatalf("got %v, want %v", got.ids, ids)
	}
	if got.cursors[0] == want[0].Cursor {
		t.Fatal("the first entry's cursor is the tail's, behind what the client sent")
	}
	// resuming after any entry gets exactly the client's remaining ones
	for k, c := range got.cursors {
		page, err := r.h.feed.Pull(ctx, feed.Query{Org: "org-a", Env: "test", Topics: q.Topics, Match: q.Match, After: c, Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var rest []string
		for _, e := range page.Entries {
			rest = append(rest, e.Message.Event.EventID)
		}
		if fmt.Sprint(rest) != fmt.Sprint(ids[k+1:]) {
			t.Fatalf("after entry %d: %v, want %v", k, rest, ids[k+1:])
		}
	}
	if cl.skip != nil {
		t.Fatal("the tail passed the client's position and it still skips")
	}
}

// Event streams share a tail when their filter is the same however it is
// written, and only then.
func TestTailKey(t *testing.T) {
	ev := feed.Query{Org: "o", Env: "e", Topics: []string{hub.TopicEvents}}
	both := feed.Query{Org: "o", Env: "e", Topics: []string{hub.TopicEvents, hub.TopicTelemetry}}
	bothRev := feed.Query{Org: "o", Env: "e", Topics: []string{hub.TopicTelemetry, hub.TopicEvents}}
	other := feed.Query{Org: "o2", Env: "e", Topics: []string{hub.TopicEvents}}
	base := map[string][]string{"severity": {"high", "low"}, "vehicle_id": {"v1"}}
	for _, c := range []struct {
		name string
		q    feed.Query
		args map[string][]string
		same bool
	}{
		{"values in another order, repeated, with after, limit and wait", ev, map[string][]string{"vehicle_id": {"v1"}, "severity": {"low", "high", "low"}, "after": {"now"}, "limit": {"5"}, "wait": {"1"}}, true},
		{"another value", ev, map[string][]string{"severity": {"high"}, "vehicle_id": {"v1"}}, false},
		{"a value moved to another parameter", ev, map[string][]string{"severity": {"high", "low", "v1"}}, false},
		{"another organization", other, base, false},
		{"more types", both, base, false},
	} {
		if got := tailKey(c.q, c.args) == tailKey(ev, base); got != c.same {
			t.Errorf("%s: same tail %v, want %v", c.name, got, c.same)
		}
	}
	if tailKey(both, base) == tailKey(bothRev, base) {
		t.Error("types in another order make other cursors: they cannot share a tail")
	}
}
