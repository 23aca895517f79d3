package feed_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/feed"
	"github.com/fleethub/fleethub/hub/kafkabus"
)

// TestPullOverKafka reads the feed from an in-process Kafka: Kafka's
// offsets start at 0, its ends come from ListOffsets and a waiting pull
// wakes from the shared poll of the ends.
func TestPullOverKafka(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	b, err := kafkabus.New(ctx, kafkabus.Config{Brokers: c.ListenAddrs(), Partitions: 4}, []string{hub.TopicEvents, hub.TopicTelemetry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	var want []string
	for i := range 20 {
		at := time.Now()
		publish(t, b, eventMsg(t, "org-a", "live", fmt.Sprintf("veh-%d", i%5), "harsh_braking", fmt.Sprintf("a%02d", i), at),
			eventMsg(t, "org-b", "live", "veh-0", "harsh_braking", fmt.Sprintf("b%02d", i), at))
		want = append(want, fmt.Sprintf("a%02d", i))
	}
	f := feed.New(b)
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents, hub.TopicTelemetry}, Limit: 8}
	var got []string
	for range 5 {
		p, err := f.Pull(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ids(p.Entries)...)
		q.After = p.Next
	}
	// per vehicle (a partition's key) the order holds; across them the bus time orders
	if fmt.Sprint(sortedCopy(got)) != fmt.Sprint(want) || len(got) != len(want) {
		t.Fatalf("pages gave %v, want each of %v once", got, want)
	}
	q.Wait = 15 * time.Second
	done := make(chan feed.Page, 1)
	go func() {
		p, _ := f.Pull(ctx, q)
		done <- p
	}()
	publish(t, b, eventMsg(t, "org-a", "live", "veh-9", "harsh_braking", "late", time.Now()))
	if p := <-done; fmt.Sprint(ids(p.Entries)) != "[late]" {
		t.Fatalf("waited pull gave %v", ids(p.Entries))
	}
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
