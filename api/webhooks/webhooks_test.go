package webhooks_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/api/webhooks"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/prometheus/client_golang/prometheus"
)

// auth maps keys to principals.
type auth map[string]*api.Principal

func (a auth) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if p := a[key]; p != nil {
		return p, nil
	}
	return nil, api.Errf("api_key_not_found", "unknown key")
}

type streams map[string]hub.StreamInfo

func (s streams) Stream(org, env, id string) (hub.StreamInfo, bool) {
	i, ok := s[id]
	return i, ok && i.Org == org && i.Env == env
}

type endpoints struct{}

func (endpoints) EndpointState(string) string { return "open" }

type fixture struct {
	t   *testing.T
	url string
	st  *sqlite.Store
}

var reader, manager, foreign = genKey(), genKey(), genKey()

func genKey() string {
	k, err := apikey.Generate("test")
	if err != nil {
		panic(err)
	}
	return k
}

func start(t *testing.T) *fixture {
	t.Helper()
	st, err := sqlite.Open(t.Context(), sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	a := auth{
		reader:  {KeyID: "k1", Org: "org-a", Env: "test", Permissions: []string{"streams:read"}, Rate: 1e6, Burst: 1e6},
		manager: {KeyID: "k2", Org: "org-a", Env: "test", Permissions: []string{"streams:read", "streams:manage"}, Rate: 1e6, Burst: 1e6},
		foreign: {KeyID: "k3", Org: "org-b", Env: "test", Permissions: []string{"all"}, Rate: 1e6, Burst: 1e6},
	}
	reg := streams{
		"estr_1":  {ID: "estr_1", Org: "org-a", Env: "test", Kind: hub.KindEvents, Delivery: "webhook"},
		"tstr_1":  {ID: "tstr_1", Org: "org-a", Env: "test", Kind: hub.KindTelemetry, Delivery: "webhook"},
		"estr_ws": {ID: "estr_ws", Org: "org-a", Env: "test", Kind: hub.KindEvents, Delivery: "websocket"},
	}
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), a, nil)
	srv.Handle(webhooks.New(st, reg, endpoints{}).Routes()...)
	addr := apitest.Serve(t, srv)
	return &fixture{t: t, url: "http://" + addr, st: st}
}

type reply struct {
	status int
	body   map[string]any
}

func (r reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (f *fixture) do(method, path, key string, body any) reply {
	f.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, f.url+path, rd)
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := reply{status: res.StatusCode}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		f.t.Fatalf("%s %s: %d %s", method, path, res.StatusCode, raw)
	}
	return r
}

// seed stores n deliveries of estr_1, the first two dead-lettered.
func (f *fixture) seed(n int) []store.Delivery {
	f.t.Helper()
	base := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var ds []store.Delivery
	for i := range n {
		at := base.Add(time.Duration(i) * time.Minute)
		ds = append(ds, store.Delivery{ID: fmt.Sprintf("msg_%02d", i), Org: "org-a", Env: "test", StreamID: "estr_1", Offset: int64(i + 1),
			Payload: fmt.Appendf(nil, `{"stream_id":"estr_1","offset":%d,"message":{"event_id":"e%d"}}`, i+1, i), NextAttemptAt: at, QueuedAt: at, CreatedAt: at})
	}
	ctx := context.Background()
	if _, err := f.st.EnqueueDeliveries(ctx, ds); err != nil {
		f.t.Fatal(err)
	}
	got, err := f.st.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "n", StreamIDs: []string{"estr_1"}, Now: base.Add(time.Hour), Until: base.Add(time.Hour), Limit: 2})
	if err != nil || len(got) != 2 {
		f.t.Fatal(err)
	}
	if err := f.st.RecordDeliveries(ctx, "n", []store.DeliveryResult{
		{ID: got[0].ID, Status: store.DeliveryDeadLettered, Attempted: true, StatusCode: 400, Error: "HTTP 400: bad", LatencyMS: 7},
		{ID: got[1].ID, Status: store.DeliveryDeadLettered, Attempted: true, Error: "timeout", LatencyMS: 10000},
	}); err != nil {
		f.t.Fatal(err)
	}
	return ds
}

func TestListDeliveries(t *testing.T) {
	f := start(t)
	f.seed(5)
	r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?limit=2", reader, nil)
	if r.status != 200 || r.body["success"] != true {
		t.Fatalf("list: %d %v", r.status, r.body)
	}
	ds := r.body["deliveries"].([]any)
	first := ds[0].(map[string]any)
	if len(ds) != 2 || first["id"] != "msg_04" || first["status"] != "pending" || first["last_status_code"] != nil || first["next_attempt_at"] == nil {
		t.Errorf("page 1: %v", ds)
	}
	if p := first["payload"].(map[string]any); p["offset"] != float64(5) || p["stream_id"] != "estr_1" {
		t.Errorf("payload %v", p)
	}
	ep := r.body["endpoint"].(map[string]any)
	if ep["circuit"] != "open" || ep["counts"].(map[string]any)["dead_lettered"] != float64(2) || ep["counts"].(map[string]any)["pending"] != float64(3) {
		t.Errorf("endpoint %v", ep)
	}
	var ids []string
	cursor := ""
	for range 5 {
		r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?limit=2&cursor="+url.QueryEscape(cursor), reader, nil)
		for _, d := range r.body["deliveries"].([]any) {
			ids = append(ids, d.(map[string]any)["id"].(string))
		}
		next, _ := r.body["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = next
	}
	if fmt.Sprint(ids) != "[msg_04 msg_03 msg_02 msg_01 msg_00]" {
		t.Errorf("paged ids %v", ids)
	}
	// a cursor of the log continues only the listing of its status
	first2 := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?limit=2", reader, nil).body["next_cursor"].(string)
	for _, q := range []string{"status=dead_lettered", "status=delivered"} {
		r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?limit=2&"+q+"&cursor="+url.QueryEscape(first2), reader, nil)
		e, _ := r.body["error"].(map[string]any)
		if d, _ := e["details"].(map[string]any); r.status != 400 || r.code() != "invalid_request" || d["cursor"] == nil {
			t.Errorf("a cursor of the whole log with %s: %d %v", q, r.status, r.body)
		}
	}
	r = f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?status=dead_lettered", reader, nil)
	dl := r.body["deliveries"].([]any)
	if len(dl) != 2 {
		t.Fatalf("dead letters %v", dl)
	}
	d0, d1 := dl[0].(map[string]any), dl[1].(map[string]any)
	if d0["last_status_code"] != nil || d0["last_error"] != "timeout" || d0["last_latency_ms"] != float64(10000) || d0["attempts"] != float64(1) {
		t.Errorf("timed-out dead letter %v", d0)
	}
	if d1["last_status_code"] != float64(400) || d1["last_error"] != "HTTP 400: bad" || d1["next_attempt_at"] != nil {
		t.Errorf("400 dead letter %v", d1)
	}
	for _, c := range []struct{ q, field string }{{"status=lost", "status"}, {"limit=0", "limit"}, {"limit=201", "limit"}, {"cursor=zzz", "cursor"}} {
		r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?"+c.q, reader, nil)
		if r.status != 400 || r.code() != "invalid_request" || r.body["error"].(map[string]any)["details"].(map[string]any)[c.field] == nil {
			t.Errorf("%s: %d %v", c.q, r.status, r.body)
		}
	}
	for _, c := range []struct{ path, key string }{
		{"/api/v1/streaming/events/deliveries/estr_1", foreign},      // another organization's stream
		{"/api/v1/streaming/telemetry/deliveries/estr_1", reader},    // an event stream under telemetry
		{"/api/v1/streaming/events/deliveries/estr_missing", reader}, // none at all
	} {
		if r := f.do("GET", c.path, c.key, nil); r.status != 404 || r.code() != "stream_not_found" {
			t.Errorf("%s as %s: %d %v", c.path, c.key, r.status, r.body)
		}
	}
	if r := f.do("GET", "/api/v1/streaming/telemetry/deliveries/tstr_1", reader, nil); r.status != 200 || len(r.body["deliveries"].([]any)) != 0 {
		t.Errorf("empty telemetry listing: %d %v", r.status, r.body)
	}
}

func TestReplay(t *testing.T) {
	f := start(t)
	ds := f.seed(5)
	path := "/api/v1/streaming/events/deliveries/estr_1/replay"
	if r := f.do("POST", path, reader, map[string]any{"delivery_ids": []string{"msg_00"}}); r.status != 403 {
		t.Errorf("replay with streams:read only: %d", r.status)
	}
	r := f.do("POST", path, manager, map[string]any{"delivery_ids": []string{"msg_00", "msg_01", "msg_unknown"}})
	if r.status != 200 || r.body["requeued"] != float64(2) {
		t.Fatalf("replay by ids: %d %v", r.status, r.body)
	}
	c, _ := f.st.CountDeliveries(context.Background(), store.Scope{Org: "org-a", Env: "test"}, "estr_1")
	if c[store.DeliveryPending] != 5 || c[store.DeliveryDeadLettered] != 0 {
		t.Errorf("counts after replay %v", c)
	}
	from, to := ds[1].CreatedAt, ds[3].CreatedAt
	r = f.do("POST", path, manager, map[string]any{"from": from.Format(time.RFC3339), "to": to.Format(time.RFC3339)})
	if r.status != 200 || r.body["requeued"] != float64(2) {
		t.Errorf("replay by range: %d %v", r.status, r.body)
	}
	for _, c := range []struct {
		body any
		code string
	}{
		{map[string]any{}, "validation_failed"},
		{map[string]any{"delivery_ids": []string{"a"}, "from": from}, "validation_failed"},
		{map[string]any{"from": from}, "validation_failed"},
		{map[string]any{"from": to, "to": from}, "invalid_date_range"},
		{map[string]any{"from": from, "to": from.Add(40 * 24 * time.Hour)}, "invalid_date_range"},
		{map[string]any{"delivery_ids": "msg_00"}, "invalid_request"},
		// an empty list beside a range selects nothing: refused, not
		// read as left out
		{map[string]any{"delivery_ids": []string{}, "from": from, "to": to}, "validation_failed"},
	} {
		if r := f.do("POST", path, manager, c.body); r.status != 400 || r.code() != c.code {
			t.Errorf("%v: %d %v, want %s", c.body, r.status, r.body, c.code)
		}
	}
	r = f.do("POST", path, manager, map[string]any{"delivery_ids": []string{}, "from": from, "to": to})
	if e, _ := r.body["error"].(map[string]any); e == nil || e["details"].(map[string]any)["delivery_ids"] == nil {
		t.Errorf("an empty delivery_ids beside a range: %d %v, want delivery_ids named", r.status, r.body)
	}
	if r := f.do("POST", path, foreign, map[string]any{"delivery_ids": []string{"msg_00"}}); r.status != 404 || r.code() != "stream_not_found" {
		t.Errorf("foreign replay: %d %v", r.status, r.body)
	}
}

// A replay by ids tells the ids that are no delivery of the stream (a typo,
// another stream's) from those being sent at that moment, both left alone;
// a replay by time range has neither list.
func TestReplayTellsUnknownFromInFlight(t *testing.T) {
	f := start(t)
	f.seed(4)
	ctx := context.Background()
	other := store.Delivery{ID: "msg_t0", Org: "org-a", Env: "test", StreamID: "tstr_1", Offset: 1, Payload: []byte(`{}`),
		NextAttemptAt: time.Now(), QueuedAt: time.Now(), CreatedAt: time.Now()}
	if _, err := f.st.EnqueueDeliveries(ctx, []store.Delivery{other}); err != nil {
		t.Fatal(err)
	}
	// msg_02 is being sent: leased far past now
	far := time.Now().Add(time.Hour)
	if got, err := f.st.ClaimDeliveries(ctx, store.DeliveryClaim{Owner: "n", StreamIDs: []string{"estr_1"}, Now: far, Until: far, Limit: 1}); err != nil || len(got) != 1 || got[0].ID != "msg_02" {
		t.Fatalf("claim: %v %v", got, err)
	}
	path := "/api/v1/streaming/events/deliveries/estr_1/replay"
	r := f.do("POST", path, manager, map[string]any{"delivery_ids": []string{"msg_typo", "msg_02", "msg_00", "msg_t0", "msg_typo"}})
	if r.status != 200 || r.body["requeued"] != float64(1) ||
		fmt.Sprint(r.body["not_found"]) != "[msg_typo msg_t0]" || fmt.Sprint(r.body["in_flight"]) != "[msg_02]" {
		t.Fatalf("replay by ids: %d %v; want 1 requeued, not_found [msg_typo msg_t0], in_flight [msg_02]", r.status, r.body)
	}
	if d, _, _ := f.st.ListDeliveries(ctx, store.Scope{Org: "org-a", Env: "test"}, "tstr_1", store.DeliveryQuery{Limit: 1}); len(d) != 1 || d[0].Attempts != 0 || !d[0].QueuedAt.Equal(other.QueuedAt.Truncate(time.Millisecond)) {
		t.Errorf("another stream's delivery changed: %+v", d)
	}
	r = f.do("POST", path, manager, map[string]any{"delivery_ids": []string{"msg_01"}})
	nf, nfOK := r.body["not_found"].([]any)
	inf, infOK := r.body["in_flight"].([]any)
	q, qOK := r.body["queued"].([]any)
	if r.status != 200 || r.body["requeued"] != float64(1) || !nfOK || len(nf) != 0 || !infOK || len(inf) != 0 || !qOK || len(q) != 0 {
		t.Errorf("replay of one delivery: %d %v; want not_found, in_flight and queued empty arrays", r.status, r.body)
	}
	r = f.do("POST", path, manager, map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"})
	_, hasNF := r.body["not_found"]
	_, hasIF := r.body["in_flight"]
	_, hasQ := r.body["queued"]
	if r.status != 200 || r.body["requeued"] != float64(3) || hasNF || hasIF || hasQ {
		t.Errorf("replay by range: %d %v; want 3 requeued (the one in flight left alone), no id lists", r.status, r.body)
	}
}

// A stream that does not deliver by webhook has no endpoint: its listing
// shows the deliveries it made by webhook before with endpoint null (no
// circuit claimed), and a replay, which could send nothing, is refused
// naming stream_id and changes nothing.
func TestDeliveriesOfAStreamWithoutWebhook(t *testing.T) {
	f := start(t)
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if _, err := f.st.EnqueueDeliveries(context.Background(), []store.Delivery{{ID: "msg_ws", Org: "org-a", Env: "test", StreamID: "estr_ws", Offset: 1,
		Payload: []byte(`{"stream_id":"estr_ws","offset":1,"message":{}}`), NextAttemptAt: at, QueuedAt: at, CreatedAt: at}}); err != nil {
		t.Fatal(err)
	}
	r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_ws", reader, nil)
	if r.status != 200 || len(r.body["deliveries"].([]any)) != 1 {
		t.Fatalf("list: %d %v", r.status, r.body)
	}
	if ep, ok := r.body["endpoint"]; !ok || ep != nil {
		t.Errorf("endpoint %v (present %v), want null", ep, ok)
	}
	for _, body := range []any{map[string]any{"delivery_ids": []string{"msg_ws"}}, map[string]any{"from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"}} {
		r = f.do("POST", "/api/v1/streaming/events/deliveries/estr_ws/replay", manager, body)
		if r.status != 400 || r.code() != "invalid_request" || r.body["error"].(map[string]any)["details"].(map[string]any)["stream_id"] == nil {
			t.Errorf("replay %v: %d %v", body, r.status, r.body)
		}
	}
	// a webhook stream's listing keeps its endpoint
	if r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1", reader, nil); r.body["endpoint"] == nil {
		t.Errorf("webhook stream: endpoint %v", r.body["endpoint"])
	}
}

// A replay by ids naming deliveries that wait, parked, for their endpoint
// to take them (not sent yet, not in the listing until then) answers them
// as queued: the service holds them and sends them as they are, so they
// are neither requeued nor not_found.
func TestReplayTellsParkedDeliveriesQueued(t *testing.T) {
	f := start(t)
	f.seed(2)
	ctx := context.Background()
	at := time.Now()
	var parked []store.Delivery
	for i := range 3 {
		parked = append(parked, store.Delivery{ID: fmt.Sprintf("msg_p%d", i), Org: "org-a", Env: "test", StreamID: "estr_1", Offset: int64(10 + i),
			Payload: fmt.Appendf(nil, `{"stream_id":"estr_1","offset":%d,"message":{}}`, 10+i), NextAttemptAt: at, QueuedAt: at, CreatedAt: at, Park: true})
	}
	if _, err := f.st.EnqueueDeliveries(ctx, parked); err != nil {
		t.Fatal(err)
	}
	path := "/api/v1/streaming/events/deliveries/estr_1/replay"
	r := f.do("POST", path, manager, map[string]any{"delivery_ids": []string{"msg_p2", "msg_00", "msg_typo", "msg_p0"}})
	if r.status != 200 || r.body["requeued"] != float64(1) || fmt.Sprint(r.body["not_found"]) != "[msg_typo]" ||
		fmt.Sprint(r.body["queued"]) != "[msg_p2 msg_p0]" || fmt.Sprint(r.body["in_flight"]) != "[]" {
		t.Fatalf("replay by ids: %d %v; want 1 requeued, not_found [msg_typo], queued [msg_p2 msg_p0], in_flight []", r.status, r.body)
	}
	// they are still waiting, each once, and go into the log as they were
	if n, err := f.st.UnparkDeliveries(ctx, "estr_1", 10); err != nil || n != 3 {
		t.Fatalf("unpark: %d, %v; want the 3 parked deliveries", n, err)
	}
	c, err := f.st.CountDeliveries(ctx, store.Scope{Org: "org-a", Env: "test"}, "estr_1")
	if err != nil || c[store.DeliveryPending] != 4 {
		t.Errorf("counts after unparking %v, %v; want 4 pending (3 parked, 1 requeued)", c, err)
	}
	// another organization's replay of the same ids finds nothing
	r = f.do("POST", path, foreign, map[string]any{"delivery_ids": []string{"msg_p1"}})
	if r.status != 404 || r.code() != "stream_not_found" {
		t.Errorf("foreign replay: %d %v", r.status, r.body)
	}
}

// Deliveries parked for their endpoint are pending deliveries like the
// others: listed (first, parked true, never attempted, no next attempt
// time) as they are counted, on every page size, so that the pending
// deliveries of all pages make the pending count the endpoint (and the
// stream's status) shows; other statuses do not list them.
func TestListingListsParkedDeliveries(t *testing.T) {
	f := start(t)
	f.seed(4) // 2 dead-lettered, 2 pending
	at := time.Now()
	var parked []store.Delivery
	for i := range 3 {
		parked = append(parked, store.Delivery{ID: fmt.Sprintf("msg_p%d", i), Org: "org-a", Env: "test", StreamID: "estr_1", Offset: int64(10 + i),
			Payload: fmt.Appendf(nil, `{"stream_id":"estr_1","offset":%d,"message":{}}`, 10+i), NextAttemptAt: at, QueuedAt: at, CreatedAt: at, Park: true})
	}
	if _, err := f.st.EnqueueDeliveries(context.Background(), parked); err != nil {
		t.Fatal(err)
	}
	pages := func(query string) (ids []string, items []map[string]any, pending float64) {
		t.Helper()
		path := "/api/v1/streaming/events/deliveries/estr_1?" + query
		for range 20 {
			r := f.do("GET", path, reader, nil)
			if r.status != 200 {
				t.Fatalf("GET %s: %d %v", path, r.status, r.body)
			}
			if _, ok := r.body["parked_not_listed"]; ok {
				t.Fatalf("GET %s: parked_not_listed answered: %v", path, r.body)
			}
			pending = r.body["endpoint"].(map[string]any)["counts"].(map[string]any)["pending"].(float64)
			for _, d := range r.body["deliveries"].([]any) {
				items = append(items, d.(map[string]any))
				ids = append(ids, d.(map[string]any)["id"].(string))
			}
			next, _ := r.body["next_cursor"].(string)
			if next == "" {
				return ids, items, pending
			}
			path = "/api/v1/streaming/events/deliveries/estr_1?" + query + "&cursor=" + next
		}
		t.Fatal("paging does not end")
		return
	}
	want := []string{"msg_p2", "msg_p1", "msg_p0", "msg_03", "msg_02", "msg_01", "msg_00"}
	for _, limit := range []string{"1", "2", "3", "4", "50"} {
		if ids, _, _ := pages("limit=" + limit); !slices.Equal(ids, want) {
			t.Errorf("limit %s: pages list %v, want %v", limit, ids, want)
		}
	}
	ids, items, pending := pages("status=pending&limit=2")
	if !slices.Equal(ids, []string{"msg_p2", "msg_p1", "msg_p0", "msg_03", "msg_02"}) || pending != float64(len(ids)) {
		t.Fatalf("pending pages list %v, counts.pending %v; want the 3 parked then the 2 queued, as many as counted", ids, pending)
	}
	p, q := items[0], items[3]
	if p["status"] != "pending" || p["parked"] != true || p["attempts"] != float64(0) || p["next_attempt_at"] != nil || p["offset"] != float64(12) {
		t.Errorf("a parked delivery is listed as %v", p)
	}
	if q["parked"] != false || q["next_attempt_at"] == nil {
		t.Errorf("a queued delivery is listed as %v", q)
	}
	if ids, _, _ := pages("status=dead_lettered"); !slices.Equal(ids, []string{"msg_01", "msg_00"}) {
		t.Errorf("dead letters list %v", ids)
	}
	// a cursor among the parked is not one of another status's listing
	r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?limit=1", reader, nil)
	if r := f.do("GET", "/api/v1/streaming/events/deliveries/estr_1?status=failed&cursor="+r.body["next_cursor"].(string), reader, nil); r.status != 400 || r.code() != "invalid_request" {
		t.Errorf("a parked cursor with status=failed: %d %v", r.status, r.body)
	}
	// once the endpoint takes them they are in the log, no longer parked
	if n, err := f.st.UnparkDeliveries(context.Background(), "estr_1", 10); err != nil || n != 3 {
		t.Fatalf("unpark: %d, %v", n, err)
	}
	ids, items, pending = pages("status=pending")
	if !slices.Equal(ids, []string{"msg_p2", "msg_p1", "msg_p0", "msg_03", "msg_02"}) || pending != 5 || items[0]["parked"] != false || items[0]["next_attempt_at"] == nil {
		t.Errorf("after unparking: %v, counts.pending %v, first %v", ids, pending, items[0])
	}
}
