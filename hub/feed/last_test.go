package feed_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/feed"
)

// TestLastIsTheNewestAndContinues: the newest n entries of the tenant
// the filter takes, oldest first, across partitions; a filter that takes
// few messages far back still finds them; continuing from Next gives
// what comes after with no gap and no duplicate.
func TestLastIsTheNewestAndContinues(t *testing.T) {
	b := embedbus.New(embedbus.Config{Partitions: 4})
	t.Cleanup(func() { b.Close(context.Background()) })
	base := time.Now().Add(-time.Minute)
	var want []string
	at := func(i int) time.Time { return base.Add(time.Duration(i) * time.Millisecond) }
	for i := range 3 { // rare ones, far back
		publish(t, b, eventMsg(t, "org-a", "live", "v0", "emergency", fmt.Sprintf("e%d", i), at(i)))
	}
	for i := range 2000 {
		v := fmt.Sprintf("veh-%d", i%7)
		publish(t, b, eventMsg(t, "org-a", "live", v, "harsh_braking", fmt.Sprintf("a%04d", i), at(10+i)),
			eventMsg(t, "org-b", "live", v, "harsh_braking", fmt.Sprintf("b%04d", i), at(10+i)))
		want = append(want, fmt.Sprintf("a%04d", i))
	}
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Match: typeIs("harsh_braking")}
	page, err := f.Last(context.Background(), q, 100)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(page.Entries)) != fmt.Sprint(want[len(want)-100:]) {
		t.Fatalf("last 100: %v", ids(page.Entries))
	}

	rare, err := f.Last(context.Background(), feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Match: typeIs("emergency")}, 5)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(rare.Entries)) != "[e0 e1 e2]" {
		t.Fatalf("a rare type's last 5: %v, want [e0 e1 e2]", ids(rare.Entries))
	}

	publish(t, b, eventMsg(t, "org-a", "live", "v1", "harsh_braking", "new", time.Now()))
	q.After, q.Limit = page.Next, 100
	next, err := f.Pull(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(ids(next.Entries)) != "[new]" {
		t.Fatalf("after last: %v, want [new]", ids(next.Entries))
	}
}
