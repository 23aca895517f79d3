package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// warmStore is the store and stream registry of the warm tests; the
// registry is made anew, as after a restart, by registry.
type warmStore struct {
	t  *testing.T
	st *sqlite.Store
}

func newWarmStore(t *testing.T, dir string) *warmStore {
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &warmStore{t: t, st: st}
}

func (s *warmStore) registry() *streams.Registry {
	reg := streams.NewRegistry(streams.RegistryConfig{}, s.st, slog.New(slog.DiscardHandler))
	if err := reg.Load(context.Background()); err != nil {
		s.t.Fatal(err)
	}
	return reg
}

// start starts a stream; log answers its offsets (the service's status).
func (s *warmStore) start(log streams.LastOffsets, org, env, kind, body string) string {
	s.t.Helper()
	st, err := streams.NewService(s.registry(), s.st, log).Start(context.Background(), org, env, kind, []byte(body))
	if err != nil {
		s.t.Fatalf("start %s: %v", body, err)
	}
	return st.Entry.Rec.ID
}

const websocketDedup = `{"stream_config": {"delivery_method": "websocket"}, "processing_rules": {"deduplication": true}}`

func openLog(t *testing.T, dir string) *embedlog.Log {
	t.Helper()
	l, err := embedlog.Open(embedlog.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func loggedIDs(t *testing.T, l hub.Log, stream string) []string {
	t.Helper()
	ents, err := l.Read(context.Background(), stream, 1, 100_000)
	if err != nil {
		t.Fatal(err)
	}
	return eventIDs(decode(t, ents))
}

// TestWarmSurvivesRestart: a node appends a batch of events to its
// streams and dies before the bus offset is committed; after the
// restart the bus delivers the batch again. With the window warmed from
// the durable stream logs each event is in a deduplicating stream's log
// once; without, twice (the bug Warm fixes). A stream without
// deduplication takes the redelivery (at-least-once), another tenant's
// ids are its own, and the webhook stream's queue gets no entry twice.
func TestWarmSurvivesRestart(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(fmt.Sprintf("warm=%v", warm), func(t *testing.T) {
			dir := t.TempDir()
			s := newWarmStore(t, filepath.Join(dir, "db"))
			logDir := filepath.Join(dir, "streams")
			log1 := openLog(t, logDir)
			hooked := s.start(log1, "org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
			plain := s.start(log1, "org-a", "live", hub.KindEvents, `{"stream_config": {"delivery_method": "websocket"}}`)
			other := s.start(log1, "org-b", "live", hub.KindEvents, websocketDedup)
			logger := slog.New(slog.DiscardHandler)

			var batch []hub.Message
			for i := range 10 {
				batch = append(batch, msg(t, hub.TopicEvents, int64(i), anEvent("org-a", "live", fmt.Sprintf("evt_%d", i), "v1", int64(i+1))))
			}
			batch = append(batch, msg(t, hub.TopicEvents, 10, anEvent("org-b", "live", "evt_0", "v9", 1)))
			sink1 := &flakySink{got: map[string][]hub.Entry{}}
			p1 := New(Config{}, nil, s.registry(), log1, dedup.NewCompact(1000, time.Hour), nil, sink1, logger)
			if err := p1.Handle(t.Context(), batch); err != nil {
				t.Fatal(err)
			}
			if err := log1.Close(); err != nil { // SIGKILL: the bus offset is not committed
				t.Fatal(err)
			}

			log2 := openLog(t, logDir)
			t.Cleanup(func() { log2.Close() })
			reg := s.registry()
			w := dedup.NewCompact(1000, time.Hour)
			sink2 := &flakySink{got: map[string][]hub.Entry{}}
			if warm {
				n, err := Warm(t.Context(), w, WarmConfig{Registry: reg, Streams: s.st, Log: log2, Sink: sink2, TTL: time.Hour, Max: 1000, Logger: logger})
				if err != nil || n != 11 {
					t.Fatalf("Warm = %d, %v; want 11 ids (10 of org-a's webhook stream, 1 of org-b's)", n, err)
				}
			}
			p2 := New(Config{}, nil, reg, log2, dedup.NewCompact(1000, time.Hour), nil, sink2, logger)
			p2.KeepStreamIDs(w)
			if err := p2.Handle(t.Context(), batch); err != nil { // the bus's redelivery
				t.Fatal(err)
			}
			fresh := []hub.Message{msg(t, hub.TopicEvents, 11, anEvent("org-a", "live", "evt_new", "v1", 11))}
			if err := p2.Handle(t.Context(), fresh); err != nil {
				t.Fatal(err)
			}

			wantHooked := 1
			if !warm {
				wantHooked = 2
			}
			for id, n := range counts(loggedIDs(t, log2, hooked)) {
				want := wantHooked
				if id == "evt_new" {
					want = 1
				}
				if n != want {
					t.Errorf("deduplicating webhook stream: %s logged %d times, want %d", id, n, want)
				}
			}
			if got := loggedIDs(t, log2, hooked); len(got) != 10*wantHooked+1 {
				t.Errorf("deduplicating webhook stream logged %d events, want %d", len(got), 10*wantHooked+1)
			}
			if got := loggedIDs(t, log2, plain); len(got) != 21 {
				t.Errorf("stream without deduplication logged %d events, want 21 (10, their redelivery and evt_new)", len(got))
			}
			if got := loggedIDs(t, log2, other); len(got) != map[bool]int{true: 1, false: 2}[warm] {
				t.Errorf("org-b's stream logged %v", got)
			}
			if !warm {
				return
			}
			// The sink was handed the stream's 10 entries again (the
			// dispatcher ignores those it has) and then evt_new: never a
			// second entry of one event.
			var offs []int64
			for _, e := range sink2.got[hooked] {
				offs = append(offs, e.Offset)
			}
			if want := []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}; !slices.Equal(offs, want) {
				t.Errorf("offsets handed to the sink after the restart: %v, want %v", offs, want)
			}
		})
	}
}

// timedLog is a stream log whose entries' times the test chooses.
type timedLog struct {
	es map[string][]hub.Entry // per stream, offsets ascending without gaps
}

func (l *timedLog) add(stream string, first int64, times ...time.Time) {
	if l.es == nil {
		l.es = map[string][]hub.Entry{}
	}
	for i, t := range times {
		off := first + int64(i)
		if n := len(l.es[stream]); n > 0 {
			off = l.es[stream][n-1].Offset + 1
		}
		data, _ := json.Marshal(&event.Event{EventID: fmt.Sprintf("%s-%d", stream, off)})
		l.es[stream] = append(l.es[stream], hub.Entry{Offset: off, Time: t, Data: data})
	}
}

func (l *timedLog) Read(_ context.Context, stream string, from int64, max int) ([]hub.Entry, error) {
	es := l.es[stream]
	i := sort.Search(len(es), func(i int) bool { return es[i].Offset >= from })
	return es[i:min(len(es), i+max)], nil
}

func (l *timedLog) Last(_ context.Context, stream string) (int64, error) {
	if es := l.es[stream]; len(es) > 0 {
		return es[len(es)-1].Offset, nil
	}
	return 0, nil
}

func (l *timedLog) Append(context.Context, string, [][]byte) (int64, error) { panic("not used") }
func (l *timedLog) Wait(string, int64) <-chan struct{}                      { panic("not used") }
func (l *timedLog) Epoch(context.Context, string) (string, error)           { return "test", nil }

// recorder is a window that notes what it is asked to record.
type recorder struct {
	dedup.Window
	keys []string
	at   []time.Time
}

func (r *recorder) RecordAt(_ context.Context, at time.Time, ids ...string) error {
	for _, id := range ids {
		r.keys, r.at = append(r.keys, id), append(r.at, at)
	}
	return nil
}

// TestWarmBounds: only ids logged within the TTL are loaded, at most Max
// of them (the newest), oldest first across streams, each at its
// entry's time and under its tenant's key; streams without deduplication
// and telemetry streams are not read.
func TestWarmBounds(t *testing.T) {
	s := newWarmStore(t, t.TempDir())
	mem := embedlog.New(embedlog.Config{})
	a := s.start(mem, "org-a", "live", hub.KindEvents, websocketDedup)
	b := s.start(mem, "org-b", "test", hub.KindEvents, websocketDedup)
	plain := s.start(mem, "org-a", "live", hub.KindEvents, `{"stream_config": {"delivery_method": "websocket"}}`)
	tel := s.start(mem, "org-a", "live", hub.KindTelemetry, `{"delivery_method": "websocket"}`)
	now := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	l := &timedLog{}
	var ta, tb []time.Time
	for i := range 40 { // a: 2 h ago to now, every 3 min; its first 4 gone (retention)
		ta = append(ta, now.Add(-2*time.Hour+time.Duration(3*i)*time.Minute))
	}
	for i := range 30 { // b: the last 59 min, every 2 min and 1 s
		tb = append(tb, now.Add(-59*time.Minute+time.Duration(i)*(2*time.Minute+time.Second)))
	}
	l.add(a, 5, ta[4:]...)
	l.add(b, 1, tb...)
	l.add(plain, 1, ta...)
	l.add(tel, 1, ta...)
	want := func(limit int) (keys []string, at []time.Time) {
		type id struct {
			key string
			at  time.Time
		}
		var all []id
		for _, e := range l.es[a] {
			if now.Sub(e.Time) <= time.Hour {
				all = append(all, id{StreamKey(a, fmt.Sprintf("%s-%d", a, e.Offset)), e.Time})
			}
		}
		for _, e := range l.es[b] {
			all = append(all, id{StreamKey(b, fmt.Sprintf("%s-%d", b, e.Offset)), e.Time})
		}
		slices.SortFunc(all, func(x, y id) int { return x.at.Compare(y.at) })
		all = all[max(0, len(all)-limit):]
		for _, x := range all {
			keys, at = append(keys, x.key), append(at, x.at)
		}
		return keys, at
	}
	for _, limit := range []int{1000, 35, 20, 1} {
		t.Run(fmt.Sprint(limit), func(t *testing.T) {
			r := &recorder{}
			n, err := Warm(t.Context(), r, WarmConfig{Registry: s.registry(), Streams: s.st, Log: l, TTL: time.Hour, Max: limit,
				Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			keys, at := want(limit)
			if n != len(keys) || !slices.Equal(r.keys, keys) || !slices.EqualFunc(r.at, at, time.Time.Equal) {
				t.Errorf("Warm recorded %d ids:\n%q\nat %v\nwant %d:\n%q\nat %v", n, r.keys, r.at, len(keys), keys, at)
			}
		})
	}
}

// TestWarmResendsWebhookEntries: the entries of a deduplicating webhook
// stream appended within Resend of its newest are handed to the sink
// again before their ids are recorded; when that fails their ids are not
// recorded (a redelivery is appended and handed off anew).
func TestWarmResendsWebhookEntries(t *testing.T) {
	s := newWarmStore(t, t.TempDir())
	mem := embedlog.New(embedlog.Config{})
	hooked := s.start(mem, "org-a", "live", hub.KindEvents, webhookEvents(`{"deduplication": true}`))
	now := time.Now()
	l := &timedLog{}
	var ts []time.Time
	for i := range 10 { // 10 min ago, every 20 s; the newest is 7 min ago
		ts = append(ts, now.Add(-10*time.Minute+time.Duration(i)*20*time.Second))
	}
	l.add(hooked, 1, ts...)
	key := func(off int) string { return StreamKey(hooked, fmt.Sprintf("%s-%d", hooked, off)) }
	cfg := WarmConfig{Registry: s.registry(), Streams: s.st, Log: l, TTL: time.Hour, Max: 100, Resend: 70 * time.Second,
		Logger: slog.New(slog.DiscardHandler)}

	sink := &flakySink{got: map[string][]hub.Entry{}}
	cfg.Sink = sink
	w := dedup.NewCompact(100, time.Hour)
	if n, err := Warm(t.Context(), w, cfg); err != nil || n != 10 {
		t.Fatalf("Warm = %d, %v; want 10", n, err)
	}
	var offs []int64
	for _, e := range sink.got[hooked] {
		offs = append(offs, e.Offset)
	}
	if !slices.Equal(offs, []int64{7, 8, 9, 10}) {
		t.Errorf("handed to the sink again: offsets %v, want 7..10 (within 70 s of the newest)", offs)
	}

	sink = &flakySink{got: map[string][]hub.Entry{}}
	sink.failNext(1)
	cfg.Sink = sink
	w = dedup.NewCompact(100, time.Hour)
	if n, err := Warm(t.Context(), w, cfg); err != nil || n != 6 {
		t.Fatalf("Warm with the sink down = %d, %v; want 6 (those not to hand again)", n, err)
	}
	for off := 1; off <= 10; off++ {
		want := dedup.Duplicate
		if off >= 7 {
			want = dedup.Unseen
		}
		if st, _ := w.Claim(t.Context(), key(off)); st != want {
			t.Errorf("offset %d: Claim = %v, want %v", off, st, want)
		}
	}
}

// TestWarmLocal: a window that cannot record at a past time (Local) is
// warmed with Done.
func TestWarmLocal(t *testing.T) {
	s := newWarmStore(t, t.TempDir())
	mem := embedlog.New(embedlog.Config{})
	id := s.start(mem, "org-a", "live", hub.KindEvents, websocketDedup)
	l := &timedLog{}
	var ts []time.Time
	for range 2500 {
		ts = append(ts, time.Now())
	}
	l.add(id, 1, ts...)
	w := dedup.NewLocal(5000, time.Hour)
	n, err := Warm(t.Context(), w, WarmConfig{Registry: s.registry(), Streams: s.st, Log: l, TTL: time.Hour, Max: 5000,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil || n != 2500 || w.Len() != 2500 {
		t.Fatalf("Warm = %d, %v; window holds %d; want 2500", n, err, w.Len())
	}
	if st, _ := w.Claim(t.Context(), StreamKey(id, id+"-2500")); st != dedup.Duplicate {
		t.Errorf("Claim of a warmed id = %v", st)
	}
}

func TestLoggedEventID(t *testing.T) {
	plain, _ := json.Marshal(&event.Event{EventID: "evt_1"})
	escaped, _ := json.Marshal(&event.Event{EventID: `a"b<c>\d`})
	noMeta, _ := json.Marshal(map[string]any{"category": "x", "event_id": "evt_2", "event_type": "y"})
	for _, c := range []struct {
		data []byte
		want string
	}{
		{plain, "evt_1"},
		{escaped, `a"b<c>\d`},
		{noMeta, "evt_2"},
		{[]byte(`{"event_id":""}`), ""},
		{[]byte(`{"vehicle_id":"v1"}`), ""},
		{[]byte(`not json`), ""},
	} {
		if got := loggedEventID(c.data); got != c.want {
			t.Errorf("loggedEventID(%s) = %q, want %q", c.data, got, c.want)
		}
	}
}

// BenchmarkWarm rebuilds a Compact window from a durable stream log of
// 500,000 events (372 bytes each, as the pipeline logs them; all
// but the newest 8 MiB read from segment files) and reports ids loaded
// per second.
func BenchmarkWarm(b *testing.B) {
	const n = 500_000
	dir := b.TempDir()
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	l, err := embedlog.Open(embedlog.Config{Dir: filepath.Join(dir, "streams")})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	reg := streams.NewRegistry(streams.RegistryConfig{}, st, slog.New(slog.DiscardHandler))
	started, err := streams.NewService(reg, st, l).Start(context.Background(), "org-a", "live", hub.KindEvents, []byte(websocketDedup))
	if err != nil {
		b.Fatal(err)
	}
	id := started.Entry.Rec.ID
	var page [][]byte
	for i := range n {
		ev := anEvent("org-a", "live", fmt.Sprintf("evt_%08d-0000-0000-0000-000000000000", i), "vehicle-0001", int64(i)).Event
		ev.Location = &event.Location{Latitude: 40.1, Longitude: -83.2, Address: "1 Main St"}
		ev.EventData = map[string]any{"speed_kmh": 72.5, "decel_g": 0.61}
		data, _ := json.Marshal(ev)
		if page = append(page, data); len(page) == 1000 {
			if _, err := l.Append(context.Background(), id, page); err != nil {
				b.Fatal(err)
			}
			page = nil
		}
	}
	cfg := WarmConfig{Registry: reg, Streams: st, Log: l, TTL: time.Hour, Max: 10_000_000, Logger: slog.New(slog.DiscardHandler)}
	for b.Loop() {
		w := dedup.NewCompact(10_000_000, time.Hour)
		if got, err := Warm(context.Background(), w, cfg); err != nil || got != n {
			b.Fatalf("Warm = %d, %v", got, err)
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "ids/s")
}

// TestWaitingEventReachesItsStreamAfterCrash: an event one deduplicating
// stream took while it waited in another's reorder buffer is handed
// again after a crash (the bus committed no further than it): the
// ordering stream gets it, the other does not get it twice.
func TestWaitingEventReachesItsStreamAfterCrash(t *testing.T) {
	dir := t.TempDir()
	s := newWarmStore(t, filepath.Join(dir, "db"))
	logDir := filepath.Join(dir, "streams")
	log1 := openLog(t, logDir)
	ordered := s.start(log1, "org-a", "live", hub.KindEvents, `{"stream_config": {"delivery_method": "websocket"}, "processing_rules": {"deduplication": true, "event_ordering": true}}`)
	plain := s.start(log1, "org-a", "live", hub.KindEvents, websocketDedup)
	logger := slog.New(slog.DiscardHandler)
	batch := orderedEvents(t, 0, 1, 3) // 3 waits for 2 in the ordering stream
	p1 := New(Config{}, nil, s.registry(), log1, dedup.NewCompact(1000, time.Hour), nil, nil, logger)
	p1.KeepStreamIDs(dedup.NewCompact(1000, time.Hour))
	if err := p1.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	checkHeld(t, p1, 1, true)
	if err := log1.Close(); err != nil { // SIGKILL
		t.Fatal(err)
	}

	log2 := openLog(t, logDir)
	t.Cleanup(func() { log2.Close() })
	reg := s.registry()
	taken := dedup.NewCompact(1000, time.Hour)
	if _, err := Warm(t.Context(), taken, WarmConfig{Registry: reg, Streams: s.st, Log: log2, TTL: time.Hour, Max: 1000, Logger: logger}); err != nil {
		t.Fatal(err)
	}
	p2 := New(Config{}, nil, reg, log2, dedup.NewCompact(1000, time.Hour), nil, nil, logger)
	p2.KeepStreamIDs(taken)
	if err := p2.Handle(t.Context(), batch[1:]); err != nil { // the bus hands again from the held offset
		t.Fatal(err)
	}
	if got := loggedIDs(t, log2, ordered); !slices.Equal(got, []string{"evt_1", "evt_3"}) {
		t.Errorf("the ordering stream holds %v, want [evt_1 evt_3]", got)
	}
	if got := loggedIDs(t, log2, plain); !slices.Equal(got, []string{"evt_1", "evt_3"}) {
		t.Errorf("the other deduplicating stream holds %v, want [evt_1 evt_3] once each", got)
	}
}
