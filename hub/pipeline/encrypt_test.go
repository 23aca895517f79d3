package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
)

var alertID = regexp.MustCompile(`alr_[0-9a-f]+`)

// sameOpened checks that each entry of an encrypted stream (ents) opens,
// with the stream's key, to exactly the entry of a plain stream at the
// same offset (pl), and that it holds no plain text.
func sameOpened(t *testing.T, f *fixture, enc string, ents, pl []hub.Entry, want int) {
	t.Helper()
	if len(ents) != want || len(pl) != want {
		t.Fatalf("%d encrypted entries and %d plain ones, want %d each", len(ents), len(pl), want)
	}
	s := f.reg.ByID(enc).Sealer
	for i, e := range ents {
		if bytes.Contains(e.Data, []byte(`"vehicle_id"`)) || !bytes.HasPrefix(e.Data, []byte(`{"encrypted":{"key_id":"ek_`)) {
			t.Fatalf("entry %d is not sealed: %s", e.Offset, e.Data)
		}
		got, err := s.Open(e.Data)
		// an alert's event_id is derived from its stream's id
		if err != nil || !bytes.Equal(alertID.ReplaceAll(got, nil), alertID.ReplaceAll(pl[i].Data, nil)) || e.Offset != pl[i].Offset {
			t.Fatalf("entry %d opens to %s (%v), the plain stream's is %s", e.Offset, got, err, pl[i].Data)
		}
	}
}

// TestEncryptedStreamsLogSealedMessages: an encrypted stream's log (and
// the webhook queue) holds each message sealed, opening to what the
// stream would have logged unencrypted, whichever way the message came:
// as it was ingested, shaped by the stream's settings (precision,
// include_metadata, alerts), released from a reorder buffer, or retried
// after a failed hand-off.
func TestEncryptedStreamsLogSealedMessages(t *testing.T) {
	f := newFixture(t)
	events := f.start("org-a", "live", hub.KindEvents, `{}`)
	encEvents := f.start("org-a", "live", hub.KindEvents, `{"stream_config": {"encryption": true}}`)
	tel := f.start("org-a", "live", hub.KindTelemetry, `{"stream_config": {"include_metadata": false, "quality_settings": {"precision": "standard"}, "alert_integration": {"real_time_alerts": true}}, "filters": {"alert_thresholds": {"engine_rpm": 1502}}}`)
	encTel := f.start("org-a", "live", hub.KindTelemetry, `{"stream_config": {"encryption": true, "include_metadata": false, "quality_settings": {"precision": "standard"}, "alert_integration": {"real_time_alerts": true}}, "filters": {"alert_thresholds": {"engine_rpm": 1502}}}`)
	// one webhook stream, the one whose hand-off fails; the plain one
	// beside it fails with its batch all the same
	ord := f.start("org-a", "live", hub.KindEvents, `{"processing_rules": {"event_ordering": true, "correlation_enabled": true}}`)
	encOrd := f.start("org-a", "live", hub.KindEvents, `{"stream_config": {"delivery_method": "webhook", "encryption": true}, "webhook_url": "https://hooks.example.com/in", "processing_rules": {"event_ordering": true, "correlation_enabled": true}}`)
	p := f.pipeline(nil, nil)

	// 1, 3: 3 waits behind the gap; the batch bringing 2 fails its
	// hand-off, and the expiry loop retries what it released
	if err := p.Handle(t.Context(), orderedEvents(t, 0, 1, 3)); err != nil {
		t.Fatal(err)
	}
	f.sink.failNext(1)
	if err := p.Handle(t.Context(), orderedEvents(t, 2, 2)); err == nil {
		t.Fatal("the hand-off did not fail")
	}
	if err := p.Handle(t.Context(), orderedEvents(t, 2, 2)); err != nil {
		t.Fatal(err)
	}
	p.flushHeld(t.Context())
	var tm []hub.Message
	for i := range 4 {
		env := aTelemetry("org-a", "live", "v1", int64(i))
		env.Telemetry.Data = map[string]any{"engine": map[string]any{"rpm": 1500.123456 + float64(i), "coolant_temp": 91.98765}}
		tm = append(tm, msg(t, hub.TopicTelemetry, int64(i), env))
	}
	if err := p.Handle(t.Context(), tm); err != nil {
		t.Fatal(err)
	}

	read := func(id string) []hub.Entry {
		ents, err := f.log.Read(t.Context(), id, 1, 100_000)
		if err != nil {
			t.Fatal(err)
		}
		return ents
	}
	// the failed batch reached the logs, not the queue: its events are
	// logged again with the redelivery (at least once), alike on both
	sameOpened(t, f, encEvents, read(encEvents), read(events), 4)
	sameOpened(t, f, encOrd, read(encOrd), read(ord), 5)
	logged := read(encOrd)
	if len(f.sink.got[encOrd]) < 3 {
		t.Errorf("the queue took %d entries of the encrypted webhook stream, want 3 or more", len(f.sink.got[encOrd]))
	}
	for _, e := range f.sink.got[encOrd] {
		if !bytes.Equal(e.Data, logged[e.Offset-1].Data) {
			t.Errorf("the queue's entry %d is not the log's: %s", e.Offset, e.Data)
		}
	}
	sameOpened(t, f, encTel, read(encTel), read(tel), 4) // 2 readings reaching 1502 rpm, each with its alert
}

// TestWarmOpensEncryptedLogs: after a restart the dedup window learns
// the event ids of an encrypted deduplicating stream from its sealed
// log, as from a plain one's.
func TestWarmOpensEncryptedLogs(t *testing.T) {
	dir := t.TempDir()
	s := newWarmStore(t, filepath.Join(dir, "db"))
	logDir := filepath.Join(dir, "streams")
	log1 := openLog(t, logDir)
	enc := s.start(log1, "org-a", "live", hub.KindEvents, `{"stream_config": {"encryption": true}, "processing_rules": {"deduplication": true}}`)
	logger := slog.New(slog.DiscardHandler)
	var batch []hub.Message
	for i := range 5 {
		batch = append(batch, msg(t, hub.TopicEvents, int64(i), anEvent("org-a", "live", fmt.Sprintf("evt_%d", i), "v1", int64(i+1))))
	}
	p1 := New(Config{}, nil, s.registry(), log1, dedup.NewCompact(1000, time.Hour), nil, nil, logger)
	if err := p1.Handle(t.Context(), batch); err != nil {
		t.Fatal(err)
	}
	if err := log1.Close(); err != nil {
		t.Fatal(err)
	}
	log2 := openLog(t, logDir)
	t.Cleanup(func() { log2.Close() })
	reg := s.registry()
	w := dedup.NewCompact(1000, time.Hour)
	n, err := Warm(context.Background(), w, WarmConfig{Registry: reg, Streams: s.st, Log: log2, TTL: time.Hour, Max: 1000, Logger: logger})
	if err != nil || n != 5 {
		t.Fatalf("Warm = %d, %v; want the 5 ids of the sealed log", n, err)
	}
	p2 := New(Config{}, nil, reg, log2, dedup.NewCompact(1000, time.Hour), nil, nil, logger)
	p2.KeepStreamIDs(w)
	if err := p2.Handle(t.Context(), batch); err != nil { // the bus's redelivery
		t.Fatal(err)
	}
	if last, _ := log2.Last(t.Context(), enc); last != 5 {
		t.Errorf("the encrypted deduplicating stream holds %d entries after the redelivery, want 5", last)
	}
}
