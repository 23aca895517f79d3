package ingestapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/api/ingestapi"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/prometheus/client_golang/prometheus"
)

// auth accepts one key with the given permissions.
type auth struct {
	key   string
	perms []string
}

func (a auth) Authenticate(ctx context.Context, key string) (*api.Principal, error) {
	if key != a.key {
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	return &api.Principal{KeyID: "k1", Org: "org-a", Env: "test", Permissions: a.perms, Rate: 100000, Burst: 100000}, nil
}

// bus records publishes and can fail.
type bus struct {
	mu   sync.Mutex
	msgs []hub.Message
	fail bool
}

func (b *bus) Publish(ctx context.Context, msgs ...hub.Message) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.fail {
		return hub.ErrClosed
	}
	b.msgs = append(b.msgs, msgs...)
	return nil
}

func (b *bus) setFail(v bool) {
	b.mu.Lock()
	b.fail = v
	b.mu.Unlock()
}

func (b *bus) count() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.msgs)
}

type server struct {
	url string
	key string
	bus *bus
}

func start(t *testing.T, perms ...string) *server {
	t.Helper()
	return startWith(t, nil, perms...)
}

// generalOnly hides the service's optional JSON path, so the handler
// decodes every body itself.
type generalOnly struct{ ingestapi.Service }

// startWith starts a server whose handlers use wrap(svc) (svc when wrap
// is nil).
func startWith(t *testing.T, wrap func(*telemetry.Service) ingestapi.Service, perms ...string) *server {
	t.Helper()
	key, err := apikey.Generate("test")
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	b := &bus{}
	svc, err := telemetry.New(telemetry.Config{}, b, log)
	if err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, log, prometheus.NewRegistry(), auth{key, perms}, nil)
	var h ingestapi.Service = svc
	if wrap != nil {
		h = wrap(svc)
	}
	srv.Handle(ingestapi.New(h).Routes()...)
	addr := apitest.Serve(t, srv)
	return &server{url: "http://" + addr, key: key, bus: b}
}

type reply struct {
	status int
	header http.Header
	body   map[string]any
	raw    []byte
}

func (s *server) post(t *testing.T, path, ct, body string) reply {
	t.Helper()
	req, err := http.NewRequest("POST", s.url+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-API-Key", s.key)
	req.Header.Set("Content-Type", ct)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode, header: res.Header, raw: raw}
	_ = json.Unmarshal(raw, &r.body)
	return r
}

func (r reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (r reply) details() map[string]any {
	e, _ := r.body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
}

func now(d time.Duration) string { return time.Now().Add(d).UTC().Format(time.RFC3339Nano) }

func telemetryMsg(vehicle string, seq int) string {
	return fmt.Sprintf(`{"timestamp":%q,"vehicle_id":%q,"data_type":"fuel_system","sequence":%d,"data":{"fuel_level":{"percentage":50}}}`, now(-time.Second), vehicle, seq)
}

const ct = "application/json"

// eventOf is an event of category and severity at timestamp, valid otherwise.
func eventOf(category, severity, timestamp string) string {
	return fmt.Sprintf(`{"event_type":"harsh_braking","category":%q,"severity":%q,"timestamp":%q,"source":{"vehicle_id":"v"}}`, category, severity, timestamp)
}

func TestAccepted(t *testing.T) {
	s := start(t, "telemetry:write", "events:write")
	r := s.post(t, "/v1/telemetry", ct, `{"messages":[`+telemetryMsg("v1", 3)+`,`+telemetryMsg("v2", 4)+`]}`)
	if r.status != 202 || r.body["accepted"] != 2.0 || fmt.Sprint(r.body["sequence"]) != "[3 4]" || r.body["ingested_at"] == nil {
		t.Fatalf("telemetry: %d %s", r.status, r.raw)
	}
	if _, ok := r.body["generated_event_ids"]; ok {
		t.Errorf("generated_event_ids present without generated events: %s", r.raw)
	}
	ev := fmt.Sprintf(`{"events":[{"event_type":"door_open","category":"vehicle_events","timestamp":%q,"severity":"low","source":{"vehicle_id":"v1"}}]}`, now(0))
	r = s.post(t, "/v1/events", "application/json; charset=utf-8", ev)
	ids, _ := r.body["event_ids"].([]any)
	if r.status != 202 || r.body["accepted"] != 1.0 || len(ids) != 1 || !strings.HasPrefix(ids[0].(string), "evt_") {
		t.Fatalf("events: %d %s", r.status, r.raw)
	}
	if s.bus.count() != 3 {
		t.Fatalf("bus holds %d messages", s.bus.count())
	}
}

func TestBadRequests(t *testing.T) {
	s := start(t, "all")
	for _, c := range []struct {
		path, ct, body string
		status         int
		code           string
		field          string
	}{
		{"/v1/telemetry", ct, `{"messages":[` + telemetryMsg("v", 1) + `, 7]}`, 400, "validation_failed", "messages[1]"},
		{"/v1/telemetry", ct, `{"messages":[{"timestamp":"x","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":"full"}}}]}`, 400, "validation_failed", "messages[0].data.fuel_level.percentage"},
		{"/v1/telemetry", ct, `{"messages":[]}`, 400, "validation_failed", "messages"},
		{"/v1/telemetry", ct, `{}`, 400, "validation_failed", "messages"},
		{"/v1/telemetry", ct, `{"messages":{"a":1}}`, 400, "invalid_request", "messages"},
		{"/v1/telemetry", ct, `{"messages":[`, 400, "invalid_request", ""},
		{"/v1/telemetry", ct, `{"messages":[]} {}`, 400, "invalid_request", ""},
		{"/v1/telemetry", "text/plain", `{"messages":[]}`, 415, "unsupported_media_type", ""},
		{"/v1/telemetry", ct, ``, 400, "invalid_request", ""},
		{"/v1/events", ct, `{"events":[{"category":"x"}]}`, 400, "validation_failed", "events[0].category"},
		{"/v1/events", ct, `{"messages":[]}`, 400, "validation_failed", "messages"}, // a field of another endpoint: unknown here
		{"/v1/events", ct, `{}`, 400, "validation_failed", "events"},
		{"/v1/telemetry", ct, `{"messages":[],"mesages":[]}`, 400, "validation_failed", "mesages"},
		// a value outside a field's fixed set is invalid_request; beside
		// another problem, validation_failed naming both
		{"/v1/telemetry", ct, `{"messages":[` + strings.Replace(telemetryMsg("v", 1), "fuel_system", "tire_pressure", 1) + `]}`, 400, "invalid_request", "messages[0].data_type"},
		{"/v1/events", ct, `{"events":[` + eventOf("bogus", "high", now(-time.Second)) + `]}`, 400, "invalid_request", "events[0].category"},
		{"/v1/events", ct, `{"events":[` + eventOf("safety_events", "extreme", now(-time.Second)) + `,` + eventOf("bogus", "high", now(-time.Second)) + `]}`, 400, "invalid_request", "events[0].severity"},
		{"/v1/events", ct, `{"events":[` + eventOf("bogus", "high", "x") + `]}`, 400, "validation_failed", "events[0].timestamp"},
	} {
		r := s.post(t, c.path, c.ct, c.body)
		if r.status != c.status || r.code() != c.code {
			t.Errorf("%s %s: %d %s", c.path, c.body, r.status, r.raw)
			continue
		}
		if c.field != "" {
			if _, ok := r.details()[c.field]; !ok {
				t.Errorf("%s %s: details lack %s: %s", c.path, c.body, c.field, r.raw)
			}
		}
	}
	var big strings.Builder
	big.WriteString(`{"messages":[`)
	for i := range 1001 {
		if i > 0 {
			big.WriteByte(',')
		}
		big.WriteString(`{}`)
	}
	big.WriteString(`]}`)
	if r := s.post(t, "/v1/telemetry", ct, big.String()); r.status != 400 || r.code() != "batch_too_large" {
		t.Errorf("1001 messages: %d %s", r.status, r.raw)
	}
	big.Reset()
	big.WriteString(`{"messages":[{}`)
	for range 999 {
		big.WriteString(`,{}`)
	}
	big.WriteString(`]}`)
	r := s.post(t, "/v1/telemetry", ct, big.String())
	msg, _ := r.body["error"].(map[string]any)["message"].(string)
	if r.status != 400 || len(r.details()) != telemetry.MaxErrors || !strings.Contains(msg, "3900 more errors") {
		t.Errorf("1000 empty messages: %d %d details, %q", r.status, len(r.details()), msg)
	}
	if s.bus.count() != 0 {
		t.Fatalf("bad requests published %d messages", s.bus.count())
	}
}

func TestBusDown(t *testing.T) {
	s := start(t, "all")
	s.bus.setFail(true)
	r := s.post(t, "/v1/telemetry", ct, `{"messages":[`+telemetryMsg("v", 1)+`]}`)
	if r.status != 503 || r.code() != "service_unavailable" || r.header.Get("Retry-After") != "1" {
		t.Fatalf("bus down: %d %v %s", r.status, r.header, r.raw)
	}
	if msg := r.body["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "nothing was accepted") {
		t.Errorf("message %q", msg)
	}
}

func TestPermissions(t *testing.T) {
	s := start(t, "telemetry:write")
	if r := s.post(t, "/v1/events", ct, `{"events":[]}`); r.status != 403 || r.code() != "insufficient_permissions" {
		t.Fatalf("events without events:write: %d %s", r.status, r.raw)
	}
	s = start(t, "events:write")
	if r := s.post(t, "/v1/telemetry", ct, `{"messages":[]}`); r.status != 403 {
		t.Fatalf("telemetry without telemetry:write: %d %s", r.status, r.raw)
	}
}

// The enums of the documented request types are the hub's lists.
func TestDocumentedEnums(t *testing.T) {
	for _, c := range []struct {
		typ   any
		field string
		want  []string
	}{
		{ingestapi.TelemetryMessage{}, "DataType", event.DataTypes},
		{ingestapi.EventMessage{}, "Category", event.Categories},
		{ingestapi.EventMessage{}, "Severity", event.Severities},
		{ingestapi.EventMessage{}, "Priority", event.Priorities},
	} {
		f, _ := reflect.TypeOf(c.typ).FieldByName(c.field)
		if got := f.Tag.Get("enum"); got != strings.Join(c.want, ",") {
			t.Errorf("%T.%s enum %q, want %q", c.typ, c.field, got, strings.Join(c.want, ","))
		}
	}
}

// body1000 is a 1,000-message telemetry request.
func body1000() []byte {
	var b bytes.Buffer
	b.WriteString(`{"messages":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"timestamp":"2026-11-23T10:00:%02d.%03dZ","vehicle_id":"veh-%03d","data_type":"engine_diagnostics","sequence":%d,`+
			`"data":{"engine":{"rpm":2150,"load_percentage":45.5,"coolant_temp":92,"oil_pressure":45,"oil_temp":98,"throttle_position":22.5},`+
			`"turbo":{"boost_pressure":14.5,"turbo_rpm":95000},"status_codes":{"dtc_count":2,"pending_codes":["P0301"],"mil_status":false}},`+
			`"quality_indicators":{"signal_strength":88,"data_completeness":99}}`, i%60, i, i%100, i)
	}
	b.WriteString(`]}`)
	return b.Bytes()
}

// The one-pass JSON path answers every request as the general path does:
// the same status and error (code, message, details) for bad bodies, the
// same answer and the same published messages for good ones.
func TestJSONPathAnswersAsBefore(t *testing.T) {
	fast := start(t, "all")
	slow := startWith(t, func(s *telemetry.Service) ingestapi.Service { return generalOnly{s} }, "all")
	good := telemetryMsg("v1", 3)
	at := fmt.Sprintf("%q", now(-time.Minute))
	var many strings.Builder
	many.WriteString(`{"messages":[{}`)
	for range 999 {
		many.WriteString(`,{}`)
	}
	many.WriteString(`]}`)
	for _, req := range []string{
		`{"messages":[` + good + `,` + telemetryMsg("v2", 4) + `]}`,
		string(body1000()),
		`{"messages":[{"data":{"cabin":{"t":-0.5e1}},"data_type":"environmental","vehicle_id":"v","timestamp":` + at + `}]}`,
		`{"messages":[` + good + `, 7]}`,
		`{"messages":[{"timestamp":"x","vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":"full"}}}]}`,
		`{"messages":[{"timestamp":` + at + `,"vehicle_id":"v","data_type":"fuel_system","data":{"fuel_level":{"percentage":101,"liters":null}},"extra":1}]}`,
		`{"messages":[{"timestamp":` + at + `,"vehicle_id":"v","data_type":"engine_diagnostics","data":{"status_codes":{"dtc_count":1.5,"pending_codes":["P1",""]}}}]}`,
		`{"messages":[{"timestamp":` + at + `,"vehicle_id":"v","vehicle_id":"w","data_type":"gps_enhanced","data":{"p":{"lat":1}}}]}`,
		`{"messages":[]}`, `{}`, `{"messages":{"a":1}}`, `{"messages":[`, `{"messages":[]} {}`, `{"messages":[` + good + `],"more":1}`,
		`{"Messages":[` + good + `]}`, `[` + good + `]`, `null`, many.String(),
	} {
		answersAlike(t, fast, slow, "/v1/telemetry", req, "accepted", "sequence")
	}
	publishedAlike(t, fast, slow, 1003)
}

// answersAlike posts req to both servers and reports where their answers
// differ: the status, the error (but its request id) or the named fields.
func answersAlike(t *testing.T, fast, slow *server, path, req string, fields ...string) {
	t.Helper()
	a, b := fast.post(t, path, ct, req), slow.post(t, path, ct, req)
	if a.status != b.status {
		t.Errorf("%.120s: status %d, general path %d", req, a.status, b.status)
		return
	}
	if a.status != 202 {
		ea, eb := a.body["error"].(map[string]any), b.body["error"].(map[string]any)
		delete(ea, "request_id")
		delete(eb, "request_id")
		if !reflect.DeepEqual(ea, eb) {
			t.Errorf("%.120s:\n%s\ngeneral path:\n%s", req, a.raw, b.raw)
		}
		return
	}
	for _, k := range fields {
		if !reflect.DeepEqual(a.body[k], b.body[k]) {
			t.Errorf("%.120s: %s %v, general path %v", req, k, a.body[k], b.body[k])
		}
	}
}

// publishedAlike checks that both servers published the same messages,
// at least min of them, but for the times each stamps itself.
func publishedAlike(t *testing.T, fast, slow *server, min int) {
	t.Helper()
	fast.bus.mu.Lock()
	slow.bus.mu.Lock()
	defer fast.bus.mu.Unlock()
	defer slow.bus.mu.Unlock()
	if len(fast.bus.msgs) != len(slow.bus.msgs) || len(fast.bus.msgs) < min {
		t.Fatalf("published %d messages, general path %d", len(fast.bus.msgs), len(slow.bus.msgs))
	}
	for i, m := range fast.bus.msgs {
		a, err := event.Unmarshal(m.Value)
		if err != nil {
			t.Fatal(err)
		}
		b, err := event.Unmarshal(slow.bus.msgs[i].Value)
		if err != nil {
			t.Fatal(err)
		}
		a.IngestedAt, b.IngestedAt = time.Time{}, time.Time{}
		if a.Event != nil && b.Event != nil {
			a.Event.Metadata.ProcessingTime, b.Event.Metadata.ProcessingTime = "", ""
		}
		if string(m.Key) != string(slow.bus.msgs[i].Key) || !reflect.DeepEqual(a, b) {
			t.Fatalf("message %d differs:\n%+v %+v\n%+v %+v", i, a.Telemetry, a.Event, b.Telemetry, b.Event)
		}
	}
}

// POST /v1/events answers every body as the general path does, valid and
// invalid, and publishes the same events.
func TestEventsJSONPathAnswersAsBefore(t *testing.T) {
	fast := start(t, "all")
	slow := startWith(t, func(s *telemetry.Service) ingestapi.Service { return generalOnly{s} }, "all")
	at := fmt.Sprintf("%q", now(-time.Minute))
	ev := func(id string, extra string) string {
		return `{"event_id":"` + id + `","event_type":"harsh_braking","category":"safety_events","timestamp":` + at +
			`,"severity":"high","source":{"vehicle_id":"v1","driver_id":"d1"}` + extra + `}`
	}
	full := ev("e1", `,"location":{"latitude":40.1,"longitude":-83.2,"speed_limit":50},"metadata":{"sequence_number":4,"source_system":"tms"},`+
		`"event_data":{"g":0.62,"l":[1,{"x":null}]},"recommendations":["slow down"]`)
	var many strings.Builder
	many.WriteString(`{"events":[`)
	for i := range 1000 {
		if i > 0 {
			many.WriteByte(',')
		}
		many.WriteString(ev(fmt.Sprint("m", i), fmt.Sprintf(`,"event_data":{"n":%d}`, i)))
	}
	many.WriteString(`]}`)
	for _, req := range []string{
		`{"events":[` + full + `]}`,
		`{"events":[` + ev("e2", "") + `,` + ev("e2", `,"priority":"urgent"`) + `]}`,
		many.String(),
		`{"events":[` + ev("e3", `,"location":{"latitude":91,"longitude":0}`) + `]}`,
		`{"events":[` + ev("e4", `,"metadata":{"late":true}`) + `]}`,
		`{"events":[` + ev("e5", `,"colour":"red"`) + `]}`,
		`{"events":[` + ev("e6", `,"event_data":{"a":1e400}`) + `]}`,
		`{"events":[` + ev("e7", `,"severity":"low"`) + `]}`,
		`{"events":[{"event_type":"x"}]}`,
		`{"events":[` + ev("e8", "") + `, 7]}`,
		`{"events":[]}`, `{}`, `{"events":{"a":1}}`, `{"events":[`, `{"events":[]} {}`, `{"events":[` + ev("e9", "") + `],"more":1}`,
		`[` + ev("e10", "") + `]`, `null`,
	} {
		answersAlike(t, fast, slow, "/v1/events", req, "accepted", "event_ids", "duplicates", "duplicate_event_ids")
	}
	publishedAlike(t, fast, slow, 1003)
}
