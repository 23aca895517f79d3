package main

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/webhook"
	"github.com/fleethub/fleethub/hub/event"
)

// signedHit is a received webhook request.
type signedHit struct {
	header http.Header
	body   []byte
}

// verifyWebhook checks a Standard Webhooks signature as a receiver
// would: HMAC-SHA256 of "id.timestamp.body" under the base64 key after
// whsec_, base64, one of the space-separated "v1,…" values.
func verifyWebhook(secret string, h http.Header, body []byte) error {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, "whsec_"))
	if err != nil {
		return err
	}
	id, ts := h.Get("webhook-id"), h.Get("webhook-timestamp")
	if id == "" || ts == "" {
		return fmt.Errorf("missing webhook-id or webhook-timestamp")
	}
	mac := hmac.New(sha256.New, key)
	fmt.Fprintf(mac, "%s.%s.", id, ts)
	mac.Write(body)
	want := base64.StdEncoding.EncodeToString(mac.Sum(nil))
	for _, s := range strings.Fields(h.Get("webhook-signature")) {
		if v, sig, _ := strings.Cut(s, ","); v == "v1" && hmac.Equal([]byte(sig), []byte(want)) {
			return nil
		}
	}
	return fmt.Errorf("no signature of %q verifies", h.Get("webhook-signature"))
}

func TestWebhookStreamEndToEnd(t *testing.T) {
	var mu sync.Mutex
	var hits []signedHit
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		hits = append(hits, signedHit{r.Header.Clone(), b})
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	received := func() []signedHit {
		mu.Lock()
		defer mu.Unlock()
		return append([]signedHit(nil), hits...)
	}

	clk := &clock{}
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	cfg.Now = clk.now
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	other := n.key("org-b", "test", []string{"streams:manage", "streams:read"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"event_filters": map[string]any{"categories": []string{"safety_events"}},
		"stream_config": map[string]any{"delivery_method": "webhook"},
		"webhook_url":   rc.URL + "/hooks/fleet",
	})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	s := r.json(t)
	id, secret := s["stream_id"].(string), s["webhook_secret"].(string)
	if !strings.HasPrefix(secret, "whsec_") || s["delivery_method"] != "webhook" {
		t.Fatalf("start answer %s", r.Body)
	}
	for i := range 5 {
		n.publishEvent("org-a", "test", &event.Event{EventID: fmt.Sprintf("ev-%d", i), EventType: "harsh_braking", Category: "safety_events",
			Timestamp: time.Now().UTC(), Severity: "high", Priority: "urgent", Source: event.Source{VehicleID: "v1"}})
	}
	n.publishEvent("org-a", "test", &event.Event{EventID: "ev-x", EventType: "refuel", Category: "operational_events", Timestamp: time.Now().UTC(),
		Severity: "low", Source: event.Source{VehicleID: "v1"}}) // not matched
	waitFor(t, "five signed deliveries", func() bool { return len(received()) >= 5 })
	ids := map[string]bool{}
	events := map[string]bool{}
	for _, h := range received() {
		if err := verifyWebhook(secret, h.header, h.body); err != nil {
			t.Errorf("signature: %v", err)
		}
		var p struct {
			StreamID string      `json:"stream_id"`
			Offset   int64       `json:"offset"`
			Message  event.Event `json:"message"`
		}
		if err := json.Unmarshal(h.body, &p); err != nil || p.StreamID != id || p.Offset < 1 {
			t.Errorf("payload %s: %v", h.body, err)
		}
		ids[h.header.Get("webhook-id")] = true
		events[p.Message.EventID] = true
	}
	if len(ids) != 5 || len(events) != 5 || events["ev-x"] {
		t.Errorf("received webhook-ids %v, events %v", ids, events)
	}

	// the delivery log, and the status counters
	path := "/api/v1/streaming/events/deliveries/" + id
	var list map[string]any
	waitFor(t, "five delivered in the log", func() bool {
		list = n.do("GET", path+"?status=delivered", k, nil).json(t)
		return len(list["deliveries"].([]any)) == 5
	})
	d0 := list["deliveries"].([]any)[0].(map[string]any)
	if d0["attempts"] != float64(1) || d0["last_status_code"] != float64(204) || !ids[d0["id"].(string)] {
		t.Errorf("delivery %v", d0)
	}
	if ep := list["endpoint"].(map[string]any); ep["circuit"] != "closed" || ep["disabled"] != false {
		t.Errorf("endpoint %v", ep)
	}
	waitFor(t, "delivered counter", func() bool {
		c := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)["counters"].(map[string]any)
		return c["delivered"] == float64(5)
	})
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if wh, _ := st["webhook"].(map[string]any); wh == nil || wh["circuit"] != "closed" || wh["counts"].(map[string]any)["delivered"] != float64(5) {
		t.Errorf("status webhook block: %v", st["webhook"])
	}
	if r := n.do("GET", path, other, nil); r.Status != 404 || r.errCode(t) != "stream_not_found" {
		t.Errorf("another organization's deliveries: %d %s", r.Status, r.Body)
	}

	// rotation: both secrets sign during the overlap
	r = n.do("PUT", "/api/v1/streaming/events/configure/"+id, k, map[string]any{"rotate_secret": true})
	fresh, _ := r.json(t)["webhook_secret"].(string)
	if r.Status != 200 || fresh == "" || fresh == secret {
		t.Fatalf("rotate: %d %s", r.Status, r.Body)
	}
	clk.advance(webhook.DefaultSecretTTL + 100*time.Millisecond) // past the signer's cache of the secret, on the dispatcher's clock
	n.publishEvent("org-a", "test", &event.Event{EventID: "ev-rotated", EventType: "harsh_braking", Category: "safety_events",
		Timestamp: time.Now().UTC(), Severity: "high", Source: event.Source{VehicleID: "v1"}})
	waitFor(t, "a delivery after rotation", func() bool { return len(received()) >= 6 })
	last := received()[5]
	if err := verifyWebhook(fresh, last.header, last.body); err != nil {
		t.Errorf("new secret: %v", err)
	}
	if err := verifyWebhook(secret, last.header, last.body); err != nil {
		t.Errorf("old secret during the overlap: %v", err)
	}

	// replay: the same webhook-ids come again
	var some []string
	for id := range ids {
		some = append(some, id)
	}
	some = some[:2]
	r = n.do("POST", path+"/replay", k, map[string]any{"delivery_ids": some})
	if r.Status != 200 || r.json(t)["requeued"] != float64(2) {
		t.Fatalf("replay: %d %s", r.Status, r.Body)
	}
	waitFor(t, "replayed deliveries", func() bool { return len(received()) >= 8 })
	again := map[string]bool{}
	for _, h := range received()[6:] {
		again[h.header.Get("webhook-id")] = true
		if err := verifyWebhook(fresh, h.header, h.body); err != nil {
			t.Errorf("replayed signature: %v", err)
		}
	}
	for _, id := range some {
		if !again[id] {
			t.Errorf("replayed %s not received under its webhook-id (got %v)", id, again)
		}
	}
}

// The status counts failed attempts, not deliveries in a state: a
// delivery that failed once and then went through leaves one failed
// attempt, while no delivery is failed any longer.
func TestWebhookStatusCountsFailedAttempts(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
		"stream_config": map[string]any{"delivery_method": "webhook"},
		"webhook_url":   rc.URL,
	})
	if r.Status != 201 {
		t.Fatalf("start: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["stream_id"].(string)
	n.publishEvent("org-a", "test", &event.Event{EventID: "ev-1", EventType: "harsh_braking", Category: "safety_events",
		Timestamp: time.Now().UTC(), Severity: "high", Source: event.Source{VehicleID: "v1"}})
	var st map[string]any
	waitFor(t, "the delivery after its retry", func() bool {
		st = n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
		wh, _ := st["webhook"].(map[string]any)
		return wh != nil && wh["counts"].(map[string]any)["delivered"] == float64(1)
	})
	c := st["counters"].(map[string]any)
	if c["failed_attempts"] != float64(1) || c["delivered"] != float64(1) || c["dead_lettered"] != float64(0) {
		t.Errorf("counters %v, want failed_attempts 1, delivered 1, dead_lettered 0", c)
	}
	for _, gone := range []string{"failed", "pending"} {
		if _, ok := c[gone]; ok {
			t.Errorf("counters carry %q (%v): a state, not a count; it is webhook.counts'", gone, c)
		}
	}
	if wc := st["webhook"].(map[string]any)["counts"].(map[string]any); wc["failed"] != float64(0) || wc["pending"] != float64(0) {
		t.Errorf("webhook.counts %v, want nothing failed or pending", wc)
	}
}

// A receiver that answers 400 or 410 Gone (as during a deploy) is
// retried: the delivery is failed, not dead-lettered, the endpoint is not
// disabled, and the retry that meets a 2xx delivers it.
func TestWebhookErrorAnswersAreRetried(t *testing.T) {
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read"}, 100000)
	for _, code := range []int{http.StatusBadRequest, http.StatusGone} {
		t.Run(strconv.Itoa(code), func(t *testing.T) {
			var calls atomic.Int64
			rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) == 1 {
					w.WriteHeader(code)
					return
				}
				w.WriteHeader(http.StatusNoContent)
			}))
			defer rc.Close()
			r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
				"event_filters": map[string]any{"vehicle_ids": []string{"v" + strconv.Itoa(code)}},
				"stream_config": map[string]any{"delivery_method": "webhook"},
				"webhook_url":   rc.URL,
			})
			if r.Status != 201 {
				t.Fatalf("start: %d %s", r.Status, r.Body)
			}
			id := r.json(t)["stream_id"].(string)
			n.publishEvent("org-a", "test", &event.Event{EventID: "ev-" + strconv.Itoa(code), EventType: "harsh_braking", Category: "safety_events",
				Timestamp: time.Now().UTC(), Severity: "high", Source: event.Source{VehicleID: "v" + strconv.Itoa(code)}})
			var list map[string]any
			waitFor(t, "the first answer recorded", func() bool {
				list = n.do("GET", "/api/v1/streaming/events/deliveries/"+id, k, nil).json(t)
				ds, _ := list["deliveries"].([]any)
				return len(ds) == 1 && ds[0].(map[string]any)["attempts"].(float64) >= 1
			})
			d := list["deliveries"].([]any)[0].(map[string]any)
			if d["status"] == "failed" {
				if d["last_status_code"] != float64(code) || d["next_attempt_at"] == nil {
					t.Errorf("after a %d: %v, want the code and a next attempt", code, d)
				}
			} else if d["status"] != "delivered" { // the retry may have come already
				t.Errorf("after a %d the delivery is %v, want failed (to be retried)", code, d["status"])
			}
			if ep := list["endpoint"].(map[string]any); ep["disabled"] != false {
				t.Errorf("endpoint %v after a %d, want it not disabled", ep, code)
			}
			waitFor(t, "the delivery after its retry", func() bool {
				list = n.do("GET", "/api/v1/streaming/events/deliveries/"+id, k, nil).json(t)
				ds, _ := list["deliveries"].([]any)
				return len(ds) == 1 && ds[0].(map[string]any)["status"] == "delivered"
			})
			if d := list["deliveries"].([]any)[0].(map[string]any); d["attempts"] != float64(2) || d["last_status_code"] != float64(204) {
				t.Errorf("delivered %v, want 2 attempts, the last a 204", d)
			}
			st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
			if c := st["counters"].(map[string]any); c["failed_attempts"] != float64(1) || c["dead_lettered"] != float64(0) {
				t.Errorf("counters %v, want failed_attempts 1, dead_lettered 0", c)
			}
		})
	}
}

// TestWebhookURLAloneDeliversByWebhook: the interface addresses a webhook
// through webhook_url; a stream started with it and no delivery_method
// (telemetry or events) delivers there, signed, and says so at start.
func TestWebhookURLAloneDeliversByWebhook(t *testing.T) {
	var mu sync.Mutex
	paths := map[string]int{}
	rc := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			t.Error(err)
		}
		mu.Lock()
		paths[r.URL.Path]++
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	defer rc.Close()
	hits := func(path string) int {
		mu.Lock()
		defer mu.Unlock()
		return paths[path]
	}
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"streams:manage", "streams:read", "telemetry:write"}, 100000)
	for _, c := range []struct{ kind, path string }{{"events", "/hooks/events"}, {"telemetry", "/hooks/telemetry"}} {
		r := n.do("POST", "/api/v1/streaming/"+c.kind+"/start", k, map[string]any{"webhook_url": rc.URL + c.path})
		if r.Status != 201 {
			t.Fatalf("start %s: %d %s", c.kind, r.Status, r.Body)
		}
		s := r.json(t)
		if s["delivery_method"] != "webhook" || !strings.HasPrefix(fmt.Sprint(s["webhook_secret"]), "whsec_") {
			t.Fatalf("start %s answered %s, want webhook delivery with its secret", c.kind, r.Body)
		}
	}
	n.publishEvent("org-a", "test", &event.Event{EventID: "ev-1", EventType: "harsh_braking", Category: "safety_events",
		Timestamp: time.Now().UTC(), Severity: "high", Source: event.Source{VehicleID: "v1"}})
	waitFor(t, "the event at its webhook", func() bool { return hits("/hooks/events") >= 1 })
	r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{map[string]any{
		"vehicle_id": "v1", "timestamp": time.Now().UTC().Format(time.RFC3339Nano), "data_type": "engine_diagnostics",
		"data": map[string]any{"engine": map[string]any{"rpm": 2100}}}}})
	if r.Status != 202 {
		t.Fatalf("telemetry: %d %s", r.Status, r.Body)
	}
	waitFor(t, "the telemetry at its webhook", func() bool { return hits("/hooks/telemetry") >= 1 })
}
