package digest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apidevices "github.com/fleethub/fleethub/api/devices"
	apitrips "github.com/fleethub/fleethub/api/trips"
	"github.com/fleethub/fleethub/fleet/devices"
	"github.com/fleethub/fleethub/fleet/digest"
	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/publish"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
	"github.com/fleethub/fleethub/internal/waitfor"
)

// clock is the test's time, moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

// feed is every event the bus carries, read from its start.
type feed struct {
	mu      sync.Mutex
	evs     []*event.Event
	markers atomic.Int64
}

func watch(t *testing.T, bus hub.Bus) *feed {
	f := &feed{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		bus.Subscribe(ctx, hub.Subscription{Topic: hub.TopicEvents, Start: hub.StartEarliest}, func(_ context.Context, msgs []hub.Message) error {
			for _, m := range msgs {
				env, err := event.Unmarshal(m.Value)
				if err != nil {
					t.Errorf("decode: %v", err)
					continue
				}
				if env.Event != nil {
					f.mu.Lock()
					f.evs = append(f.evs, env.Event)
					f.mu.Unlock()
				}
			}
			return nil
		})
	}()
	t.Cleanup(func() { cancel(); <-done })
	return f
}

// of answers the events of type typ seen so far.
func (f *feed) of(typ string) []*event.Event {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*event.Event
	for _, e := range f.evs {
		if e.EventType == typ {
			out = append(out, e)
		}
	}
	return out
}

// waitFor waits until the feed holds n events of typ, and answers them.
func (f *feed) waitFor(t *testing.T, typ string, n int) []*event.Event {
	t.Helper()
	var got []*event.Event
	waitfor.Poll(10*time.Second, func() bool { got = f.of(typ); return len(got) >= n })
	if len(got) != n {
		t.Fatalf("%d %s events on the bus, want %d", len(got), typ, n)
	}
	return got
}

// sync waits until the feed has read everything published on bus (of
// one partition, so read in order) before it: a marker published now
// comes back.
func (f *feed) sync(t *testing.T, bus hub.Bus) {
	t.Helper()
	id := fmt.Sprintf("evt_marker_%d", f.markers.Add(1))
	if err := publish.New(bus).Publish(t.Context(), "org-a", "test", &event.Event{EventID: id, EventType: "test_marker",
		Category: event.CategorySafety, Timestamp: time.Now().UTC(), Source: event.Source{VehicleID: "veh-marker"}}); err != nil {
		t.Fatal(err)
	}
	waitfor.Until(t, 10*time.Second, "the feed to read the marker "+id, func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return slices.ContainsFunc(f.evs, func(e *event.Event) bool { return e.EventID == id })
	})
}

// oneBus is an embedded bus of one partition, so that the feed reads
// every event in the order published (feed.sync).
func oneBus(t *testing.T) hub.Bus {
	t.Helper()
	bus, err := embedbus.Open(embedbus.Config{Partitions: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bus.Close(context.Background()) })
	return bus
}

// node is the trips, devices and summaries of one server on st and bus,
// its routes served over HTTP.
type node struct {
	t     *testing.T
	url   string
	key   apitest.Key
	dg    *digest.Summaries
	ticks chan time.Time // the looks of dg.Run after its first
}

func newNode(t *testing.T, st store.Backend, bus hub.Bus, clk *clock, name string) *node {
	t.Helper()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	pub := publish.New(bus)
	ticks := make(chan time.Time)
	dg := digest.New(digest.Config{Node: name, Now: clk.now, Ticks: ticks, Log: log}, st, pub)
	devs := devices.New(st)
	svc, err := trips.New(trips.Config{Now: clk.now, DefaultSpeedLimitKmh: 100, Summaries: dg}, st, pub, devs, log)
	if err != nil {
		t.Fatal(err)
	}
	k := apitest.NewKey("trips:write", "trips:read", "locations:write", "devices:manage")
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, prometheus.NewRegistry(), k, nil)
	srv.Handle(apitrips.New(svc, nil).Routes()...)
	srv.Handle(apidevices.New(devs).Routes()...)
	return &node{t: t, url: "http://" + apitest.Serve(t, srv), key: k, dg: dg, ticks: ticks}
}

// look has the node's Run look once at its clock's time, and returns
// when that look is done: Run takes a tick only between looks, so once
// it took a second one, the look the first started is over.
func (n *node) look() {
	n.t.Helper()
	for range 2 {
		select {
		case n.ticks <- time.Time{}:
		case <-time.After(10 * time.Second):
			n.t.Fatal("the summaries' loop took no tick in 10 s")
		}
	}
}

func (n *node) do(method, path string, body any) map[string]any {
	n.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(method, n.url+path, bytes.NewReader(b))
	req.Header.Set("X-API-Key", n.key.Key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		n.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		n.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	var out map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		n.t.Fatalf("%s %s: %v: %s", method, path, err, raw)
	}
	return out
}

func (n *node) alertFrequency(device, freq string) {
	n.t.Helper()
	n.do("PUT", "/v1/devices/"+device+"/settings", map[string]any{"safety_features": map[string]any{"speeding_alerts": map[string]any{"alert_frequency": freq}}})
}

// drive starts a trip of vehicle at start and uploads, from device, a
// point a second: two speeding episodes on the 100 km/h limit (40 s at
// 120 km/h, 30 s at 125 km/h), each followed by 20 s at 60 km/h. It
// answers the trip's id and the upload's answer.
func (n *node) drive(vehicle, device string, start time.Time) (string, map[string]any) {
	n.t.Helper()
	trip := n.do("POST", "/v1/trips", map[string]any{"vehicle_id": vehicle, "driver_id": "drv-1", "start_time": start})["trip_id"].(string)
	var speeds []float64
	for _, run := range [][2]float64{{120, 40}, {60, 20}, {125, 30}, {60, 20}} {
		for range int(run[1]) {
			speeds = append(speeds, run[0])
		}
	}
	lat := 40.0
	var locs []map[string]any
	for i, v := range speeds {
		lat += v / 3.6 / 111195
		locs = append(locs, map[string]any{"latitude": lat, "longitude": -83.0, "speed_kmh": v, "timestamp": start.Add(time.Duration(i+1) * time.Second)})
	}
	res := n.do("POST", "/v1/locations/batch", map[string]any{"trip_id": trip, "device_info": map[string]any{"device_id": device}, "locations": locs})
	return trip, res
}

func speedingIn(res map[string]any) []map[string]any {
	var out []map[string]any
	for _, e := range res["events_detected"].([]any) {
		if m := e.(map[string]any); m["event_type"] == "speeding" {
			out = append(out, m)
		}
	}
	return out
}

func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case int:
		return float64(x)
	case int8:
		return float64(x)
	case uint8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	}
	return math.NaN()
}

// TestDailySummaryReplacesSpeedingEvents: a device on daily_summary
// raises no speeding event, in the upload's answer or on the bus, and
// its trip counts none (as the episodes a throttle leaves out); after
// midnight UTC and the grace, one speeding_daily_summary for the day
// carries its two episodes, as measured for a device on immediate
// driving the same, which got its two events as before. The loop sends
// the summary once however often it looks; an episode uploaded after the
// summary went goes into the next day's.
func TestDailySummaryReplacesSpeedingEvents(t *testing.T) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: day.Add(22 * time.Hour)}
	st := testdb.SQLite(t)
	bus := oneBus(t)
	f := watch(t, bus)
	n := newNode(t, st, bus, clk, "node-a")
	ctx, cancel := context.WithCancel(t.Context())
	stopped := make(chan error, 1)
	go func() { stopped <- n.dg.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-stopped; err != nil {
			t.Errorf("Run: %v", err)
		}
	})

	n.alertFrequency("dev-daily", "daily_summary")
	n.alertFrequency("dev-now", "immediate")
	start := day.Add(21 * time.Hour)
	dailyTrip, daily := n.drive("veh-daily", "dev-daily", start)
	_, now := n.drive("veh-now", "dev-now", start)
	if got := speedingIn(daily); len(got) != 0 {
		t.Errorf("daily_summary: the upload answered speeding events %v", got)
	}
	want := speedingIn(now)
	if len(want) != 2 {
		t.Fatalf("immediate: %d speeding events in the answer, want 2: %v", len(want), now["events_detected"])
	}
	published := f.waitFor(t, "speeding", 2)
	for _, e := range published {
		if e.Source.VehicleID != "veh-now" {
			t.Errorf("a speeding event of %s on the bus", e.Source.VehicleID)
		}
	}
	trip := n.do("GET", "/v1/trips/"+dailyTrip, nil)
	if hs := trip["analytics"].(map[string]any)["harsh_events"].(map[string]any)["speeding"]; hs != 0.0 {
		t.Errorf("the daily_summary trip counts %v speeding events, want 0 (as a throttle's)", hs)
	}

	// before midnight and within the grace after it: nothing
	for _, at := range []time.Time{day.Add(23*time.Hour + 59*time.Minute), day.Add(24*time.Hour + 4*time.Minute)} {
		clk.set(at)
		n.look()
		f.sync(t, bus)
		if got := f.of(digest.EventType); len(got) != 0 {
			t.Fatalf("at %s: %d summaries", at, len(got))
		}
	}
	clk.set(day.Add(24*time.Hour + 6*time.Minute))
	n.look()
	sum := f.waitFor(t, digest.EventType, 1)[0]
	total, maxSpeed, maxOver := 0.0, 0.0, 0.0
	for _, e := range want {
		m := e["metrics"].(map[string]any)
		total += m["duration_seconds"].(float64)
		maxSpeed = math.Max(maxSpeed, m["actual_speed_kmh"].(float64))
		maxOver = math.Max(maxOver, m["excess_speed_kmh"].(float64))
	}
	d := sum.EventData
	k := store.SpeedingSummaryKey{Org: "org-a", Env: "test", DeviceID: "dev-daily", Day: "2026-03-02"}
	if sum.EventID != digest.SummaryID(k) || sum.Category != event.CategorySafety || sum.Priority != "normal" || sum.Severity != "high" ||
		!sum.Timestamp.Equal(day.Add(24*time.Hour)) || sum.Source.VehicleID != "veh-daily" || sum.Source.DriverID != "drv-1" {
		t.Errorf("summary %+v", sum)
	}
	if d["date"] != "2026-03-02" || d["device_id"] != "dev-daily" || num(d["episodes"]) != 2 || num(d["late_episodes"]) != 0 ||
		math.Abs(num(d["total_duration_seconds"])-total) > 0.11 || math.Abs(num(d["max_speed_kmh"])-maxSpeed) > 0.051 ||
		math.Abs(num(d["max_over_limit_kmh"])-maxOver) > 0.051 || fmt.Sprint(d["trips"]) != fmt.Sprint([]any{dailyTrip}) ||
		d["first_episode_at"] != want[0]["timestamp"] || d["last_episode_at"] != want[1]["timestamp"] {
		t.Errorf("event_data %v; want 2 episodes, %.1f s, %.1f km/h, %.1f over, first %v, last %v", d, total, maxSpeed, maxOver, want[0]["timestamp"], want[1]["timestamp"])
	}
	// more looks send nothing more
	clk.set(day.Add(24*time.Hour + 30*time.Minute))
	n.look()
	f.sync(t, bus)
	if got := f.of(digest.EventType); len(got) != 1 {
		t.Fatalf("%d summaries after more looks, want 1", len(got))
	}

	// a very late upload of the day: counted in the next day's summary
	late := day.Add(23 * time.Hour)
	n.drive("veh-late", "dev-daily", late)
	clk.set(day.Add(24*time.Hour + 31*time.Minute)) // the loop finds them
	n.look()
	clk.set(day.Add(48*time.Hour + 4*time.Minute))
	n.look()
	f.sync(t, bus)
	if got := f.of(digest.EventType); len(got) != 1 {
		t.Fatalf("the late episodes were summarized again for their own day: %d summaries", len(got))
	}
	clk.set(day.Add(48*time.Hour + 6*time.Minute))
	n.look()
	next := f.waitFor(t, digest.EventType, 2)[1]
	if nd := next.EventData; nd["date"] != "2026-03-03" || num(nd["episodes"]) != 2 || num(nd["late_episodes"]) != 2 ||
		nd["first_episode_at"].(string) >= "2026-03-03" || next.Source.VehicleID != "veh-late" {
		t.Errorf("the next summary: %v", nd)
	}
	if len(f.of("speeding")) != 2 {
		t.Errorf("%d speeding events on the bus, want the immediate device's 2", len(f.of("speeding")))
	}
}

// TestLapsedClaimIsTakenAgain: a node that claimed a summary and stopped
// before publishing it holds it for the lease; then another node sends
// it, once.
func TestLapsedClaimIsTakenAgain(t *testing.T) {
	day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	clk := &clock{t: day.Add(22 * time.Hour)}
	st := testdb.SQLite(t)
	bus := oneBus(t)
	f := watch(t, bus)
	n := newNode(t, st, bus, clk, "node-b")
	n.alertFrequency("dev-1", "daily_summary")
	n.drive("veh-1", "dev-1", day.Add(21*time.Hour))
	k := store.SpeedingSummaryKey{Org: "org-a", Env: "test", DeviceID: "dev-1", Day: "2026-03-02"}
	at := day.Add(24*time.Hour + 6*time.Minute)
	if ok, _, err := st.ClaimSpeedingSummary(t.Context(), k, "node-a", at, at.Add(digest.DefaultLease)); err != nil || !ok {
		t.Fatalf("node-a's claim: %v %v", ok, err)
	}
	// node-a stops here; node-b looks while node-a's lease lives
	clk.set(at.Add(time.Minute))
	if sent, err := n.dg.Tick(t.Context()); err != nil || sent != 0 {
		t.Fatalf("sent %d (%v) under another node's claim", sent, err)
	}
	clk.set(at.Add(digest.DefaultLease + time.Second))
	if sent, err := n.dg.Tick(t.Context()); err != nil || sent != 1 {
		t.Fatalf("after the lease: sent %d, %v", sent, err)
	}
	if sent, err := n.dg.Tick(t.Context()); err != nil || sent != 0 {
		t.Fatalf("sent again: %d, %v", sent, err)
	}
	got := f.waitFor(t, digest.EventType, 1)
	if got[0].EventID != digest.SummaryID(k) || num(got[0].EventData["episodes"]) != 2 {
		t.Errorf("summary %+v", got[0])
	}
	f.sync(t, bus)
	if len(f.of(digest.EventType)) != 1 {
		t.Errorf("%d summaries", len(f.of(digest.EventType)))
	}
}

// TestRacingNodesSendEachSummaryOnce: two nodes on one database look at
// the same moments; every device's summary goes on the bus once.
func TestRacingNodesSendEachSummaryOnce(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		day := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
		a, b := twoNodes(t, open)
		var eps []store.SpeedingEpisode
		const devicesN = 30
		for i := range devicesN {
			for j := range 3 {
				eps = append(eps, store.SpeedingEpisode{Org: "org-a", Env: "test", ID: fmt.Sprintf("evt_%d_%d", i, j), DeviceID: fmt.Sprintf("dev-%02d", i),
					VehicleID: fmt.Sprintf("veh-%02d", i), TripID: fmt.Sprintf("trip-%02d", i), Start: day.Add(time.Duration(10+j) * time.Hour),
					DurationSeconds: 30, MaxSpeedKmh: 118, LimitKmh: 100})
			}
		}
		bus, err := embedbus.Open(embedbus.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { bus.Close(context.Background()) })
		f := watch(t, bus)
		clk := &clock{t: day.Add(24*time.Hour + 10*time.Minute)}
		pub := publish.New(bus)
		da := digest.New(digest.Config{Node: "node-a", Now: clk.now, Batch: 7}, a, pub)
		db := digest.New(digest.Config{Node: "node-b", Now: clk.now, Batch: 7}, b, pub)
		if err := da.Record(t.Context(), eps); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		sent := make([]int, 2)
		for i, d := range []*digest.Summaries{da, db} {
			wg.Go(func() {
				for range 3 {
					n, err := d.Tick(t.Context())
					if err != nil {
						t.Error(err)
					}
					sent[i] += n
				}
			})
		}
		wg.Wait()
		t.Logf("node-a sent %d, node-b %d", sent[0], sent[1])
		if sent[0]+sent[1] != devicesN {
			t.Errorf("the nodes sent %v summaries, want %d in all", sent, devicesN)
		}
		got := f.waitFor(t, digest.EventType, devicesN)
		var ids []string
		for _, e := range got {
			ids = append(ids, e.EventID)
			if num(e.EventData["episodes"]) != 3 {
				t.Errorf("%s: %v", e.EventData["device_id"], e.EventData)
			}
		}
		slices.Sort(ids)
		if len(slices.Compact(ids)) != devicesN {
			t.Errorf("%d distinct summaries of %d", len(ids), devicesN)
		}
		if left, err := a.PendingSpeedingSummaries(t.Context(), "2026-03-03", 100); err != nil || len(left) != 0 {
			t.Errorf("pending after the race: %v %v", left, err)
		}
	})
}

// twoNodes opens the store twice on one database, as two nodes would:
// PostgreSQL's one schema, SQLite's one file (one process, one store).
func twoNodes(t *testing.T, open testdb.Opener) (store.Backend, store.Backend) {
	if strings.HasSuffix(t.Name(), "/postgresql") {
		schema := testdb.Schema(t)
		return testdb.PostgreSQLAt(t, schema), testdb.PostgreSQLAt(t, schema)
	}
	st := open(t)
	return st, st
}

// TestSummariesPastRetentionArePruned: once a day is Retention old, the
// rows of its sent summary go (its claim and the episodes it took) while
// those of a day within Retention stay; an episode of a day past
// Retention recorded again goes into today's summary, as a late one,
// never into a second summary of its day.
func TestSummariesPastRetentionArePruned(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		st := open(t)
		bus := oneBus(t)
		f := watch(t, bus)
		clk := &clock{t: time.Date(2026, 3, 21, 0, 10, 0, 0, time.UTC)}
		ticks := make(chan time.Time)
		dg := digest.New(digest.Config{Node: "node-a", Now: clk.now, Ticks: ticks}, st, publish.New(bus))
		n := &node{t: t, dg: dg, ticks: ticks}
		ctx, cancel := context.WithCancel(t.Context())
		stopped := make(chan error, 1)
		go func() { stopped <- dg.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			if err := <-stopped; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
		episode := func(id, day string) store.SpeedingEpisode {
			start, err := time.Parse(time.DateOnly, day)
			if err != nil {
				t.Fatal(err)
			}
			return store.SpeedingEpisode{Org: "org-a", Env: "test", ID: id, DeviceID: "dev-1", VehicleID: "veh-1", TripID: "trip-" + id,
				Start: start.Add(10 * time.Hour), DurationSeconds: 30, MaxSpeedKmh: 118, LimitKmh: 100}
		}
		key := func(day string) store.SpeedingSummaryKey {
			return store.SpeedingSummaryKey{Org: "org-a", Env: "test", DeviceID: "dev-1", Day: day}
		}
		if err := dg.Record(t.Context(), []store.SpeedingEpisode{episode("evt_old", "2026-03-02"), episode("evt_new", "2026-03-20")}); err != nil {
			t.Fatal(err)
		}
		n.look()
		f.waitFor(t, digest.EventType, 2)

		// 2026-03-02 is past the retention, 2026-03-20 within it
		now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC).Add(digest.DefaultRetention)
		clk.set(now)
		n.look()
		if ok, sent, err := st.ClaimSpeedingSummary(t.Context(), key("2026-03-02"), "node-test", now, now.Add(time.Minute)); err != nil || !ok || sent {
			t.Errorf("the claim of a day past the retention: claimed %v, sent %v, %v; want it gone", ok, sent, err)
		}
		if ok, sent, err := st.ClaimSpeedingSummary(t.Context(), key("2026-03-20"), "node-test", now, now.Add(time.Minute)); err != nil || ok || !sent {
			t.Errorf("the claim of a day within the retention: claimed %v, sent %v, %v; want it kept as sent", ok, sent, err)
		}
		// both episodes recorded again: the kept one is known, the pruned one is new
		if err := dg.Record(t.Context(), []store.SpeedingEpisode{episode("evt_old", "2026-03-02"), episode("evt_new", "2026-03-20")}); err != nil {
			t.Fatal(err)
		}
		if got, err := st.SpeedingSummaryEpisodes(t.Context(), key("2026-03-20")); err != nil || len(got) != 0 {
			t.Errorf("a kept episode recorded again: %+v %v", got, err)
		}
		today := digest.Day(now)
		got, err := st.SpeedingSummaryEpisodes(t.Context(), key(today))
		if err != nil || len(got) != 1 || got[0].ID != "evt_old" || got[0].Day != "2026-03-02" {
			t.Fatalf("a pruned episode recorded again: %+v %v; want it in today's summary", got, err)
		}
		clk.set(now.Add(24 * time.Hour))
		n.look()
		sums := f.waitFor(t, digest.EventType, 3)
		if d := sums[2].EventData; d["date"] != today || num(d["late_episodes"]) != 1 || sums[2].EventID == digest.SummaryID(key("2026-03-02")) {
			t.Errorf("the summary after the episode of a pruned day: %s %v", sums[2].EventID, d)
		}
	})
}

// TestSummaryTimesToTheMillisecond: a summary states its episodes' starts
// as every time the service states, in UTC to the millisecond, whatever
// the precision and zone of the times it is given.
func TestSummaryTimesToTheMillisecond(t *testing.T) {
	zone := time.FixedZone("", -5*3600)
	k := store.SpeedingSummaryKey{Org: "org-a", Env: "test", DeviceID: "dev-1", Day: "2026-03-02"}
	ep := func(start time.Time) store.SpeedingEpisode {
		return store.SpeedingEpisode{Org: k.Org, Env: k.Env, ID: "e" + start.String(), DeviceID: k.DeviceID, VehicleID: "veh-1", TripID: "trip-1",
			Start: start, DurationSeconds: 12, MaxSpeedKmh: 120, LimitKmh: 100, Day: k.Day, SummaryDay: k.Day}
	}
	first := time.Date(2026, 3, 2, 3, 4, 5, 123456789, zone)
	last := time.Date(2026, 3, 2, 9, 0, 0, 999999, zone)
	ev, err := digest.Event(k, []store.SpeedingEpisode{ep(first), ep(last)}, time.Date(2026, 3, 3, 0, 6, 0, 987654321, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"first_episode_at": "2026-03-02T08:04:05.123Z", "last_episode_at": "2026-03-02T14:00:00Z"} {
		if got := ev.EventData[name]; got != want {
			t.Errorf("%s: %v, want %s", name, got, want)
		}
	}
	if ev.Metadata.ProcessingTime != "2026-03-03T00:06:00.987Z" {
		t.Errorf("processing_time %s, want 2026-03-03T00:06:00.987Z", ev.Metadata.ProcessingTime)
	}
	b, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"timestamp":"2026-03-03T00:00:00Z"`)) {
		t.Errorf("the summary's timestamp is not its day's end in UTC: %s", b)
	}
}
