package feed_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/feed"
)

// Readers pulling the same messages at once share their decoded
// envelopes and each gets every message of its tenant once, in order.
func TestConcurrentReadersShareDecodedMessages(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 4})
	t.Cleanup(func() { b.Close(context.Background()) })
	base := time.Now().Add(-time.Minute)
	var want []string
	for i := range 200 {
		at := base.Add(time.Duration(i) * time.Millisecond)
		publish(t, b, eventMsg(t, "org-a", "live", fmt.Sprintf("veh-%d", i%7), "harsh_braking", fmt.Sprintf("a%03d", i), at),
			eventMsg(t, "org-b", "live", "veh-0", "harsh_braking", fmt.Sprintf("b%03d", i), at))
		want = append(want, fmt.Sprintf("a%03d", i))
	}
	f := feed.New(b)
	var wg sync.WaitGroup
	got := make([][]feed.Entry, 6)
	for r := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 30 + r}
			for {
				p, err := f.Pull(context.Background(), q)
				if err != nil {
					t.Error(err)
					return
				}
				if len(p.Entries) == 0 {
					return
				}
				got[r] = append(got[r], p.Entries...)
				q.After = p.Next
			}
		}()
	}
	wg.Wait()
	for r, es := range got {
		if fmt.Sprint(ids(es)) != fmt.Sprint(want) {
			t.Fatalf("reader %d got %v", r, ids(es))
		}
	}
	// a later reader of the same page gets the envelopes already decoded
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 10}
	p1, err1 := f.Pull(context.Background(), q)
	p2, err2 := f.Pull(context.Background(), q)
	if err1 != nil || err2 != nil || p1.Entries[0].Message != p2.Entries[0].Message {
		t.Fatalf("a page read twice was decoded twice (%v, %v)", err1, err2)
	}
}

// Readers of the same message share its JSON: encoded once, the bytes
// encoding/json gives for the event.
func TestReadersShareTheMessagesJSON(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 2})
	t.Cleanup(func() { b.Close(context.Background()) })
	base := time.Now().Add(-time.Minute)
	for i := range 20 {
		publish(t, b, eventMsg(t, "org-a", "live", "veh-1", "harsh_braking", fmt.Sprintf("a%03d<&>", i), base.Add(time.Duration(i)*time.Millisecond)))
	}
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 20}
	p1, err1 := f.Pull(context.Background(), q)
	p2, err2 := f.Pull(context.Background(), q)
	if err1 != nil || err2 != nil || len(p1.Entries) != 20 || len(p2.Entries) != 20 {
		t.Fatalf("pulls: %v %v", err1, err2)
	}
	for i := range p1.Entries {
		j1, err1 := p1.Entries[i].MessageJSON()
		j2, err2 := p2.Entries[i].MessageJSON()
		if err1 != nil || err2 != nil {
			t.Fatalf("encode: %v %v", err1, err2)
		}
		want, err := json.Marshal(p1.Entries[i].Message.Event)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(j1, want) || !bytes.Equal(j2, want) {
			t.Fatalf("entry %d: %s, want %s", i, j1, want)
		}
		if &j1[0] != &j2[0] {
			t.Fatalf("entry %d was encoded once per reader", i)
		}
	}
	// an entry made by hand is encoded on its own
	e := feed.Entry{Message: p1.Entries[0].Message}
	if j, err := e.MessageJSON(); err != nil || string(j) != string(must(p1.Entries[0].MessageJSON())) {
		t.Fatalf("an entry of no feed: %s %v", j, err)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
