package pipeline

import (
	"fmt"
	"strconv"
	"strings"
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
// window, 357 MiB without pointers, makes it run less often).
// The batches are made with the timer stopped: b.Loop would otherwise
// hand the same messages again, duplicates and late events every one.
// benchWarmUp batches are handled first, untimed.
// ns/event and events/s are those of Handle; appends/event is what the
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

// fullWindow records n ids in w.
func fullWindow(b *testing.B, w dedup.Window, n int) dedup.Window {
	id := []byte("org-a\x00live\x00old-")
	pre := len(id)
	for i := range n {
		id = strconv.AppendInt(id[:pre], int64(i), 10)
		if _, err := w.Seen(b.Context(), string(id)); err != nil {
			b.Fatal(err)
		}
	}
	return w
}

func benchmarkHandleEvents(b *testing.B, filters, rules string, w dedup.Window) {
	f := newFixture(b)
	dedupe, ordered := strings.Contains(rules, "dedup"), strings.Contains(rules, "ordering")
	pr := fmt.Sprintf(`{"deduplication": %t, "event_ordering": %t}`, dedupe, ordered)
	ids := make([]string, benchStreams)
	for i := range ids {
		ids[i] = f.start("org-a", "live", hub.KindEvents, fmt.Sprintf(`{"event_filters": %s, "processing_rules": %s}`, benchFilter(filters, i), pr))
	}
	ctx := b.Context()
	p := New(Config{}, nil, f.reg, f.log, w, nil, nil, f.logger)
	var g eventGen
	msgs := make([]hub.Message, benchBatch)
	// warm up: the logs grow to their memory bound, the reorder buffer
	// learns every source, the heap reaches its size
	for range benchWarmUp {
		g.batch(b, msgs)
		if err := p.Handle(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
	var appends0 int64
	for _, id := range ids {
		n, err := f.log.Last(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		appends0 += n
	}
	events := 0
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		g.batch(b, msgs)
		b.StartTimer()
		if err := p.Handle(ctx, msgs); err != nil {
			b.Fatal(err)
		}
		events += len(msgs)
	}
	b.StopTimer()
	if len(p.holds) > 0 {
		b.Fatalf("%d events held: the benchmark's sequences have gaps", len(p.holds))
	}
	appends := -appends0
	for _, id := range ids {
		n, err := f.log.Last(ctx, id)
		if err != nil {
			b.Fatal(err)
		}
		appends += n
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(events)
	b.ReportMetric(ns, "ns/event")
	b.ReportMetric(1e9/ns, "events/s")
	b.ReportMetric(float64(appends)/float64(events), "appends/event")
}
