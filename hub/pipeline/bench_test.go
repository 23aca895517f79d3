package pipeline

import (
	"context"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// BenchmarkHandle: one bus batch of 512 telemetry messages of 64
// vehicles, matched by three websocket streams of the tenant (every
// message, ten vehicles, one data type).
func BenchmarkHandle(b *testing.B) {
	f := newFixture(b)
	f.start("org-a", "live", hub.KindTelemetry, `{}`)
	f.start("org-a", "live", hub.KindTelemetry, `{"vehicles": ["v00", "v01", "v02", "v03", "v04", "v05", "v06", "v07", "v08", "v09"]}`)
	f.start("org-a", "live", hub.KindTelemetry, `{"data_types": ["engine_diagnostics"]}`)
	p := New(Config{}, nil, f.reg, f.log, dedup.NewLocal(1000, time.Minute), nil, nil, f.logger)
	msgs := make([]hub.Message, 512)
	for i := range msgs {
		msgs[i] = msg(b, hub.TopicTelemetry, int64(i), aTelemetry("org-a", "live", fmt.Sprintf("v%02d", i%64), int64(i)))
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Handle(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}

// BenchmarkHandleEncrypted: one bus batch of 512 events of 64 vehicles
// into one websocket events stream of the tenant that takes every event,
// plain and with stream_config.encryption (each message sealed with
// XChaCha20-Poly1305 before it is appended). ns/msg is Handle's time per
// event; the difference between the two is what encryption costs.
func BenchmarkHandleEncrypted(b *testing.B) {
	for _, enc := range []bool{false, true} {
		b.Run(fmt.Sprintf("encryption=%v", enc), func(b *testing.B) {
			f := newFixture(b)
			f.start("org-a", "live", hub.KindEvents, fmt.Sprintf(`{"stream_config": {"encryption": %v}}`, enc))
			p := New(Config{}, nil, f.reg, f.log, dedup.NewLocal(1000, time.Minute), nil, nil, f.logger)
			msgs := make([]hub.Message, 512)
			var g eventGen
			g.batch(b, msgs)
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Handle(ctx, msgs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
		})
	}
}

// The events benchmark's tenant: benchStreams events streams of one
// organization and environment, fed by benchVehicles vehicles.
const (
	benchStreams  = 100
	benchVehicles = 1000
	benchBatch    = 512
	benchWarmUp   = 64 // batches handled before the timer starts
)

// benchWindows are the dedup windows measured, each of the size it has
// in the hub: dedup.NewLocal (a million ids) and dedup.NewCompact (ten
// million ids, cmd/fleethub's window), both for an hour.
var benchWindows = []struct {
	name string
	size int
	make func(size int) dedup.Window
}{
	{"local", 1_000_000, func(n int) dedup.Window { return dedup.NewLocal(n, time.Hour) }},
	{"compact", 10_000_000, func(n int) dedup.Window { return dedup.NewCompact(n, time.Hour) }},
}

// benchCategories are the categories the benchmark's events take in turn.
var benchCategories = [...]string{event.CategorySafety, "operational_events", "driver_events", "vehicle_events", "maintenance_events"}

// benchFilter is the event_filters of stream i of benchStreams. "all":
// every stream takes every event (100 appends per event). "mix": 90
// streams each follow one group of about 11 vehicles (vehicle v is in
// group v%90), 10 streams each take one category (stream 90+j category
// j%5): every event matches 3 streams, its vehicle group's and two
// category streams.
func benchFilter(filters string, i int) string {
	if filters == "all" {
		return `{}`
	}
	const groups = benchStreams * 9 / 10
	if i >= groups {
		return fmt.Sprintf(`{"categories": [%q]}`, benchCategories[(i-groups)%len(benchCategories)])
	}
	var ids []string
	for v := i; v < benchVehicles; v += groups {
		ids = append(ids, fmt.Sprintf("%q", fmt.Sprintf("veh-%04d", v)))
	}
	return `{"vehicle_ids": [` + strings.Join(ids, ", ") + `]}`
}

// eventGen makes bus batches of events with ids never used before, each
// vehicle's metadata.sequence_number counting up by one (in order: an
// ordering stream waits for nothing), at bus offsets that grow.
type eventGen struct {
	seq    [benchVehicles]int64
	next   int   // the vehicle of the next event
	offset int64 // the bus offset of the next message
	n      int   // events made
}

func (g *eventGen) batch(b *testing.B, msgs []hub.Message) {
	for i := range msgs {
		v := g.next
		g.next = (g.next + 1) % benchVehicles
		g.seq[v]++
		seq := g.seq[v]
		ts := t0.Add(time.Duration(g.n) * time.Millisecond)
		env := &event.Envelope{Org: "org-a", Env: "live", Kind: event.KindEvent, IngestedAt: ts, Event: &event.Event{
			EventID: fmt.Sprintf("ev-%08d", g.n), EventType: "harsh_braking", Category: benchCategories[g.n%len(benchCategories)], Timestamp: ts,
			Severity: "high", Priority: "normal", Source: event.Source{VehicleID: fmt.Sprintf("veh-%04d", v), DriverID: fmt.Sprintf("drv-%04d", v)},
			Location:  &event.Location{Latitude: 40 + float64(v)*1e-3, Longitude: -83 + float64(seq)*1e-5},
			EventData: map[string]any{"deceleration_g": 0.62, "speed_before_kmh": 71.5},
			Metadata:  event.Metadata{SequenceNumber: seq, SourceSystem: "dashcam"}}}
		msgs[i] = msg(b, hub.TopicEvents, g.offset, env)
		g.offset++
		g.n++
	}
}

// BenchmarkHandleEvents: bus batches of 512 events of 1,000 vehicles
// (each event a new event_id, each vehicle's sequence numbers in order)
// into 100 events streams of one tenant, without processing rules, and
// with deduplication, event_ordering or both on every stream. Each
// variant runs beside each window of benchWindows, filled beforehand to
// its size with other ids (at 100,000 events/s a window is full after
// its size in ids, 10 s or 100 s, and stays full), which the pipeline
// uses when the streams deduplicate: every variant of a window has the
// same heap, which sets how often the collector runs (a full compact
// window, 229 MiB of ring without pointers on the heap, makes it run less often).
// The batches are made with the timer stopped: b.Loop would otherwise
// hand the same messages again, duplicates and late events every one.
// benchWarmUp batches are handled first, untimed.
// ns/event and events/s are those of Handle, cpu-ns/event the processor
// time the process used during Handle; appends/event is what the
// streams' logs took per event.
func BenchmarkHandleEvents(b *testing.B) {
	for _, filters := range []string{"mix", "all"} {
		for _, w := range benchWindows {
			for _, rules := range []string{"none", "ordering", "dedup", "dedup+ordering"} {
				b.Run("filters="+filters+"/window="+w.name+"/rules="+rules, func(b *testing.B) {
					benchmarkHandleEvents(b, filters, rules, fullWindow(b, w.make(w.size), w.size))
				})
			}
		}
	}
}

// cpuTime is the processor time the process has used (user and
// system, every thread: the collector's included). On a machine shared
// with other work it moves less than the elapsed time, which counts the
// time the process waited for a processor.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// fullWindow records n ids in w, a thousand at a time.
func fullWindow(b *testing.B, w dedup.Window, n int) dedup.Window {
	const pre = "org-a\x00live\x00old-"
	ids := make([]string, 0, 1000)
	for i := range n {
		if ids = append(ids, pre+strconv.Itoa(i)); len(ids) == cap(ids) || i == n-1 {
			if err := w.Done(b.Context(), ids...); err != nil {
				b.Fatal(err)
			}
			ids = ids[:0]
		}
	}
	return w
}

func benchmarkHandleEvents(b *testing.B, filters, rules string, w dedup.Window) {
	r := newEventsRun(b, filters, rules, w)
	b.ReportAllocs()
	for b.Loop() {
		r.handle(b)
	}
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(r.events)
	b.ReportMetric(ns, "ns/event")
	b.ReportMetric(r.cpuPerEvent(), "cpu-ns/event")
	b.ReportMetric(1e9/ns, "events/s")
	b.ReportMetric(r.appendsPerEvent(b), "appends/event")
}

// BenchmarkRulesCost: the cost of deduplication and event_ordering on
// every stream, measured in pairs. Two pipelines, each with its own 100
// streams and log, one without processing rules and one with both on
// every stream, handle one bus batch each in turn (as in
// BenchmarkHandleEvents, beside one full compact window that only the
// second uses), so that whatever else the machine does weighs on both
// alike. rules/none is the ratio of their elapsed times in Handle (the
// pipeline's throughput without rules against with them is its
// inverse), cpu-rules/none that of the processor time the process used,
// thread-rules/none that of the processor time the thread that ran
// Handle used (Linux; the collector's background work and the time
// spent waiting for a processor left out: the steadiest of the three
// on a loaded machine).
//
// Each pipeline's Handle runs under the profile label run=<its rules>
// (none, dedup+ordering), so that a CPU profile of the benchmark tells
// the two apart: go tool pprof -tagfocus 'run=dedup.ordering' ….
//
// rules=dedup and rules=ordering run the second pipeline with that rule
// alone on every stream, to tell the two rules' costs apart.
//
// taken=full is the hour after a restart: the rules pipeline also holds,
// as cmd/fleethub does, the ids its streams' logs held at start
// (KeepStreamIDs), here ten million of other events, and looks each
// entry of its deduplicating streams up there.
func BenchmarkRulesCost(b *testing.B) {
	for _, c := range []struct{ filters, taken, rules string }{
		{"mix", "", ""}, {"all", "", ""}, {"mix", "full", ""},
		{"mix", "", "dedup"}, {"mix", "", "ordering"},
	} {
		name := "filters=" + c.filters
		if c.taken != "" {
			name += ",taken=" + c.taken
		}
		rules := "dedup+ordering"
		if c.rules != "" {
			name += ",rules=" + c.rules
			rules = c.rules
		}
		b.Run(name, func(b *testing.B) {
			const size = 10_000_000
			filters := c.filters
			w := fullWindow(b, dedup.NewCompact(size, time.Hour), size)
			none := newEventsRun(b, filters, "none", w)
			both := newEventsRun(b, filters, rules, w)
			if c.taken != "" {
				taken := dedup.NewCompact(size, time.Hour)
				fullTaken(b, taken, both.ids, size)
				both.p.KeepStreamIDs(taken)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%2 == 0 { // each first half the time
					none.handle(b)
					both.handle(b)
				} else {
					both.handle(b)
					none.handle(b)
				}
			}
			b.StopTimer()
			none.appendsPerEvent(b)
			both.appendsPerEvent(b)
			b.ReportMetric(none.wallPerEvent(), "none-ns/event")
			b.ReportMetric(both.wallPerEvent(), "rules-ns/event")
			b.ReportMetric(both.wallPerEvent()/none.wallPerEvent(), "rules/none")
			b.ReportMetric(both.cpuPerEvent()/none.cpuPerEvent(), "cpu-rules/none")
			if both.hasThread {
				b.ReportMetric(both.thread.Seconds()/none.thread.Seconds(), "thread-rules/none")
			}
		})
	}
}

// fullTaken records n ids of earlier events of the streams in taken, a
// thousand at a time.
func fullTaken(b *testing.B, taken dedup.Window, streams []string, n int) {
	ids := make([]string, 0, 1000)
	for i := range n {
		if ids = append(ids, StreamKey(streams[i%len(streams)], "old-"+strconv.Itoa(i))); len(ids) == cap(ids) || i == n-1 {
			if err := taken.Done(b.Context(), ids...); err != nil {
				b.Fatal(err)
			}
			ids = ids[:0]
		}
	}
}

// eventsRun is a pipeline over benchStreams events streams of one tenant
// and the bus batches it handles.
type eventsRun struct {
	name     string // the rules, a profile label
	f        *fixture
	p        *Pipeline
	ids      []string // the streams
	g        eventGen
	msgs     []hub.Message
	appends0 int64 // entries in the streams' logs after the warm-up
	events   int
	wall     time.Duration // in Handle
	cpu      time.Duration // used by the process during Handle
	thread   time.Duration // used by the thread that ran Handle, when hasThread
	// hasThread says thread is measured (Linux)
	hasThread bool
}

// newEventsRun starts the streams with the rules ("none", or
// "dedup", "ordering" or both joined by +) and handles benchWarmUp
// batches: the logs grow to their memory bound, the reorder buffer
// learns every source, the heap reaches its size.
func newEventsRun(b *testing.B, filters, rules string, w dedup.Window) *eventsRun {
	r := &eventsRun{name: rules, f: newFixture(b), msgs: make([]hub.Message, benchBatch)}
	dedupe, ordered := strings.Contains(rules, "dedup"), strings.Contains(rules, "ordering")
	pr := fmt.Sprintf(`{"deduplication": %t, "event_ordering": %t}`, dedupe, ordered)
	r.ids = make([]string, benchStreams)
	for i := range r.ids {
		r.ids[i] = r.f.start("org-a", "live", hub.KindEvents, fmt.Sprintf(`{"event_filters": %s, "processing_rules": %s}`, benchFilter(filters, i), pr))
	}
	r.p = New(Config{}, nil, r.f.reg, r.f.log, w, nil, nil, r.f.logger)
	for range benchWarmUp {
		r.g.batch(b, r.msgs)
		if err := r.p.Handle(b.Context(), r.msgs); err != nil {
			b.Fatal(err)
		}
	}
	r.appends0 = r.appended(b)
	return r
}

// handle makes the next batch with the timer stopped and handles it.
func (r *eventsRun) handle(b *testing.B) {
	b.StopTimer()
	r.g.batch(b, r.msgs)
	b.StartTimer()
	runtime.LockOSThread() // so that threadCPU is Handle's
	defer runtime.UnlockOSThread()
	th0, _ := threadCPU(b)
	c0, t0 := cpuTime(b), time.Now()
	var err error
	pprof.Do(b.Context(), pprof.Labels("run", r.name), func(ctx context.Context) { err = r.p.Handle(ctx, r.msgs) })
	if err != nil {
		b.Fatal(err)
	}
	r.wall += time.Since(t0)
	r.cpu += cpuTime(b) - c0
	th1, ok := threadCPU(b)
	r.thread, r.hasThread = r.thread+th1-th0, ok
	r.events += len(r.msgs)
}

// appended is the number of entries in the streams' logs.
func (r *eventsRun) appended(b *testing.B) int64 {
	var n int64
	for _, id := range r.ids {
		last, err := r.f.log.Last(b.Context(), id)
		if err != nil {
			b.Fatal(err)
		}
		n += last
	}
	return n
}

// appendsPerEvent is what the streams' logs took per event handled; it
// fails when the reorder buffer still holds events (the benchmark's
// sequences have no gaps).
func (r *eventsRun) appendsPerEvent(b *testing.B) float64 {
	if len(r.p.holds) > 0 {
		b.Fatalf("%d events held: the benchmark's sequences have gaps", len(r.p.holds))
	}
	return float64(r.appended(b)-r.appends0) / float64(r.events)
}

func (r *eventsRun) wallPerEvent() float64 { return float64(r.wall.Nanoseconds()) / float64(r.events) }
func (r *eventsRun) cpuPerEvent() float64  { return float64(r.cpu.Nanoseconds()) / float64(r.events) }

// BenchmarkHandleOne: a bus batch of one event, as a single-event
// publish makes, taken by 1 and by 10 websocket events streams of the
// tenant: what Handle allocates per publish.
func BenchmarkHandleOne(b *testing.B) {
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("streams=%d", n), func(b *testing.B) {
			f := newFixture(b)
			for range n {
				f.start("org-a", "live", hub.KindEvents, `{}`)
			}
			p := New(Config{}, nil, f.reg, f.log, dedup.NewLocal(1000, time.Minute), nil, nil, f.logger)
			msgs := []hub.Message{msg(b, hub.TopicEvents, 1, anEvent("org-a", "live", "e-1", "v01", 0))}
			ctx := b.Context()
			b.ReportAllocs()
			for b.Loop() {
				if err := p.Handle(ctx, msgs); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
