package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/vmihailenco/msgpack/v5"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/fleethub/fleethub/hub/event"
)

// sealedMessage is the message of an encrypted stream.
type sealedMessage struct {
	Encrypted struct {
		KeyID      string `json:"key_id" msgpack:"key_id"`
		Nonce      string `json:"nonce" msgpack:"nonce"`
		Ciphertext string `json:"ciphertext" msgpack:"ciphertext"`
	} `json:"encrypted" msgpack:"encrypted"`
}

// openMessage decrypts an encrypted stream's message as a receiver does
// (docs/streaming.md#encryption): the key of the start answer, the
// stream_id of the wrapper as additional data.
func openMessage(key, streamID string, m sealedMessage) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(key)
	if err != nil {
		return nil, err
	}
	nonce, err := base64.StdEncoding.DecodeString(m.Encrypted.Nonce)
	if err != nil {
		return nil, err
	}
	ct, err := base64.StdEncoding.DecodeString(m.Encrypted.Ciphertext)
	if err != nil {
		return nil, err
	}
	aead, err := chacha20poly1305.NewX(k)
	if err != nil {
		return nil, err
	}
	if len(nonce) != aead.NonceSize() {
		return nil, fmt.Errorf("nonce of %d bytes", len(nonce))
	}
	return aead.Open(nil, nonce, ct, []byte(streamID))
}

func openRaw(t *testing.T, key, streamID string, raw []byte) []byte {
	t.Helper()
	var m sealedMessage
	if err := json.Unmarshal(raw, &m); err != nil || m.Encrypted.Ciphertext == "" {
		t.Fatalf("not an encrypted message: %s (%v)", raw, err)
	}
	plain, err := openMessage(key, streamID, m)
	if err != nil {
		t.Fatalf("open %s: %v", raw, err)
	}
	return plain
}

// startEncrypted starts a stream with encryption and returns its id and
// the key of the start answer.
func startEncrypted(t *testing.T, n *node, key, kind string, body map[string]any) (string, string) {
	t.Helper()
	r := n.do("POST", "/api/v1/streaming/"+kind+"/start", key, body)
	if r.Status != 201 {
		t.Fatalf("start %s %v: %d %s", kind, body, r.Status, r.Body)
	}
	v := r.json(t)
	enc, _ := v["encryption"].(map[string]any)
	k, _ := enc["key"].(string)
	id, _ := enc["key_id"].(string)
	if enc["algorithm"] != "XChaCha20-Poly1305" || !strings.HasPrefix(id, "ek_") || len(id) != 19 || k == "" {
		t.Fatalf("start answer's encryption: %s", r.Body)
	}
	return v["stream_id"].(string), k
}

// TestEncryptedEventStream: a websocket client of an encrypted event
// stream receives messages that decrypt, with the key of the start
// answer, to exactly the events a plain stream with the same filter
// delivers; a resume with last_offset replays them encrypted, msgpack
// frames carry them too; a changed ciphertext, or one moved to another
// stream, does not open; status shows the key id, never the key; and
// configure cannot turn encryption on or off.
func TestEncryptedEventStream(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	filter := map[string]any{"vehicle_ids": []string{"veh-enc"}}
	enc, key := startEncrypted(t, n, k, "events", map[string]any{"event_filters": filter, "stream_config": map[string]any{"encryption": true}})
	plain := startKind(t, n, k, "events", map[string]any{"event_filters": filter})
	ce, cp := n.dial(t, k, "stream_id="+enc), n.dial(t, k, "stream_id="+plain)
	expectSubscribed(t, ce)
	expectSubscribed(t, cp)
	n.ingestEvents(t, k, "veh-enc", 0, 5)
	got, want := readEvents(t, ce, 5), readEvents(t, cp, 5)
	for i := range got {
		if got[i].StreamID != enc || got[i].Offset != int64(i+1) || bytes.Contains(got[i].Message, []byte("veh-enc")) {
			t.Fatalf("encrypted delivery %d: %+v", i, got[i])
		}
		if p := openRaw(t, key, enc, got[i].Message); !bytes.Equal(p, want[i].Message) {
			t.Fatalf("message %d decrypts to %s, the plain stream delivered %s", i+1, p, want[i].Message)
		}
	}

	// tampered, or under another stream's id: no
	var m sealedMessage
	if err := json.Unmarshal(got[0].Message, &m); err != nil {
		t.Fatal(err)
	}
	if _, err := openMessage(key, plain, m); err == nil {
		t.Error("a message opened under another stream_id")
	}
	ct, _ := base64.StdEncoding.DecodeString(m.Encrypted.Ciphertext)
	ct[len(ct)/2] ^= 0x40
	m.Encrypted.Ciphertext = base64.StdEncoding.EncodeToString(ct)
	if _, err := openMessage(key, enc, m); err == nil {
		t.Error("a changed ciphertext opened")
	}

	// a resume replays the log, encrypted
	cr := n.dial(t, k, "stream_id="+enc+"&last_offset=2")
	expectSubscribed(t, cr)
	for i, d := range readEvents(t, cr, 3) {
		if d.Offset != int64(i+3) || !bytes.Equal(openRaw(t, key, enc, d.Message), want[i+2].Message) {
			t.Fatalf("replayed %d: %s", d.Offset, d.Message)
		}
	}
	// msgpack frames carry the same encrypted message
	cm := n.dial(t, k, "stream_id="+enc+"&last_offset=4&encoding=msgpack")
	expectSubscribed(t, cm)
	cm.SetReadDeadline(time.Now().Add(10 * time.Second))
	typ, frame, err := cm.ReadMessage()
	if err != nil || typ != websocket.BinaryMessage {
		t.Fatalf("msgpack frame: %d, %v", typ, err)
	}
	var mf struct {
		StreamID string        `msgpack:"stream_id"`
		Offset   int64         `msgpack:"offset"`
		Message  sealedMessage `msgpack:"message"`
	}
	if err := msgpack.Unmarshal(frame, &mf); err != nil || mf.Offset != 5 {
		t.Fatalf("msgpack frame %x: %+v, %v", frame, mf, err)
	}
	if p, err := openMessage(key, enc, mf.Message); err != nil || !bytes.Equal(p, want[4].Message) {
		t.Fatalf("msgpack message decrypts to %s, %v", p, err)
	}

	// status and listing: the key id, never the key
	for _, path := range []string{"/api/v1/streaming/events/status/" + enc, "/api/v1/streaming/streams"} {
		r := n.do("GET", path, k, nil)
		if r.Status != 200 || strings.Contains(string(r.Body), key) || !strings.Contains(string(r.Body), `"encryption":{"algorithm":"XChaCha20-Poly1305","key_id":"ek_`) {
			t.Errorf("%s: %d %s", path, r.Status, r.Body)
		}
	}
	if st := n.do("GET", "/api/v1/streaming/events/status/"+plain, k, nil).json(t); st["encryption"] != nil {
		t.Errorf("a plain stream's status shows encryption %v", st["encryption"])
	}

	// configure cannot change it
	for _, c := range []struct {
		id   string
		body map[string]any
		ok   bool
	}{
		{enc, map[string]any{"stream_config": map[string]any{"encryption": false}}, false},
		{plain, map[string]any{"stream_config": map[string]any{"encryption": true}}, false},
		{enc, map[string]any{"stream_config": map[string]any{"encryption": true, "include_metadata": true}}, true},
		{plain, map[string]any{"stream_config": map[string]any{"encryption": false}}, true},
	} {
		r := n.do("PUT", "/api/v1/streaming/events/configure/"+c.id, k, c.body)
		switch {
		case c.ok && r.Status != 200:
			t.Errorf("configure %v: %d %s", c.body, r.Status, r.Body)
		case !c.ok && (r.Status != 400 || r.errCode(t) != "validation_failed" || r.json(t)["error"].(map[string]any)["details"].(map[string]any)["stream_config.encryption"] == nil):
			t.Errorf("configure %v: %d %s, want 400 validation_failed naming stream_config.encryption", c.body, r.Status, r.Body)
		case c.ok && strings.Contains(string(r.Body), key):
			t.Errorf("configure answer shows the key: %s", r.Body)
		}
	}
	n.ingestEvents(t, k, "veh-enc", 5, 1)
	if d := readEvents(t, ce, 1)[0]; !bytes.Equal(openRaw(t, key, enc, d.Message), readEvents(t, cp, 1)[0].Message) {
		t.Errorf("after configure: %s", d.Message)
	}
}

// TestEncryptedWebhookStream: a webhook receiver gets an encrypted
// stream's messages encrypted, one per request and in batches, each
// request signed over the encrypted body it carries, each message
// decrypting to the event.
func TestEncryptedWebhookStream(t *testing.T) {
	var mu sync.Mutex
	hits := map[string][]signedHit{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits[r.URL.Path] = append(hits[r.URL.Path], signedHit{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	received := func(path string) []signedHit {
		mu.Lock()
		defer mu.Unlock()
		return append([]signedHit(nil), hits[path]...)
	}
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	type stream struct{ id, key, secret string }
	start := func(path string, sc map[string]any) stream {
		sc["delivery_method"], sc["encryption"] = "webhook", true
		r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{"stream_config": sc, "webhook_url": rc.URL + path,
			"event_filters": map[string]any{"vehicle_ids": []string{"veh-hook"}}})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		v := r.json(t)
		return stream{v["stream_id"].(string), v["encryption"].(map[string]any)["key"].(string), v["webhook_secret"].(string)}
	}
	one := start("/one", map[string]any{})
	batched := start("/batched", map[string]any{"batch_events": true, "batch_size": 5, "max_wait_time": 200})
	for i := range 5 {
		n.publishEvent("org-a", "test", &event.Event{EventID: fmt.Sprintf("hook-%d", i), EventType: "harsh_braking", Category: "safety_events",
			Timestamp: time.Now().UTC(), Severity: "high", Priority: "urgent", Source: event.Source{VehicleID: "veh-hook"}})
	}
	type wrapped struct {
		StreamID string          `json:"stream_id"`
		Offset   int64           `json:"offset"`
		Message  json.RawMessage `json:"message"`
	}
	for _, c := range []struct {
		path string
		s    stream
	}{{"/one", one}, {"/batched", batched}} {
		var msgs []wrapped
		waitFor(t, "five messages at "+c.path, func() bool {
			msgs = msgs[:0]
			for _, h := range received(c.path) {
				var batch []wrapped
				if json.Unmarshal(h.body, &batch) != nil {
					var w wrapped
					if err := json.Unmarshal(h.body, &w); err != nil {
						t.Fatalf("body %s: %v", h.body, err)
					}
					batch = []wrapped{w}
				}
				msgs = append(msgs, batch...)
			}
			return len(msgs) >= 5
		})
		for _, h := range received(c.path) {
			if err := verifyWebhook(c.s.secret, h.header, h.body); err != nil {
				t.Errorf("%s: signature: %v", c.path, err)
			}
			if bytes.Contains(h.body, []byte("harsh_braking")) || bytes.Contains(h.body, []byte("veh-hook")) {
				t.Errorf("%s: the body holds plain text: %s", c.path, h.body)
			}
		}
		if c.path == "/batched" && len(received(c.path)) >= 5 {
			t.Errorf("batched stream: %d requests for 5 messages", len(received(c.path)))
		}
		seen := map[string]bool{}
		for _, w := range msgs {
			var ev event.Event
			if err := json.Unmarshal(openRaw(t, c.s.key, c.s.id, w.Message), &ev); err != nil || w.StreamID != c.s.id || ev.Source.VehicleID != "veh-hook" {
				t.Fatalf("%s: %+v decrypts to %+v, %v", c.path, w, ev, err)
			}
			seen[ev.EventID] = true
		}
		if len(seen) != 5 {
			t.Errorf("%s: events %v", c.path, seen)
		}
	}
}

// TestEncryptedTelemetryStream: a telemetry stream with encryption and
// precision standard delivers its messages rounded, then encrypted.
func TestEncryptedTelemetryStream(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id, key := startEncrypted(t, n, k, "telemetry", map[string]any{"vehicles": []string{"veh-s"}, "data_types": []string{"engine_diagnostics"},
		"stream_config": map[string]any{"encryption": true, "quality_settings": map[string]any{"precision": "standard"}}})
	c := n.dial(t, k, "stream_id="+id)
	expectSubscribed(t, c)
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{telemetryMsg(1, 2150.37, 92.456)}}); r.Status != 202 {
		t.Fatalf("ingest: %d %s", r.Status, r.Body)
	}
	d := readEvents(t, c, 1)[0]
	var m struct {
		Data struct {
			Engine map[string]float64 `json:"engine"`
		} `json:"data"`
		QualityIndicators map[string]any `json:"quality_indicators"`
	}
	if err := json.Unmarshal(openRaw(t, key, id, d.Message), &m); err != nil {
		t.Fatal(err)
	}
	if m.Data.Engine["rpm"] != 2150 || m.Data.Engine["coolant_temp"] != 92.46 || m.QualityIndicators["signal_strength"] != 87.65 {
		t.Errorf("decrypted message %+v, want rpm 2150, coolant_temp 92.46, signal_strength 87.65", m)
	}
}
