package emergency_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// clock is a test clock moved by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) set(t time.Time) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

// levelSent answers "channel recipient to level" of the escalation
// notifications of an alert, sorted.
func (g *gateway) levelSent(id string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, n := range g.got {
		if n.AlertID == id && n.Level > 0 {
			out = append(out, fmt.Sprintf("%s %s %s %d", n.Channel, n.Recipient, n.To, n.Level))
		}
	}
	slices.Sort(out)
	return out
}

func escalating(expires time.Time) map[string]any {
	b := alertBody([]string{"dispatchers"}, nil, "sms", "email")
	b["expiration"] = expires.Format(time.RFC3339)
	b["acknowledgment_required"] = true
	b["escalation_policy"] = map[string]any{"enabled": true, "escalation_levels": []map[string]any{
		{"delay_minutes": 5, "action": "notify_supervisors"}, {"delay_minutes": 15, "action": "notify_emergency_management"}}}
	return b
}

// tick runs one look for due steps on f's node.
func (f *fixture) tick() int {
	f.t.Helper()
	n, err := f.alerts.Tick(f.t.Context())
	if err != nil {
		f.t.Fatal(err)
	}
	return n
}

func TestEscalationOnTime(t *testing.T) {
	type backend struct {
		open   func(t *testing.T) store.Backend
		reopen func(t *testing.T) store.Backend // another node, or the same after a restart
	}
	run := func(t *testing.T, b backend) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &gateway{}
		f := startWith(t, b.open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now, Node: "a"}}, nil)
		sup := f.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550001001"}})
		em := f.contact(map[string]any{"name": "Em", "roles": []string{"emergency_management"}, "channels": map[string]any{"sms": "+15550001002", "email": "em@example.com"}})
		disp := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001003"}})
		code, al := f.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)
		_, acked := f.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
		ackedID := acked["alert_id"].(string)
		if code, out := f.do("POST", "/v1/emergency/alerts/"+ackedID+"/acknowledge", map[string]any{"recipient_id": disp}); code != 200 {
			t.Fatalf("ack: %d %v", code, out)
		}

		clk.set(t0.Add(5*time.Minute - time.Second))
		f.tick()
		if got := gw.levelSent(id); len(got) != 0 {
			t.Fatalf("sent before the level's delay: %v", got)
		}
		// Nobody reads the alert: the level goes out when it falls due.
		clk.set(t0.Add(5 * time.Minute))
		f.tick()
		if got, want := gw.levelSent(id), []string{"sms " + sup + " +15550001001 1"}; !slices.Equal(got, want) {
			t.Fatalf("level 1 sent %v, want %v", got, want)
		}
		if got := gw.levelSent(ackedID); len(got) != 0 {
			t.Errorf("an acknowledged alert escalated: %v", got)
		}
		f.tick()
		if got := gw.levelSent(id); len(got) != 1 {
			t.Errorf("level 1 sent again: %v", got)
		}
		_, read := f.do("GET", "/v1/emergency/alerts/"+id, nil)
		es := read["escalation_status"].(map[string]any)
		if es["current_level"] != 1.0 || es["escalation_triggered"] != true || len(es["levels"].([]any)) != 1 {
			t.Errorf("escalation_status %v", es)
		}
		lvl := es["levels"].([]any)[0].(map[string]any)
		if n := lvl["notified"].([]any); len(n) != 1 || n[0].(map[string]any)["contact_id"] != sup {
			t.Errorf("level 1 notified %v", n)
		}

		// A restart (or another node) takes the next level from the store.
		clk2 := &clock{t: t0.Add(15 * time.Minute)}
		g := startWith(t, b.reopen(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk2.Now, Node: "b"}}, nil)
		g.tick()
		want := []string{"email " + em + " em@example.com 2", "sms " + em + " +15550001002 2", "sms " + sup + " +15550001001 1"}
		slices.Sort(want)
		if got := gw.levelSent(id); !slices.Equal(got, want) {
			t.Fatalf("after the restart %v, want %v", got, want)
		}
		clk2.set(t0.Add(time.Hour))
		g.tick()
		_, read = g.do("GET", "/v1/emergency/alerts/"+id, nil)
		if read["status"] != "expired" || read["escalation_status"].(map[string]any)["current_level"] != 2.0 {
			t.Errorf("after expiry: %v %v", read["status"], read["escalation_status"])
		}
	}
	t.Run("sqlite", func(t *testing.T) {
		dir := t.TempDir()
		run(t, backend{open: func(t *testing.T) store.Backend { return testdb.SQLiteIn(t, dir) }, reopen: func(t *testing.T) store.Backend { return testdb.SQLiteIn(t, dir) }})
	})
	t.Run("postgresql", func(t *testing.T) {
		testdb.URL(t)
		url := testdb.Schema(t)
		run(t, backend{open: func(t *testing.T) store.Backend { return testdb.PostgreSQLAt(t, url) }, reopen: func(t *testing.T) store.Backend { return testdb.PostgreSQLAt(t, url) }})
	})
}

func TestEscalationOnceAcrossNodes(t *testing.T) {
	run := func(t *testing.T, open func(t *testing.T) store.Backend) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &gateway{}
		a := startWith(t, open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now, Node: "a", Batch: 2}}, nil)
		b := startWith(t, open(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now, Node: "b", Batch: 2}}, nil)
		sup := a.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550001001"}})
		a.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001003"}})
		var ids []string
		for range 12 {
			_, al := a.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour)))
			ids = append(ids, al["alert_id"].(string))
		}
		clk.set(t0.Add(5 * time.Minute))
		var wg sync.WaitGroup
		for _, f := range []*fixture{a, b, a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.alerts.Tick(t.Context()); err != nil {
					t.Error(err)
				}
			}()
		}
		wg.Wait()
		for _, id := range ids {
			if got, want := gw.levelSent(id), []string{"sms " + sup + " +15550001001 1"}; !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", id, got, want)
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

// TestEscalationNeedsRequiredAcknowledgment: escalation waits on
// acknowledgments, so an enabled policy on an alert that requires none
// (acknowledgment_required false or left out) would never escalate: it is
// refused naming escalation_policy.enabled, saying escalation needs
// acknowledgment_required true, and nothing is stored or sent. A policy
// turned off is accepted on such an alert, has nothing pending and sends
// no level, however long nobody answers.
func TestEscalationNeedsRequiredAcknowledgment(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	f.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550001001"}})
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001003"}})
	for _, c := range []struct {
		name  string
		edit  func(b map[string]any)
		other string // a field refused beside escalation_policy.enabled
	}{
		{"acknowledgment_required false", func(b map[string]any) { b["acknowledgment_required"] = false }, ""},
		{"acknowledgment_required left out", func(b map[string]any) { delete(b, "acknowledgment_required") }, ""},
		{"no levels, acknowledgment_required false", func(b map[string]any) {
			b["acknowledgment_required"] = false
			b["escalation_policy"] = map[string]any{"enabled": true}
		}, "escalation_policy.escalation_levels"},
	} {
		b := escalating(t0.Add(time.Hour))
		c.edit(b)
		code, out := f.do("POST", "/v1/emergency/alerts", b)
		if c.other != "" {
			refused(t, c.name, code, out, "validation_failed", "escalation_policy.enabled", c.other)
		} else {
			refused(t, c.name, code, out, "validation_failed", "escalation_policy.enabled")
		}
		e, _ := out["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		if msg, _ := details["escalation_policy.enabled"].(string); !strings.Contains(msg, "acknowledgment_required true") {
			t.Errorf("%s: %q, want it to say escalation needs acknowledgment_required true", c.name, msg)
		}
	}
	if _, list := f.do("GET", "/v1/emergency/alerts", nil); len(list["alerts"].([]any)) != 0 {
		t.Errorf("refused alerts were stored: %v", list["alerts"])
	}
	if n := gw.count(); n != 0 {
		t.Errorf("refused alerts notified the gateway %d times", n)
	}
	b := escalating(t0.Add(time.Hour))
	b["acknowledgment_required"] = false
	b["escalation_policy"].(map[string]any)["enabled"] = false
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert with escalation off: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	if ack := al["acknowledgment_status"].(map[string]any); ack["pending"].(float64) != 0 || al["escalation_status"].(map[string]any)["next_escalation_at"] != nil {
		t.Errorf("acknowledgment_status %v, escalation_status %v: want nothing pending and no escalation due", ack, al["escalation_status"])
	}
	for _, at := range []time.Duration{5 * time.Minute, 15 * time.Minute, 30 * time.Minute} {
		clk.set(t0.Add(at))
		f.tick()
	}
	if got := gw.levelSent(id); len(got) != 0 {
		t.Errorf("an alert requiring no acknowledgment escalated: %v", got)
	}
}

// TestAcknowledgmentRecordsWhoAcknowledged: recipient_type says who
// acknowledged (a dispatcher for a driver here), the recipient's own type
// when absent; an unknown type is refused by name and records nothing.
func TestAcknowledgmentRecordsWhoAcknowledged(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	d1 := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001003"}})
	d2 := f.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001004"}})
	code, al := f.do("POST", "/v1/emergency/alerts", escalating(time.Now().Add(time.Hour)))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	ack := "/v1/emergency/alerts/" + id + "/acknowledge"
	if code, out := f.do("POST", ack, map[string]any{"recipient_id": d1, "recipient_type": "janitor"}); code != 400 ||
		out["error"].(map[string]any)["details"].(map[string]any)["recipient_type"] == nil {
		t.Fatalf("unknown recipient_type: %d %v", code, out)
	}
	if _, out := f.do("GET", "/v1/emergency/alerts/"+id, nil); out["acknowledgment_status"].(map[string]any)["received"] != 0.0 {
		t.Fatalf("a refused acknowledgment was counted: %v", out["acknowledgment_status"])
	}
	f.do("POST", ack, map[string]any{"recipient_id": d1, "recipient_type": "supervisor", "note": "for Dee"})
	_, out := f.do("POST", ack, map[string]any{"recipient_id": d2})
	by := map[string]any{}
	for _, r := range out["recipients"].([]any) {
		r := r.(map[string]any)
		by[r["recipient_id"].(string)] = r["acknowledged_by_type"]
	}
	if by[d1] != "supervisor" || by[d2] == "" || by[d2] == nil {
		t.Errorf("acknowledged_by_type %v, want supervisor for %s and the recipient's own type for %s", by, d1, d2)
	}
}

// TestAcknowledgingTwice: a recipient's second acknowledgment (a client
// retrying) answers 200 with the alert as it stands: the first is kept
// (its time, type and note), counted once.
func TestAcknowledgingTwice(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	d1 := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001103"}})
	f.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001104"}})
	code, al := f.do("POST", "/v1/emergency/alerts", escalating(time.Now().Add(time.Hour)))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	ack := "/v1/emergency/alerts/" + al["alert_id"].(string) + "/acknowledge"
	mine := func(out map[string]any) map[string]any {
		for _, r := range out["recipients"].([]any) {
			if r := r.(map[string]any); r["recipient_id"] == d1 {
				return r
			}
		}
		return nil
	}
	_, first := f.do("POST", ack, map[string]any{"recipient_id": d1, "note": "on it"})
	code, again := f.do("POST", ack, map[string]any{"recipient_id": d1, "recipient_type": "supervisor", "note": "again"})
	r, r0 := mine(again), mine(first)
	if st := again["acknowledgment_status"].(map[string]any); code != 200 || st["received"] != 1.0 || st["pending"] != 1.0 ||
		r["note"] != "on it" || r["acknowledged_at"] != r0["acknowledged_at"] || r["acknowledged_by_type"] != "dispatcher" {
		t.Errorf("acknowledged twice: %d %v %v, want the first acknowledgment kept, counted once", code, st, r)
	}
}

// TestAcknowledgmentNoteLimit: a note over 2000 characters is refused
// naming it and acknowledges nothing; 2000 are taken.
func TestAcknowledgmentNoteLimit(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	d1 := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550001103"}})
	code, al := f.do("POST", "/v1/emergency/alerts", escalating(time.Now().Add(time.Hour)))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	ack := "/v1/emergency/alerts/" + al["alert_id"].(string) + "/acknowledge"
	code, out := f.do("POST", ack, map[string]any{"recipient_id": d1, "note": strings.Repeat("é", 2001)})
	refused(t, "a note of 2001 characters", code, out, "validation_failed", "note")
	// beside an unknown recipient_type, both are named
	code, out = f.do("POST", ack, map[string]any{"recipient_id": d1, "recipient_type": "alien", "note": strings.Repeat("é", 2001)})
	refused(t, "a long note and an unknown type", code, out, "validation_failed", "note", "recipient_type")
	if _, got := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil); got["acknowledgment_status"].(map[string]any)["received"] != 0.0 {
		t.Errorf("a refused acknowledgment was counted: %v", got["acknowledgment_status"])
	}
	if code, out := f.do("POST", ack, map[string]any{"recipient_id": d1, "note": strings.Repeat("é", 2000)}); code != 200 {
		t.Errorf("a note of 2000 characters: %d %v", code, out)
	}
}

// TestNoEscalationWithoutRecipients: an alert that reached nobody has no
// acknowledgment pending, so no level of its escalation is ever sent:
// next_escalation_at is null and next_status_check is the expiration,
// and no level is sent when its time comes.
func TestNoEscalationWithoutRecipients(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	f.contact(map[string]any{"name": "Sue", "roles": []string{"supervisor"}, "channels": map[string]any{"sms": "+15550001201"}})
	code, al := f.do("POST", "/v1/emergency/alerts", escalating(t0.Add(time.Hour))) // no dispatcher in the directory
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	if n := al["delivery_status"].(map[string]any)["total_recipients"]; n != 0.0 {
		t.Fatalf("recipients %v, want none", n)
	}
	if es := al["escalation_status"].(map[string]any); es["next_escalation_at"] != nil || al["next_status_check"] != al["expires_at"] {
		t.Errorf("escalation_status %v, next_status_check %v; want no escalation to come, the expiration next", es, al["next_status_check"])
	}
	clk.set(t0.Add(5 * time.Minute))
	f.tick()
	if _, al = f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil); al["escalation_status"].(map[string]any)["current_level"] != 0.0 || f.gw.count() != 0 {
		t.Errorf("escalated with nobody to acknowledge: %v, %d notifications", al["escalation_status"], f.gw.count())
	}
}

// TestAcknowledgmentsAtOnce: recipients acknowledging one alert at the
// same moment (a fleet's drivers answering it) are each recorded, none
// turned away with a conflict: an acknowledgment that meets another one's
// write reads the alert again and records itself on top.
func TestAcknowledgmentsAtOnce(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	const n = 12
	vehicles := make([]string, n)
	for i := range vehicles {
		vehicles[i] = fmt.Sprintf("veh-%02d", i)
	}
	b := alertBody(nil, nil, "in_app_alert")
	b["target_audience"] = map[string]any{"specific_vehicles": vehicles}
	b["acknowledgment_required"] = true
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	path := "/v1/emergency/alerts/" + al["alert_id"].(string)
	codes := make([]int, n)
	var wg sync.WaitGroup
	for i, v := range vehicles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = f.do("POST", path+"/acknowledge", map[string]any{"recipient_id": "vehicle:" + v})
		}()
	}
	wg.Wait()
	for i, c := range codes {
		if c != 200 {
			t.Errorf("acknowledgment of %s: %d, want 200", vehicles[i], c)
		}
	}
	_, got := f.do("GET", path, nil)
	if st := got["acknowledgment_status"].(map[string]any); st["received"] != float64(n) || st["pending"] != 0.0 {
		t.Errorf("after %d acknowledgments at once: %v", n, st)
	}
	// a cancellation meeting acknowledgments is not turned away either
	code, al = f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	path = "/v1/emergency/alerts/" + al["alert_id"].(string)
	var cancel int
	for i, v := range vehicles {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i == n/2 {
				cancel, _ = f.do("DELETE", path, nil)
				return
			}
			// before the cancellation 200, after it 409: the alert is no longer active
			if c, out := f.do("POST", path+"/acknowledge", map[string]any{"recipient_id": "vehicle:" + v}); c != 200 &&
				!(c == 409 && strings.Contains(fmt.Sprint(out), "cannot be acknowledged")) {
				t.Errorf("acknowledgment of %s beside the cancellation: %d %v", v, c, out)
			}
		}()
	}
	wg.Wait()
	if cancel != 200 {
		t.Errorf("cancellation beside acknowledgments: %d, want 200", cancel)
	}
}
