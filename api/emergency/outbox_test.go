package emergency_test

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// flakyGateway fails the first failures attempts of every notification
// (by webhook-id) with 503 and records each request's headers and body.
type flakyGateway struct {
	mu       sync.Mutex
	failures int
	tries    map[string]int
	reqs     []signedRequest
}

type signedRequest struct {
	id, ts, sig string
	body        []byte
	n           emergency.Notification
}

func (g *flakyGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var n emergency.Notification
	_ = json.Unmarshal(body, &n)
	g.mu.Lock()
	defer g.mu.Unlock()
	id := r.Header.Get("webhook-id")
	g.reqs = append(g.reqs, signedRequest{id: id, ts: r.Header.Get("webhook-timestamp"), sig: r.Header.Get("webhook-signature"), body: body, n: n})
	g.tries[id]++
	if g.tries[id] <= g.failures {
		w.WriteHeader(503)
		return
	}
	w.WriteHeader(202)
}

func (g *flakyGateway) requests() []signedRequest {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]signedRequest(nil), g.reqs...)
}

// verifyWebhook checks a request's signature as the Standard Webhooks
// specification describes it, without the package's Sign: the secret is
// "whsec_" + the base64 key; the signed content is id + "." + timestamp +
// "." + body; webhook-signature is a space-separated list of "v1,"
// + base64 HMAC-SHA256, one of which must match.
func verifyWebhook(secret, id, ts, sigs string, body []byte) error {
	b64, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return fmt.Errorf("secret %q has no whsec_ prefix", secret)
	}
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil || len(key) == 0 {
		return fmt.Errorf("secret: %v", err)
	}
	if id == "" {
		return errors.New("no webhook-id")
	}
	if n, err := strconv.ParseInt(ts, 10, 64); err != nil || n <= 0 {
		return fmt.Errorf("webhook-timestamp %q is not Unix seconds", ts)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + ts + "."))
	mac.Write(body)
	want := mac.Sum(nil)
	for _, s := range strings.Fields(sigs) {
		version, sig, ok := strings.Cut(s, ",")
		if !ok || version != "v1" {
			continue
		}
		if got, err := base64.StdEncoding.DecodeString(sig); err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return fmt.Errorf("webhook-signature %q matches no v1 signature", sigs)
}

// smsDelivery answers the sms delivery of a recipient of an alert.
func smsDelivery(t *testing.T, al map[string]any, recipient string) map[string]any {
	t.Helper()
	for _, r := range al["recipients"].([]any) {
		r := r.(map[string]any)
		if r["recipient_id"] != recipient {
			continue
		}
		for _, d := range r["deliveries"].([]any) {
			if d := d.(map[string]any); d["channel"] == "sms" {
				return d
			}
		}
	}
	t.Fatalf("no sms delivery for %s in %v", recipient, al["recipients"])
	return nil
}

func TestGatewayQueue(t *testing.T) {
	run := func(t *testing.T, open func(t *testing.T) store.Backend) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &flakyGateway{failures: 2, tries: map[string]int{}}
		ocfg := &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now, Node: "a", Lease: time.Minute}, MinBackoff: time.Second, MaxBackoff: time.Minute}
		f := startWith(t, open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, ocfg)
		disp := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550002001"}})
		code, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms"))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)
		if d := smsDelivery(t, al, disp); d["status"] != "retrying" {
			t.Errorf("after a failed first attempt: %v", d)
		}
		if ds := al["delivery_status"].(map[string]any); ds["pending_deliveries"] != 1.0 || ds["failed_deliveries"] != 0.0 {
			t.Errorf("delivery_status after a failed first attempt the queue retries: %v, want 1 pending, 0 failed", ds)
		}
		// Not due yet: nothing is sent.
		if n, _ := f.outbox.Tick(t.Context()); n != 0 {
			t.Errorf("%d retried before the backoff", n)
		}
		clk.set(t0.Add(time.Second))
		f.outbox.Tick(t.Context())
		_, got := f.do("GET", "/v1/emergency/alerts/"+id, nil)
		if d := smsDelivery(t, got, disp); d["status"] != "retrying" || d["attempts"] != 2.0 || !strings.Contains(d["reason"].(string), "503") {
			t.Errorf("after two attempts: %v", d)
		}
		// A restart: another node takes it over from the store, once its
		// backoff passed.
		clk2 := &clock{t: t0.Add(3 * time.Second)}
		g := startWith(t, open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk2.Now}}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk2.Now, Node: "b"}, MinBackoff: time.Second})
		if n, err := g.outbox.Tick(t.Context()); n != 1 || err != nil {
			t.Fatalf("the other node retried %d: %v", n, err)
		}
		_, got = g.do("GET", "/v1/emergency/alerts/"+id, nil)
		d := smsDelivery(t, got, disp)
		if d["status"] != "delivered" || d["attempts"] != 3.0 {
			t.Errorf("after the third attempt: %v", d)
		}
		if ds := got["delivery_status"].(map[string]any); ds["pending_deliveries"] != 0.0 || ds["successful_deliveries"] != 1.0 {
			t.Errorf("delivery_status after the third attempt: %v, want 1 successful, none pending", ds)
		}
		// Every attempt is the same message, signed as Standard Webhooks.
		_, gwv := f.do("GET", "/v1/emergency/gateway", nil)
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(gwv["signing_secret"].(string), "whsec_"))
		if err != nil || len(key) == 0 {
			t.Fatalf("signing secret %v", gwv)
		}
		reqs := gw.requests()
		if len(reqs) != 3 {
			t.Fatalf("%d requests, want 3", len(reqs))
		}
		for _, r := range reqs {
			ts, err := strconv.ParseInt(r.ts, 10, 64)
			if r.id != reqs[0].id || err != nil || r.sig != emergency.Sign(key, r.id, ts, r.body) || r.n.To != "+15550002001" || r.n.AlertID != id {
				t.Errorf("request %+v", r)
			}
			if err := verifyWebhook(gwv["signing_secret"].(string), r.id, r.ts, r.sig, r.body); err != nil {
				t.Errorf("request %s: %v", r.id, err)
			}
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		run(t, func(t *testing.T) store.Backend { return testdb.SQLiteIn(t, dir) })
	})
	t.Run("postgresql", func(t *testing.T) {
		testdb.URL(t)
		url := testdb.Schema(t)
		run(t, func(t *testing.T) store.Backend { return testdb.PostgreSQLAt(t, url) })
	})
}

func TestGatewayQueueGivesUp(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &flakyGateway{failures: 100, tries: map[string]int{}}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now}, MaxAttempts: 2, MinBackoff: time.Second})
	disp := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550002001"}})
	_, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms"))
	clk.set(t0.Add(time.Hour))
	f.outbox.Tick(t.Context())
	f.outbox.Tick(t.Context())
	_, got := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	if d := smsDelivery(t, got, disp); d["status"] != "failed" || d["attempts"] != 2.0 {
		t.Errorf("after the last attempt: %v", d)
	}
	if n := len(gw.requests()); n != 2 {
		t.Errorf("%d attempts, want 2", n)
	}
}

func TestGatewayQueueIncident(t *testing.T) {
	gw := &flakyGateway{failures: 1, tries: map[string]int{}}
	t0 := time.Now().UTC()
	clk := &clock{t: t0}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now}, MinBackoff: time.Second})
	ec := f.contact(map[string]any{"name": "Mom", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550003001"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "driver_id": "drv_1"})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	status := func(in map[string]any) string {
		for _, e := range in["communication_log"].([]any) {
			if e := e.(map[string]any); e["recipient"] == ec && e["type"] == "sms" {
				return e["delivery_status"].(string)
			}
		}
		return ""
	}
	if s := status(in); s != "retrying" {
		t.Errorf("after a failed first attempt: %q", s)
	}
	clk.set(t0.Add(time.Second))
	f.outbox.Tick(t.Context())
	_, in = f.do("GET", "/v1/emergency/incidents/"+in["incident_id"].(string), nil)
	if s := status(in); s != "delivered" {
		t.Errorf("after the retry: %q", s)
	}
}

// TestGatewaySignature verifies delivered notifications with an
// independent HMAC-SHA256 computation per the Standard Webhooks
// specification, and that a changed body, id or timestamp, or another
// secret, fails it.
func TestGatewaySignature(t *testing.T) {
	gw := &flakyGateway{tries: map[string]int{}}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{}, &emergency.OutboxConfig{})
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550002001", "email": "dee@example.com"}})
	code, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms", "email"))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	code, gwv := f.do("GET", "/v1/emergency/gateway", nil)
	secret, _ := gwv["signing_secret"].(string)
	if code != 200 || !strings.HasPrefix(secret, "whsec_") {
		t.Fatalf("gateway: %d %v", code, gwv)
	}
	reqs := gw.requests()
	if len(reqs) != 2 || reqs[0].id == reqs[1].id {
		t.Fatalf("requests %+v, want two of distinct ids", reqs)
	}
	for _, r := range reqs {
		if !strings.HasPrefix(r.sig, "v1,") {
			t.Errorf("webhook-signature %q", r.sig)
		}
		if err := verifyWebhook(secret, r.id, r.ts, r.sig, r.body); err != nil {
			t.Errorf("request %s: %v", r.id, err)
		}
		if r.n.ID != r.id {
			t.Errorf("body notification_id %q, webhook-id %q", r.n.ID, r.id)
		}
		other := "whsec_" + base64.StdEncoding.EncodeToString([]byte("another key of thirty-two bytes!"))
		ts, _ := strconv.ParseInt(r.ts, 10, 64)
		for name, err := range map[string]error{
			"body":      verifyWebhook(secret, r.id, r.ts, r.sig, append(append([]byte(nil), r.body...), ' ')),
			"id":        verifyWebhook(secret, r.id+"x", r.ts, r.sig, r.body),
			"timestamp": verifyWebhook(secret, r.id, strconv.FormatInt(ts+1, 10), r.sig, r.body),
			"secret":    verifyWebhook(other, r.id, r.ts, r.sig, r.body),
		} {
			if err == nil {
				t.Errorf("a changed %s verifies", name)
			}
		}
	}
}

// TestIncidentListingAndStatusFollowTheQueue: the listing and the answer
// to a status change show the communication log as the gateway queue
// stands, as reading the incident does: delivered once a retry went
// through, not the first attempt's retrying.
func TestIncidentListingAndStatusFollowTheQueue(t *testing.T) {
	gw := &flakyGateway{failures: 1, tries: map[string]int{}}
	t0 := time.Now().UTC()
	clk := &clock{t: t0}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{}, &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now}, MinBackoff: time.Second})
	f.contact(map[string]any{"name": "Mom", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550003101"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "breakdown", "severity_level": "low",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "driver_id": "drv_1"})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	id := in["incident_id"].(string)
	statuses := func(in map[string]any) []string {
		var out []string
		for _, e := range in["communication_log"].([]any) {
			out = append(out, e.(map[string]any)["delivery_status"].(string))
		}
		return out
	}
	if s := statuses(in); fmt.Sprint(s) != "[retrying]" {
		t.Fatalf("after a failed first attempt: %v", s)
	}
	clk.set(t0.Add(time.Second))
	f.outbox.Tick(t.Context())
	_, list := f.do("GET", "/v1/emergency/incidents?driver_id=drv_1", nil)
	if items := list["incidents"].([]any); len(items) != 1 || fmt.Sprint(statuses(items[0].(map[string]any))) != "[delivered]" {
		t.Errorf("listing after the retry: %v, want the one notification delivered", list["incidents"])
	}
	code, out := f.do("PUT", "/v1/emergency/incidents/"+id+"/status", map[string]any{"status": "resolved"})
	if code != 200 || fmt.Sprint(statuses(out)) != "[delivered]" {
		t.Errorf("status change after the retry: %d %v, want the one notification delivered", code, out["communication_log"])
	}
}

// TestCommunicationLogStatesWhatIsKnown: a notification's entry carries
// duration_seconds and outcome as null, unknown (the gateway answers that
// it accepted it, nothing more), never 0 and "", on the report, the read
// and the listing.
func TestCommunicationLogStatesWhatIsKnown(t *testing.T) {
	f := start(t, testdb.SQLite)
	f.contact(map[string]any{"name": "Mom", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+15550003201", "voice": "+15550003201"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	f.contact(map[string]any{"name": "Vo", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+15550003202"}})
	code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "high",
		"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "driver_id": "drv_1"})
	if code != 201 {
		t.Fatalf("incident: %d %v", code, in)
	}
	_, got := f.do("GET", "/v1/emergency/incidents/"+in["incident_id"].(string), nil)
	_, list := f.do("GET", "/v1/emergency/incidents", nil)
	for name, v := range map[string]map[string]any{"report": in, "read": got, "listing": list["incidents"].([]any)[0].(map[string]any)} {
		log := v["communication_log"].([]any)
		if len(log) != 2 {
			t.Errorf("%s: communication_log %v, want an sms and a call", name, log)
		}
		for _, e := range log {
			e := e.(map[string]any)
			d, hasD := e["duration_seconds"]
			o, hasO := e["outcome"]
			if !hasD || d != nil || !hasO || o != nil || e["delivery_status"] != "delivered" {
				t.Errorf("%s: entry %v, want duration_seconds and outcome null", name, e)
			}
		}
	}
}

// TestFirstDeliveryCountsARetry: a notification the gateway queue
// delivers on a retry is a delivery that went through, so reading the
// alert gives creation_to_first_delivery_ms from the creation to that
// retry instead of null beside a reach of 100 %; the average stays over
// the deliveries timed at creation and in the channels' rounds.
func TestFirstDeliveryCountsARetry(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &flakyGateway{failures: 1, tries: map[string]int{}}
	ocfg := &emergency.OutboxConfig{Claims: emergency.Claims{Now: clk.Now, Node: "a", Lease: time.Minute}, MinBackoff: 2 * time.Second, MaxBackoff: time.Minute}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, ocfg)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550002101"}})
	code, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms"))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if m := al["alert_metrics"].(map[string]any); m["creation_to_first_delivery_ms"] != nil || m["notification_reach_percentage"] != 0.0 {
		t.Errorf("nothing went through yet: %v", m)
	}
	clk.set(t0.Add(2 * time.Second))
	if n, err := f.outbox.Tick(t.Context()); n != 1 || err != nil {
		t.Fatalf("retried %d: %v", n, err)
	}
	_, got := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	m := got["alert_metrics"].(map[string]any)
	if m["notification_reach_percentage"] != 100.0 || m["creation_to_first_delivery_ms"] != 2000.0 {
		t.Errorf("after the retry went through 2 s after the creation: %v, want creation_to_first_delivery_ms 2000 and a reach of 100", m)
	}
	if m["average_delivery_time_ms"] != nil || m["timed_deliveries"] != 0.0 {
		t.Errorf("a retry is not timed: %v", m)
	}
}
