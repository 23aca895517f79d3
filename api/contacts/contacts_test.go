package contacts_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	"github.com/fleethub/fleethub/api/contacts"
	domain "github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

type auth map[string]*api.Principal

func (a auth) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if p := a[key]; p != nil {
		return p, nil
	}
	return nil, api.Errf("api_key_not_found", "unknown key")
}

var writer, reader, foreign = genKey(), genKey(), genKey()

func genKey() string {
	k, err := apikey.Generate("test")
	if err != nil {
		panic(err)
	}
	return k
}

type fixture struct {
	t   *testing.T
	url string
}

func start(t *testing.T, open testdb.Opener) *fixture {
	t.Helper()
	st := open(t)
	a := auth{
		writer:  {KeyID: "k1", Org: "org-a", Env: "test", Permissions: []string{"fleet:read", "fleet:write"}, Rate: 1e6, Burst: 1e6},
		reader:  {KeyID: "k2", Org: "org-a", Env: "test", Permissions: []string{"fleet:read"}, Rate: 1e6, Burst: 1e6},
		foreign: {KeyID: "k3", Org: "org-b", Env: "test", Permissions: []string{"all"}, Rate: 1e6, Burst: 1e6},
	}
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), a, nil)
	srv.Handle(contacts.New(domain.New(st, ticker())).Routes()...)
	addr := apitest.Serve(t, srv)
	return &fixture{t: t, url: "http://" + addr}
}

// ticker is a clock a second further on at every reading, so contacts
// list in the order they were made.
func ticker() func() time.Time {
	var mu sync.Mutex
	t := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		t = t.Add(time.Second)
		return t
	}
}

type reply struct {
	status int
	body   map[string]any
}

func (r reply) details() map[string]any {
	e, _ := r.body["error"].(map[string]any)
	d, _ := e["details"].(map[string]any)
	return d
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

func (f *fixture) create(body map[string]any) string {
	f.t.Helper()
	r := f.do("POST", "/v1/contacts", writer, body)
	if r.status != 201 {
		f.t.Fatalf("create: %d %v", r.status, r.body)
	}
	return r.body["contact_id"].(string)
}

func dispatcher(name, phone string) map[string]any {
	return map[string]any{"name": name, "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": phone, "email": "d@example.com"}}
}

func TestContacts(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		t.Run("CRUD", func(t *testing.T) { testCRUD(t, open) })
		t.Run("BadInput", func(t *testing.T) { testBadInput(t, open) })
		t.Run("List", func(t *testing.T) { testList(t, open) })
	})
}

func testCRUD(t *testing.T, open testdb.Opener) {
	f := start(t, open)
	id := f.create(map[string]any{"name": "Ana Ruiz", "roles": []string{"field_personnel", "supervisor"},
		"channels":    map[string]any{"sms": "+14155550100", "voice": "+14155550100", "email": "ana@example.com", "push_token": "tok-1"},
		"home_area":   map[string]any{"latitude": 40.0, "longitude": -83.0, "city": "Columbus", "state": "OH"},
		"links":       map[string]any{"vehicle_ids": []string{"v1"}},
		"quiet_hours": map[string]any{"start": "22:00", "end": "06:30", "timezone": "America/New_York"},
		"language":    "es-MX"})
	r := f.do("GET", "/v1/contacts/"+id, reader, nil)
	if r.status != 200 || r.body["name"] != "Ana Ruiz" || r.body["language"] != "es-MX" {
		t.Fatalf("get: %d %v", r.status, r.body)
	}
	if q := r.body["quiet_hours"].(map[string]any); q["critical_override"] != true {
		t.Errorf("critical_override defaults to true: %v", q)
	}
	// the id percent-encoded, every byte of it, names the same contact
	var enc strings.Builder
	for i := 0; i < len(id); i++ {
		fmt.Fprintf(&enc, "%%%02X", id[i])
	}
	if r := f.do("GET", "/v1/contacts/"+enc.String(), reader, nil); r.status != 200 || r.body["contact_id"] != id {
		t.Errorf("get by the encoded id: %d %v", r.status, r.body)
	}
	if r := f.do("GET", "/v1/contacts/"+id, foreign, nil); r.status != 404 {
		t.Errorf("another organization reads it: %d", r.status)
	}
	if r := f.do("POST", "/v1/contacts", reader, dispatcher("X", "+14155550199")); r.status != 403 {
		t.Errorf("fleet:read creates: %d", r.status)
	}
	r = f.do("PUT", "/v1/contacts/"+id+"/location", writer, map[string]any{"latitude": 41.5, "longitude": -81.7, "accuracy_m": 12})
	if r.status != 200 {
		t.Fatalf("location: %d %v", r.status, r.body)
	}
	if l := r.body["location"].(map[string]any); l["latitude"] != 41.5 || l["reported_at"] == nil {
		t.Errorf("location %v", l)
	}
	// A replacement without a location keeps the reported one.
	r = f.do("PUT", "/v1/contacts/"+id, writer, map[string]any{"name": "Ana Ruiz", "roles": []string{"field_personnel"}, "channels": map[string]any{"email": "ana@example.com"}})
	if r.status != 200 || r.body["location"] == nil || len(r.body["roles"].([]any)) != 1 || r.body["created_at"] == r.body["updated_at"] {
		t.Fatalf("replace: %d %v", r.status, r.body)
	}
	if r := f.do("PUT", "/v1/contacts/"+id, foreign, dispatcher("X", "+14155550199")); r.status != 404 {
		t.Errorf("another organization replaces it: %d", r.status)
	}
	if r := f.do("DELETE", "/v1/contacts/"+id, writer, nil); r.status != 200 || r.body["success"] != true {
		t.Fatalf("delete: %d %v", r.status, r.body)
	}
	if r := f.do("GET", "/v1/contacts/"+id, reader, nil); r.status != 404 {
		t.Errorf("deleted contact: %d", r.status)
	}
	if r := f.do("DELETE", "/v1/contacts/"+id, writer, nil); r.status != 404 {
		t.Errorf("deleted twice: %d", r.status)
	}
}

func testBadInput(t *testing.T, open testdb.Opener) {
	f := start(t, open)
	driver := f.create(map[string]any{"name": "Dan Driver", "roles": []string{"driver"}, "links": map[string]any{"driver_ids": []string{"drv_1"}}})
	// Two drivers of one name are two people.
	f.create(map[string]any{"name": "Dan Driver", "roles": []string{"driver"}, "links": map[string]any{"driver_ids": []string{"drv_2"}}})
	otherOrg := f.do("POST", "/v1/contacts", foreign, map[string]any{"name": "Other", "roles": []string{"driver"}}).body["contact_id"].(string)
	f.create(dispatcher("Dee Spatch", "+14155550101"))
	for _, c := range []struct {
		name  string
		path  string
		body  any
		field string
	}{
		{"phone", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "555-0100"}}, "channels.sms"},
		{"voice", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+0123"}}, "channels.voice"},
		{"email", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "a@b"}}, "channels.email"},
		{"no channel", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}}, "channels"},
		// white space is no token: notifications would be pushed to it
		{"blank push token", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"push_token": "   "}}, "channels.push_token"},
		{"role", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"captain"}, "channels": map[string]any{"email": "a@example.com"}}, "roles[0]"},
		{"no role", "/v1/contacts", map[string]any{"name": "A", "roles": []string{}, "channels": map[string]any{"email": "a@example.com"}}, "roles"},
		{"no name", "/v1/contacts", map[string]any{"name": " ", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "a@example.com"}}, "name"},
		{"latitude", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"field_personnel"}, "channels": map[string]any{"email": "a@example.com"},
			"location": map[string]any{"latitude": 91, "longitude": 0}}, "location.latitude"},
		{"home longitude", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"field_personnel"}, "channels": map[string]any{"email": "a@example.com"},
			"home_area": map[string]any{"latitude": 1, "longitude": 180.5}}, "home_area.longitude"},
		{"quiet hours", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "a@example.com"},
			"quiet_hours": map[string]any{"start": "25:00", "end": "06:00", "timezone": "Mars/Olympus"}}, "quiet_hours.timezone"},
		// a window of no length would be kept and never hold anyone quiet
		{"empty quiet hours", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "a@example.com"},
			"quiet_hours": map[string]any{"start": "22:00", "end": "22:00"}}, "quiet_hours.end"},
		{"language", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"email": "a@example.com"}, "language": "english!"}, "language"},
		{"emergency contact without driver", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+14155550102"}}, "links.emergency_contact_for"},
		{"contact of another organization", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+14155550102"},
			"links": map[string]any{"emergency_contact_for": []string{driver, otherOrg}}}, "links.emergency_contact_for[1]"},
		{"duplicate", "/v1/contacts", dispatcher("dee  SPATCH", "+14155550101"), "name"},
		// only an emergency contact's drivers are notified of: on another role the list would do nothing
		{"emergency_contact_for on a dispatcher", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+14155550102"},
			"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}}, "links.emergency_contact_for"},
		// the server stamps reported_at; a client's is never taken
		{"reported_at given", "/v1/contacts", map[string]any{"name": "A", "roles": []string{"field_personnel"}, "channels": map[string]any{"email": "a@example.com"},
			"location": map[string]any{"latitude": 1, "longitude": 2, "reported_at": "2020-01-01T00:00:00Z"}}, "location.reported_at"},
		{"reported_at reported", "/v1/contacts/" + driver + "/location", map[string]any{"latitude": 10, "longitude": 2, "reported_at": "2020-01-01T00:00:00Z"}, "reported_at"},
		{"type", "/v1/contacts", map[string]any{"name": 5}, "name"},
		{"location latitude", "/v1/contacts/" + driver + "/location", map[string]any{"latitude": -90.5, "longitude": 0}, "latitude"},
		{"location missing", "/v1/contacts/" + driver + "/location", map[string]any{"latitude": 10}, "longitude"},
	} {
		method := "POST"
		if c.path != "/v1/contacts" {
			method = "PUT"
		}
		r := f.do(method, c.path, writer, c.body)
		if r.status != 400 || r.details()[c.field] == nil {
			t.Errorf("%s: %d %v, want 400 naming %s", c.name, r.status, r.body, c.field)
		}
	}
	// a role outside the set is invalid_request naming it and listing the
	// roles; beside another problem, validation_failed naming both
	for _, c := range []struct {
		body   map[string]any
		code   string
		fields []string
	}{
		{map[string]any{"name": "A", "roles": []string{"dispatcher", "captain"}, "channels": map[string]any{"email": "a@example.com"}}, "invalid_request", []string{"roles[1]"}},
		{map[string]any{"name": " ", "roles": []string{"captain"}, "channels": map[string]any{"email": "a@example.com"}}, "validation_failed", []string{"name", "roles[0]"}},
	} {
		r := f.do("POST", "/v1/contacts", writer, c.body)
		e, _ := r.body["error"].(map[string]any)
		if r.status != 400 || e["code"] != c.code || !slices.Equal(slices.Sorted(maps.Keys(r.details())), c.fields) {
			t.Errorf("%v: %d %v, want 400 %s naming %v", c.body, r.status, r.body, c.code, c.fields)
		}
		if m, _ := r.details()["roles[1]"].(string); c.code == "invalid_request" && (!strings.HasPrefix(m, "must be one of ") || !strings.Contains(m, "dispatcher")) {
			t.Errorf("%v: roles[1] %q does not list the roles", c.body, m)
		}
	}
	for _, q := range []string{"role=captain", "limit=0", "limit=201", "cursor=xyz", "cursor=" + url.QueryEscape("MTIzOmNvbl94"[:6])} {
		if r := f.do("GET", "/v1/contacts?"+q, reader, nil); r.status != 400 {
			t.Errorf("?%s: %d %v", q, r.status, r.body)
		}
	}
}

func testList(t *testing.T, open testdb.Opener) {
	f := start(t, open)
	var want []string
	for i := range 5 {
		want = append(want, f.create(dispatcher(fmt.Sprintf("D%d", i), fmt.Sprintf("+1415555020%d", i))))
	}
	ec := f.create(map[string]any{"name": "Mom", "roles": []string{"emergency_contact"}, "channels": map[string]any{"sms": "+14155550300"},
		"links": map[string]any{"emergency_contact_for": []string{"drv_1"}}})
	want = append(want, ec)
	var got []string
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("the cursor never ends")
		}
		r := f.do("GET", "/v1/contacts?limit=2&cursor="+cursor, reader, nil)
		if r.status != 200 {
			t.Fatalf("list: %d %v", r.status, r.body)
		}
		for _, c := range r.body["contacts"].([]any) {
			got = append(got, c.(map[string]any)["contact_id"].(string))
		}
		next, _ := r.body["pagination"].(map[string]any)["next_cursor"].(string)
		if next == "" {
			break
		}
		cursor = url.QueryEscape(next)
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pages %v, want %v", got, want)
	}
	r := f.do("GET", "/v1/contacts?emergency_contact_for=drv_1", reader, nil)
	if l := r.body["contacts"].([]any); len(l) != 1 || l[0].(map[string]any)["contact_id"] != ec {
		t.Errorf("emergency contacts of drv_1: %v", r.body)
	}
	r = f.do("GET", "/v1/contacts?role=dispatcher&limit=200", reader, nil)
	if l := r.body["contacts"].([]any); len(l) != 5 {
		t.Errorf("dispatchers: %d", len(l))
	}

	// driver_id and vehicle_id list the contacts whose links name them.
	drv := f.create(map[string]any{"name": "Dan", "roles": []string{"driver"}, "links": map[string]any{"driver_ids": []string{"drv_1", "drv_9"}, "vehicle_ids": []string{"veh_1"}}})
	sup := f.create(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+14155550301"},
		"links": map[string]any{"vehicle_ids": []string{"veh_1", "veh_2"}}})
	other := f.create(map[string]any{"name": "Otto", "roles": []string{"driver"}, "links": map[string]any{"driver_ids": []string{"drv_2"}, "vehicle_ids": []string{"veh_2"}}})
	far := f.do("POST", "/v1/contacts", foreign, map[string]any{"name": "Far", "roles": []string{"driver"},
		"links": map[string]any{"driver_ids": []string{"drv_1"}, "vehicle_ids": []string{"veh_1"}}}).body["contact_id"]
	ids := func(q string) []string {
		t.Helper()
		r := f.do("GET", "/v1/contacts?"+q, reader, nil)
		if r.status != 200 {
			t.Fatalf("?%s: %d %v", q, r.status, r.body)
		}
		out := []string{}
		for _, c := range r.body["contacts"].([]any) {
			out = append(out, c.(map[string]any)["contact_id"].(string))
		}
		return out
	}
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"driver_id=drv_1", []string{drv}},
		{"driver_id=drv_9", []string{drv}},
		{"driver_id=drv_2", []string{other}},
		{"driver_id=drv_none", []string{}},
		{"vehicle_id=veh_1", []string{drv, sup}},
		{"vehicle_id=veh_2", []string{sup, other}},
		{"vehicle_id=veh_2&role=supervisor", []string{sup}},
		{"vehicle_id=veh_none", []string{}},
		// The emergency contact's link to drv_1 is not a driver link.
		{"emergency_contact_for=drv_1", []string{ec}},
	} {
		if got := ids(c.q); fmt.Sprint(got) != fmt.Sprint(c.want) {
			t.Errorf("?%s: %v, want %v", c.q, got, c.want)
		}
	}
	// The filters page like the whole list.
	r = f.do("GET", "/v1/contacts?vehicle_id=veh_2&limit=1", reader, nil)
	next, _ := r.body["pagination"].(map[string]any)["next_cursor"].(string)
	if l := r.body["contacts"].([]any); len(l) != 1 || l[0].(map[string]any)["contact_id"] != sup || next == "" {
		t.Fatalf("first page of veh_2: %v", r.body)
	}
	if got := ids("vehicle_id=veh_2&limit=1&cursor=" + url.QueryEscape(next)); fmt.Sprint(got) != fmt.Sprint([]string{other}) {
		t.Errorf("second page of veh_2: %v, want [%s]", got, other)
	}
	// each of the filters given together is named, and only those
	for q, want := range map[string][]string{
		"driver_id=drv_1&vehicle_id=veh_1":             {"driver_id", "vehicle_id"},
		"vehicle_id=veh_1&emergency_contact_for=drv_1": {"emergency_contact_for", "vehicle_id"},
	} {
		if r := f.do("GET", "/v1/contacts?"+q, reader, nil); r.status != 400 || !slices.Equal(slices.Sorted(maps.Keys(r.details())), want) {
			t.Errorf("%s: %d %v, want 400 naming %v", q, r.status, r.body, want)
		}
	}
	for _, q := range []string{"", "?driver_id=drv_1", "?vehicle_id=veh_1"} {
		r := f.do("GET", "/v1/contacts"+q, foreign, nil)
		if l := r.body["contacts"].([]any); len(l) != 1 || l[0].(map[string]any)["contact_id"] != far {
			t.Errorf("another organization lists %v", r.body)
		}
	}
}

// A driver may be linked by every id trips take, up to 200 characters,
// as many as a contact holds: the contact is stored on both stores and
// still refused as a duplicate when repeated.
func TestLongDriverLinks(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		f := start(t, open)
		var ids []string
		for i := range 100 {
			// varied, so that no store can keep them small by compression
			id := []rune(fmt.Sprintf("%03d", i))
			for j := range 197 {
				id = append(id, rune(0x4e00+(i*7919+j*104729)%20000))
			}
			ids = append(ids, string(id))
		}
		body := map[string]any{"name": "Dee", "roles": []string{"driver"}, "links": map[string]any{"driver_ids": ids}}
		f.create(body)
		if r := f.do("POST", "/v1/contacts", writer, body); r.status != 400 || r.details()["name"] == nil {
			t.Errorf("the same contact again: %d %v, want 400 naming name", r.status, r.body)
		}
	})
}

// TestDuplicateRefusalSaysWhatIsCompared: a duplicate is the same name,
// sms, voice, email and driver ids, and its refusal says so; the same
// person linked to other drivers is another contact.
func TestDuplicateRefusalSaysWhatIsCompared(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		f := start(t, open)
		body := func(driver string) map[string]any {
			b := dispatcher("Ann Lee", "+14155550100")
			b["links"] = map[string]any{"driver_ids": []string{driver}}
			return b
		}
		f.create(body("drv-1"))
		r := f.do("POST", "/v1/contacts", writer, body("drv-1"))
		msg, _ := r.details()["name"].(string)
		if r.status != 400 || !strings.Contains(msg, "links.driver_ids") {
			t.Errorf("the same contact again: %d %v, want 400 naming name with a message that names links.driver_ids", r.status, r.body)
		}
		f.create(body("drv-2")) // the same name and channels for another driver: taken
	})
}

// TestHomeAreaPlaceNames: a home area's city of white space only and a
// state that is no USPS code are refused naming them: such a home area
// places the person nowhere, yet would count as one; a latitude without
// its longitude, or the reverse, names the one missing. Nothing is stored.
func TestHomeAreaPlaceNames(t *testing.T) {
	f := start(t, testdb.SQLite)
	for _, c := range []struct {
		home  map[string]any
		field string
	}{
		{map[string]any{"city": "   "}, "home_area.city"},
		{map[string]any{"city": "Columbus", "state": "12"}, "home_area.state"},
		{map[string]any{"state": "ZZ"}, "home_area.state"},
		{map[string]any{"latitude": 40.0}, "home_area.longitude"},
		{map[string]any{"longitude": -83.0, "city": "Columbus"}, "home_area.latitude"},
	} {
		body := map[string]any{"name": "Field Person", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+14155550140"}, "home_area": c.home}
		if r := f.do("POST", "/v1/contacts", writer, body); r.status != 400 || r.body["error"].(map[string]any)["code"] != "validation_failed" || r.details()[c.field] == nil {
			t.Errorf("home area %v: %d %v, want 400 validation_failed naming %s", c.home, r.status, r.body, c.field)
		}
	}
	if r := f.do("GET", "/v1/contacts", reader, nil); len(r.body["contacts"].([]any)) != 0 {
		t.Errorf("refused contacts were stored: %v", r.body["contacts"])
	}
	f.create(map[string]any{"name": "Field Person", "roles": []string{"field_personnel"}, "channels": map[string]any{"sms": "+14155550140"},
		"home_area": map[string]any{"city": "Washington", "state": "DC"}})
}
