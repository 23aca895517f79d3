package feed_test

import (
	"context"
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/feed"
)

// BenchmarkPullFiltered1000Of100k pulls 1,000 entries with a filter
// (a category and two severities, one organization of two) from the start of an
// embedded bus holding 100,000 events, as the feed's pull does: cold (a
// new Feed each pull, every message decoded) and shared (one Feed, the
// messages decoded by the previous pull). Besides
// the mean it reports the 99th percentile of one pull's wall time and the
// process's CPU time per pull (user and system, the garbage collector's
// included), which a busy machine stretches less than wall time.
//
//	go test -run '^$' -bench PullFiltered -benchtime 100x ./hub/feed/
func BenchmarkPullFiltered1000Of100k(b *testing.B) {
	bus := embedbus.New(embedbus.Config{Partitions: 8, MemBytes: 1 << 30})
	b.Cleanup(func() { bus.Close(context.Background()) })
	base := time.Now().Add(-time.Hour)
	batch := make([]hub.Message, 0, 1000)
	for i := range 100_000 {
		org := "org-a"
		if i%2 == 1 {
			org = "org-b"
		}
		m := eventMsg(b, org, "live", fmt.Sprintf("veh-%d", i%500), "harsh_braking", fmt.Sprint(i), base.Add(time.Duration(i)*time.Microsecond))
		batch = append(batch, m)
		if len(batch) == cap(batch) {
			publish(b, bus, batch...)
			batch = batch[:0]
		}
	}
	prog, err := expr.Compile(expr.Spec{Kind: expr.KindEvent, Categories: []string{"safety_events"}, Severities: []string{"low", "high"}})
	if err != nil {
		b.Fatal(err)
	}
	q := feed.Query{Org: "org-a", Env: "live", Topics: []string{hub.TopicEvents}, Limit: 1000, Match: prog}
	// cold: the first reader of these messages decodes every one; shared:
	// another reader of the feed has just read them (a page read by
	// several readers, live readers at the head), so they are decoded
	// already
	b.Run("cold", func(b *testing.B) { pullBench(b, func() *feed.Feed { return feed.New(bus) }, q) })
	shared := feed.New(bus)
	b.Run("shared", func(b *testing.B) { pullBench(b, func() *feed.Feed { return shared }, q) })
}

func pullBench(b *testing.B, feedOf func() *feed.Feed, q feed.Query) {
	b.ReportAllocs()
	var took []time.Duration
	cpu0 := cpuTime(b)
	for b.Loop() {
		f := feedOf()
		start := time.Now()
		p, err := f.Pull(context.Background(), q)
		took = append(took, time.Since(start))
		if err != nil || len(p.Entries) != 1000 {
			b.Fatalf("%d entries, %v", len(p.Entries), err)
		}
	}
	cpu := cpuTime(b) - cpu0
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "p99-µs/pull")
	b.ReportMetric(float64(cpu.Microseconds())/float64(len(took)), "cpu-µs/pull")
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
