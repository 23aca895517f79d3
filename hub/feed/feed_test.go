package feed_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/feed"
)

// typeIs takes events of one type.
type typeIs string

func (t typeIs) Match(env *event.Envelope) bool {
	return env.Event != nil && env.Event.EventType == string(t)
}

func eventMsg(t testing.TB, org, env, vehicle, typ, id string, at time.Time) hub.Message {
	t.Helper()
	ev := &event.Event{EventID: id, EventType: typ, Category: "safety_events", Severity: "low", Priority: "low", Timestamp: at,
		Source: event.Source{VehicleID: vehicle}}
	b, err := event.Marshal(&event.Envelope{Org: org, Env: env, Kind: event.KindEvent, Event: ev, IngestedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	return hub.Message{Topic: hub.TopicEvents, Key: []byte(vehicle), Value: b, Time: at}
}

func publish(t testing.TB, b hub.Bus, msgs ...hub.Message) {
	t.Helper()
	if err := b.Publish(context.Background(), msgs...); err != nil {
		t.Fatal(err)
	}
}

func ids(es []feed.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.Message.Event.EventID
	}
	return out
}

func TestPullIsTheTenantsOwnOldestFirstAndContinues(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 4})
	t.Cleanup(func() { b.Close(context.Background()) })
	base := time.Now().Add(-time.Minute)
	var want []string
	for i := range 30 {
		at := base.Add(time.Duration(i) * time.Millisecond)
		v := fmt.Sprintf("veh-%d", i%5)
		publish(t, b, eventMsg(t, "org-a", "live", v, "harsh_braking", fmt.Sprintf("a%02d", i), at),
			eventMsg(t, "org-b", "live", v, "harsh_braking", fmt.Sprintf("b%02d", i), at),
			eventMsg(t, "org-a", "test", v, "harsh_braking", fmt.Sprintf("t%02d", i), at),
			eventMsg(t, "org-a", "live", v, "speeding", fmt.Sprintf("s%02d", i), at))
		want = append(want, fmt.Sprintf("a%02d", i))
	}
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 12, Match: typeIs("harsh_braking")}
	var got []string
	for range 10 {
		page, err := f.Pull(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(page.Entries)...)
		if len(page.Entries) == q.Limit && page.Entries[len(page.Entries)-1].Cursor != page.Next {
			t.Fatalf("next_cursor %q is not the last entry's %q", page.Next, page.Entries[len(page.Entries)-1].Cursor)
		}
		q.After = page.Next
		if len(page.Entries) == 0 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages gave %v, want %v", got, want)
	}
	// resuming from any entry's cursor gives what follows it
	q.After, q.Limit = "", 1000
	page, err := f.Pull(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	q.After = page.Entries[9].Cursor
	rest, err := f.Pull(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(rest.Entries)) != fmt.Sprint(want[10:]) {
		t.Fatalf("after the 10th entry: %v, want %v", ids(rest.Entries), want[10:])
	}
}

func TestPullWaitsForANewMessageAndNowSkipsHistory(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 4})
	t.Cleanup(func() { b.Close(context.Background()) })
	publish(t, b, eventMsg(t, "org-a", "live", "v1", "harsh_braking", "old", time.Now()))
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents, hub.TopicTelemetry}, Limit: 10, After: "now", Wait: 20 * time.Second}
	// the position is fixed before anything is published
	pos, err := f.Start(context.Background(), &q)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan feed.Page, 1)
	errc := make(chan error, 1)
	go func() {
		p, err := f.PullFrom(context.Background(), q, pos)
		errc <- err
		got <- p
	}()
	// a message of another tenant does not end the wait with nothing
	publish(t, b, eventMsg(t, "org-b", "live", "v1", "harsh_braking", "other", time.Now()))
	publish(t, b, eventMsg(t, "org-a", "live", "v2", "harsh_braking", "new", time.Now()))
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	p := <-got
	if fmt.Sprint(ids(p.Entries)) != "[new]" {
		t.Fatalf("waited pull gave %v, want [new]", ids(p.Entries))
	}
}

func TestExpiredCursorIsRefusedWithTheFirstAvailable(t *testing.T) {
	// in memory, MemBytes is the retention
	b := embedbus.New(embedbus.Config{Partitions: 1, MemBytes: 4000})
	t.Cleanup(func() { b.Close(context.Background()) })
	publish(t, b, eventMsg(t, "org-a", "live", "v1", "x", "e1", time.Now()), eventMsg(t, "org-a", "live", "v1", "x", "e2", time.Now()))
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 1}
	page, err := f.Pull(context.Background(), q)
	if err != nil || fmt.Sprint(ids(page.Entries)) != "[e1]" {
		t.Fatalf("first pull: %v, %v", ids(page.Entries), err)
	}
	// newer messages push e2 out
	for i := range 40 {
		publish(t, b, eventMsg(t, "org-a", "live", "v1", "x", fmt.Sprintf("n%02d", i), time.Now()))
	}
	q.After = page.Next
	_, err = f.Pull(context.Background(), q)
	var ee *feed.ExpiredError
	if !errors.As(err, &ee) || !errors.Is(err, feed.ErrExpired) {
		t.Fatalf("stale cursor: %v, want an ExpiredError", err)
	}
	q.After, q.Limit = ee.FirstAvailable, 100
	page, err = f.Pull(context.Background(), q)
	if err != nil || len(page.Entries) == 0 || page.Entries[len(page.Entries)-1].Message.Event.EventID != "n39" {
		t.Fatalf("from first_available: %v, %v; want the retained ones up to n39", ids(page.Entries), err)
	}
	q.After = ""
	oldest, err := f.Pull(context.Background(), q)
	if err != nil || fmt.Sprint(ids(oldest.Entries)) != fmt.Sprint(ids(page.Entries)) {
		t.Fatalf("first_available gave %v, the oldest retained are %v (%v)", ids(page.Entries), ids(oldest.Entries), err)
	}
}

// A reader whose position retention passes while it reads gets the
// ExpiredError from its next read, not the messages after the cut.
func TestRetentionPassingAReaderIsReported(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 1, MemBytes: 4000})
	t.Cleanup(func() { b.Close(context.Background()) })
	publish(t, b, eventMsg(t, "org-a", "live", "v1", "x", "e1", time.Now()))
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 10}
	pos, err := f.Start(context.Background(), &q)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		publish(t, b, eventMsg(t, "org-a", "live", "v1", "x", fmt.Sprintf("n%02d", i), time.Now()))
	}
	_, err = f.PullFrom(context.Background(), q, pos)
	var ee *feed.ExpiredError
	if !errors.As(err, &ee) || ee.FirstAvailable == "" {
		t.Fatalf("a read past the cut: %v, want an ExpiredError", err)
	}
}

func TestBadCursorsAreRefused(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { b.Close(context.Background()) })
	f := feed.New(b)
	ev := feed.Query{Org: "o", Env: "e", Topics: []string{hub.TopicEvents}, Limit: 1}
	p, err := f.Pull(context.Background(), ev)
	if err != nil {
		t.Fatal(err)
	}
	both := ev
	both.Topics = []string{hub.TopicEvents, hub.TopicTelemetry}
	for _, c := range []struct {
		q     feed.Query
		after string
	}{{ev, "x"}, {ev, "AQ"}, {ev, "!!"}, {both, p.Next}} {
		c.q.After = c.after
		if _, err := f.Pull(context.Background(), c.q); !errors.Is(err, feed.ErrBadCursor) {
			t.Errorf("after %q: %v, want ErrBadCursor", c.after, err)
		}
	}
}

func FuzzParseCursor(f *testing.F) {
	f.Add("AQ")
	f.Add(feed.Position{hub.TopicEvents: {1, 2, 3}}.Cursor([]string{hub.TopicEvents}))
	f.Fuzz(func(t *testing.T, s string) {
		p, err := feed.ParseCursor(s)
		if err != nil {
			return
		}
		topics := make([]string, 0, len(p))
		for k := range p {
			topics = append(topics, k)
		}
		if q, err := feed.ParseCursor(p.Cursor(topics)); err != nil || fmt.Sprint(q) != fmt.Sprint(p) {
			t.Fatalf("%q: round trip gave %v, %v", s, q, err)
		}
	})
}
