package streams

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/fleethub/fleethub/hub"
)

// sameSink compares what sinks read of two compilations of a stream.
func sameSink(a, b hub.StreamInfo) bool {
	return a.Kind == b.Kind && a.Delivery == b.Delivery && a.WebhookURL == b.WebhookURL &&
		a.BatchEvents == b.BatchEvents && a.BatchSize == b.BatchSize && a.MaxWait == b.MaxWait &&
		a.Compression == b.Compression && a.LagNotice == b.LagNotice && a.AtLeastOnce == b.AtLeastOnce
}

// FuzzStartBody feeds arbitrary start bodies of both kinds to the start
// checks. It never panics; a body refused is refused with the field it
// names; a body accepted is stored as a configuration that every node
// loads again into the same stream (the registry decodes the stored JSON
// and compiles it), and that a configure changing nothing accepts as the
// same stream.
func FuzzStartBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, events bool, body []byte) {
		kind := hub.KindTelemetry
		if events {
			kind = hub.KindEvents
		}
		cfg, info, err := parseStart(kind, body)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field == "" || fe.Message == "" {
				t.Fatalf("refused without naming a field: %v", err)
			}
			return
		}
		if info.Delivery != "websocket" && info.Delivery != "webhook" {
			t.Fatalf("delivery %q", info.Delivery)
		}
		if (info.Delivery == "webhook") != (info.WebhookURL != "") {
			t.Fatalf("delivery %q with webhook URL %q", info.Delivery, info.WebhookURL)
		}
		if info.BatchSize < 1 || info.BatchSize > 1000 {
			t.Fatalf("batch size %d", info.BatchSize)
		}
		raw, err := json.Marshal(cfg)
		if err != nil {
			t.Fatalf("stored form: %v", err)
		}
		var loaded Config
		if err := json.Unmarshal(raw, &loaded); err != nil {
			t.Fatalf("stored %s does not load: %v", raw, err)
		}
		_, again, err := Compile(kind, &loaded)
		if err != nil {
			t.Fatalf("stored %s does not compile: %v", raw, err)
		}
		if !sameSink(info, again) {
			t.Fatalf("stored %s loads as %+v, started as %+v", raw, again, info)
		}
		next, err := merged(kind, "s", &cfg, map[string]any{})
		if err != nil {
			t.Fatalf("an empty configure of %s: %v", raw, err)
		}
		if cfg.deliversByWebhook() {
			next.webhookByURL()
		}
		var p problems
		if refused(&p, kind, next); p.err() != nil {
			t.Fatalf("an empty configure of %s refused: %v", raw, p.err())
		}
		_, conf, err := Compile(kind, next)
		if err != nil {
			t.Fatalf("an empty configure of %s does not compile: %v", raw, err)
		}
		if !sameSink(info, conf) {
			t.Fatalf("an empty configure of %s gives %+v, started as %+v", raw, conf, info)
		}
	})
}
