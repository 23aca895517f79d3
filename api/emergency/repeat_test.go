package emergency_test

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// rounds answers "channel recipient repeat" of every notification the
// gateway received for an alert (repeat 0: the first delivery), sorted.
func (g *gateway) rounds(id string) []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for _, n := range g.got {
		if n.AlertID == id && n.Level == 0 {
			out = append(out, fmt.Sprintf("%s %s %d", n.Channel, n.Recipient, n.Repeat))
		}
	}
	slices.Sort(out)
	return out
}

// rounds answers "channel recipient repeat" of the requests the gateway
// received for an alert, one per request (a retry counts again), sorted.
func (g *flakyGateway) rounds(id string) []string {
	var out []string
	for _, r := range g.requests() {
		if r.n.AlertID == id && r.n.Level == 0 {
			out = append(out, fmt.Sprintf("%s %s %d", r.n.Channel, r.n.Recipient, r.n.Repeat))
		}
	}
	slices.Sort(out)
	return out
}

// lines answers "channel recipient repeat" for each recipient, channel and
// repeat given, sorted.
func lines(channel string, recipients []string, repeats ...int) []string {
	var out []string
	for _, r := range recipients {
		for _, n := range repeats {
			out = append(out, fmt.Sprintf("%s %s %d", channel, r, n))
		}
	}
	slices.Sort(out)
	return out
}

// timedAlert is an alert to the dispatchers on channels, each a delivery
// channel item with its timing, expiring at exp.
func timedAlert(exp time.Time, channels ...map[string]any) map[string]any {
	b := alertBody([]string{"dispatchers"}, nil)
	b["delivery_channels"] = channels
	b["expiration"] = exp.Format(time.RFC3339)
	return b
}

// channelSchedule answers the delivery_status.channel_schedule item of a
// channel.
func channelSchedule(t *testing.T, al map[string]any, channel string) map[string]any {
	t.Helper()
	ds, _ := al["delivery_status"].(map[string]any)
	cs, _ := ds["channel_schedule"].([]any)
	for _, c := range cs {
		if c := c.(map[string]any); c["channel"] == channel {
			return c
		}
	}
	t.Fatalf("no %s in channel_schedule: %v", channel, ds)
	return nil
}

// delivery answers a recipient's delivery on a channel.
func delivery(t *testing.T, al map[string]any, recipient, channel string) map[string]any {
	t.Helper()
	for _, r := range al["recipients"].([]any) {
		if r := r.(map[string]any); r["recipient_id"] == recipient {
			for _, d := range r["deliveries"].([]any) {
				if d := d.(map[string]any); d["channel"] == channel {
					return d
				}
			}
		}
	}
	t.Fatalf("no %s delivery for %s in %v", channel, recipient, al["recipients"])
	return nil
}

func rfc(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// TestRepeatsUntilAcknowledged: an sms channel with repeats goes out at
// once, then again every interval to each recipient who has not
// acknowledged; an acknowledgment stops that recipient's repeats, and the
// last one the channel's.
func TestRepeatsUntilAcknowledged(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001"}})
	dan := f.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005002"}})
	both := []string{dee, dan}
	b := timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "priority": "immediate", "repeat_interval_minutes": 5, "max_repeats": 3})
	b["acknowledgment_required"] = true
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	if got, want := gw.rounds(id), lines("sms", both, 0); !slices.Equal(got, want) {
		t.Fatalf("at creation %v, want %v", got, want)
	}
	cs := channelSchedule(t, al, "sms")
	if cs["status"] != "repeating" || cs["times_sent"] != 1.0 || cs["repeats_remaining"] != 3.0 || cs["next_repeat_at"] != rfc(t0.Add(5*time.Minute)) ||
		cs["first_delivery_at"] != rfc(t0) {
		t.Errorf("channel_schedule at creation %v", cs)
	}

	clk.set(t0.Add(5*time.Minute - time.Second))
	f.tick()
	if got := gw.rounds(id); len(got) != 2 {
		t.Fatalf("a repeat before its interval: %v", got)
	}
	clk.set(t0.Add(5 * time.Minute))
	f.tick()
	if got, want := gw.rounds(id), lines("sms", both, 0, 1); !slices.Equal(got, want) {
		t.Fatalf("at the interval %v, want %v", got, want)
	}
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	cs = channelSchedule(t, al, "sms")
	if cs["times_sent"] != 2.0 || cs["repeats_remaining"] != 2.0 || cs["next_repeat_at"] != rfc(t0.Add(10*time.Minute)) || cs["last_sent_at"] != rfc(t0.Add(5*time.Minute)) {
		t.Errorf("channel_schedule after the first repeat %v", cs)
	}
	if d := delivery(t, al, dee, "sms"); d["repeat"] != 1.0 || d["status"] != "delivered" || d["scheduled_at"] != rfc(t0.Add(5*time.Minute)) {
		t.Errorf("Dee's sms after the first repeat %v", d)
	}

	if code, out := f.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", map[string]any{"recipient_id": dee}); code != 200 {
		t.Fatalf("ack: %d %v", code, out)
	}
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	want := append(lines("sms", both, 0, 1), lines("sms", []string{dan}, 2)...)
	slices.Sort(want)
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Fatalf("after Dee acknowledged %v, want %v", got, want)
	}
	_, al = f.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", map[string]any{"recipient_id": dan})
	cs = channelSchedule(t, al, "sms")
	if cs["status"] != "done" || cs["repeats_remaining"] != 0.0 || cs["next_repeat_at"] != nil || cs["times_sent"] != 3.0 {
		t.Errorf("channel_schedule once everyone acknowledged %v", cs)
	}
	for _, at := range []time.Duration{15 * time.Minute, 20 * time.Minute, time.Hour} {
		clk.set(t0.Add(at))
		f.tick()
	}
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Errorf("after both acknowledged %v, want %v", got, want)
	}
}

// TestMaxRepeatsBoundsTheCount: a channel repeats max_repeats times and
// no more, and never after the expiration: repeats that would fall after
// it are not counted in repeats_remaining.
func TestMaxRepeatsBoundsTheCount(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001", "email": "dee@example.com"}})
	code, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour),
		map[string]any{"channel": "sms", "repeat_interval_minutes": 1, "max_repeats": 2},
		map[string]any{"channel": "email", "repeat_interval_minutes": 25, "max_repeats": 5}))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	if cs := channelSchedule(t, al, "email"); cs["repeats_remaining"] != 2.0 {
		t.Errorf("email repeats at +25 and +50 min fall before the expiration at +60: %v", cs)
	}
	for m := 1; m <= 90; m++ {
		clk.set(t0.Add(time.Duration(m) * time.Minute))
		f.tick()
	}
	want := append(lines("sms", []string{dee}, 0, 1, 2), lines("email", []string{dee}, 0, 1, 2)...)
	slices.Sort(want)
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Errorf("sent %v, want %v", got, want)
	}
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	if cs := channelSchedule(t, al, "sms"); cs["status"] != "done" || cs["times_sent"] != 3.0 || cs["repeats_remaining"] != 0.0 || cs["next_repeat_at"] != nil {
		t.Errorf("sms channel_schedule %v", cs)
	}
	if cs := channelSchedule(t, al, "email"); cs["status"] != "done" || cs["times_sent"] != 3.0 {
		t.Errorf("email channel_schedule %v", cs)
	}
}

// TestRepeatsAfterDowntime: rounds that fell due while no node ran are
// not sent in a burst: the latest of them goes, once.
func TestRepeatsAfterDowntime(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001"}})
	_, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "repeat_interval_minutes": 2, "max_repeats": 4}))
	id := al["alert_id"].(string)
	clk.set(t0.Add(7 * time.Minute)) // repeats 1 to 3 are due
	f.tick()
	f.tick()
	if got, want := gw.rounds(id), lines("sms", []string{dee}, 0, 3); !slices.Equal(got, want) {
		t.Fatalf("after the downtime %v, want %v", got, want)
	}
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	if cs := channelSchedule(t, al, "sms"); cs["times_sent"] != 2.0 || cs["repeats_remaining"] != 1.0 || cs["next_repeat_at"] != rfc(t0.Add(8*time.Minute)) {
		t.Errorf("channel_schedule %v", cs)
	}
	clk.set(t0.Add(8 * time.Minute))
	f.tick()
	if got, want := gw.rounds(id), lines("sms", []string{dee}, 0, 3, 4); !slices.Equal(got, want) {
		t.Errorf("at the last repeat %v, want %v", got, want)
	}
}

// TestDelayedVoiceCall: a voice call with delay_minutes is scheduled, not
// sent, until its delay passed; the other channels go at once.
func TestDelayedVoiceCall(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001", "voice": "+15550005001"}})
	code, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour),
		map[string]any{"channel": "sms"}, map[string]any{"channel": "voice_call", "priority": "high", "delay_minutes": 10}))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	id := al["alert_id"].(string)
	if got, want := gw.rounds(id), lines("sms", []string{dee}, 0); !slices.Equal(got, want) {
		t.Fatalf("at creation %v, want %v", got, want)
	}
	due := rfc(t0.Add(10 * time.Minute))
	check := func(al map[string]any, status string, scheduled float64) {
		t.Helper()
		if d := delivery(t, al, dee, "voice_call"); d["status"] != status || d["scheduled_at"] != due || d["to"] != "+15550005001" {
			t.Errorf("voice delivery %v, want %s at %s", d, status, due)
		}
		if ds := al["delivery_status"].(map[string]any); ds["scheduled_deliveries"] != scheduled {
			t.Errorf("delivery_status %v, want %v scheduled", ds, scheduled)
		}
	}
	check(al, "scheduled", 1)
	if cs := channelSchedule(t, al, "voice_call"); cs["status"] != "scheduled" || cs["first_delivery_at"] != due || cs["times_sent"] != 0.0 || cs["last_sent_at"] != nil {
		t.Errorf("voice channel_schedule %v", cs)
	}
	clk.set(t0.Add(10*time.Minute - time.Second))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	if got := gw.rounds(id); len(got) != 1 {
		t.Fatalf("the voice call went before its delay: %v", got)
	}
	check(al, "scheduled", 1)

	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	want := append(lines("sms", []string{dee}, 0), lines("voice_call", []string{dee}, 0)...)
	slices.Sort(want)
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Fatalf("after the delay %v, want %v", got, want)
	}
	gw.mu.Lock()
	for _, n := range gw.got {
		if n.Channel == "voice_call" && (n.Priority != "high" || n.To != "+15550005001") {
			t.Errorf("voice notification %+v", n)
		}
	}
	gw.mu.Unlock()
	_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
	check(al, "delivered", 0)
	if cs := channelSchedule(t, al, "voice_call"); cs["status"] != "done" || cs["times_sent"] != 1.0 || cs["last_sent_at"] != due {
		t.Errorf("voice channel_schedule after the delay %v", cs)
	}
	f.tick()
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Errorf("sent again: %v", got)
	}
}

// TestAcknowledgmentCancelsDelayedSend: a recipient who acknowledges
// before a channel's delay passed is not called; the others are.
func TestAcknowledgmentCancelsDelayedSend(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+15550005001"}})
	dan := f.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"voice": "+15550005002"}})
	_, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour),
		map[string]any{"channel": "in_app_alert"}, map[string]any{"channel": "voice_call", "delay_minutes": 10}))
	id := al["alert_id"].(string)
	clk.set(t0.Add(time.Minute))
	_, al = f.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", map[string]any{"recipient_id": dee})
	if d := delivery(t, al, dee, "voice_call"); d["status"] != "cancelled" || d["reason"] != "acknowledged" {
		t.Errorf("Dee's voice call after her acknowledgment %v", d)
	}
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	if got, want := gw.rounds(id), lines("voice_call", []string{dan}, 0); !slices.Equal(got, want) {
		t.Errorf("sent %v, want %v", got, want)
	}
}

// TestRepeatsWithoutRequiredAcknowledgment: repeats are about reaching
// people, so an alert that requires no acknowledgment repeats too, up to
// max_repeats, to everyone who has not acknowledged; acknowledging it
// anyway stops that recipient's repeats.
func TestRepeatsWithoutRequiredAcknowledgment(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001"}})
	dan := f.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005002"}})
	b := timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "repeat_interval_minutes": 5, "max_repeats": 2})
	b["acknowledgment_required"] = false
	_, al := f.do("POST", "/v1/emergency/alerts", b)
	id := al["alert_id"].(string)
	clk.set(t0.Add(5 * time.Minute))
	f.tick()
	if code, out := f.do("POST", "/v1/emergency/alerts/"+id+"/acknowledge", map[string]any{"recipient_id": dan}); code != 200 {
		t.Fatalf("ack: %d %v", code, out)
	}
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	want := append(lines("sms", []string{dee}, 0, 1, 2), lines("sms", []string{dan}, 0, 1)...)
	slices.Sort(want)
	if got := gw.rounds(id); !slices.Equal(got, want) {
		t.Errorf("sent %v, want %v", got, want)
	}
}

// TestCancelledOrExpiredAlertSendsNothingMore: cancelling an alert calls
// off its repeats and delayed sends; so does its expiration, even when no
// node looked for due rounds before it.
func TestCancelledOrExpiredAlertSendsNothingMore(t *testing.T) {
	for _, c := range []struct {
		name, status, reason string
		end                  func(f *fixture, id string)
		at                   time.Duration // the clock when the alert ends
	}{
		{"cancelled", "cancelled", "alert_cancelled", func(f *fixture, id string) {
			if code, out := f.do("DELETE", "/v1/emergency/alerts/"+id, nil); code != 200 {
				f.t.Fatalf("cancel: %d %v", code, out)
			}
		}, time.Minute},
		{"expired", "expired", "alert_expired", func(*fixture, string) {}, 8 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			t0 := time.Now().UTC().Truncate(time.Second)
			clk := &clock{t: t0}
			gw := &gateway{}
			f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
			dee := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001", "voice": "+15550005001"}})
			_, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(8*time.Minute),
				map[string]any{"channel": "sms", "repeat_interval_minutes": 2, "max_repeats": 3}, map[string]any{"channel": "voice_call", "delay_minutes": 6}))
			id := al["alert_id"].(string)
			if cs := channelSchedule(t, al, "sms"); cs["repeats_remaining"] != 3.0 {
				t.Errorf("sms channel_schedule %v", cs)
			}
			clk.set(t0.Add(c.at))
			c.end(f, id)
			for _, at := range []time.Duration{2, 4, 6, 8, 10, 60} {
				clk.set(t0.Add(max(c.at, at*time.Minute)))
				f.tick()
			}
			if got, want := gw.rounds(id), lines("sms", []string{dee}, 0); !slices.Equal(got, want) {
				t.Errorf("sent %v, want only the first sms %v", got, want)
			}
			_, al = f.do("GET", "/v1/emergency/alerts/"+id, nil)
			if al["status"] != c.status {
				t.Errorf("status %v, want %s", al["status"], c.status)
			}
			if d := delivery(t, al, dee, "voice_call"); d["status"] != "cancelled" || d["reason"] != c.reason {
				t.Errorf("the delayed voice call %v, want cancelled for %s", d, c.reason)
			}
			for _, ch := range []string{"sms", "voice_call"} {
				if cs := channelSchedule(t, al, ch); cs["status"] != "cancelled" || cs["repeats_remaining"] != 0.0 || cs["next_repeat_at"] != nil {
					t.Errorf("%s channel_schedule %v", ch, cs)
				}
			}
		})
	}
}

// TestChannelTimingRefused: bad repeat and delay values answer 400
// naming the field (validation_failed; invalid_request for a value of the
// wrong type, as for every field), and create nothing.
func TestChannelTimingRefused(t *testing.T) {
	f := startWith(t, testdb.SQLite(t), &gateway{}, emergency.AlertsConfig{}, nil)
	exp := time.Now().Add(time.Hour)
	for _, c := range []struct {
		item        map[string]any
		code, field string
	}{
		{map[string]any{"channel": "sms", "repeat_interval_minutes": 5}, "validation_failed", "delivery_channels[1].max_repeats"},
		{map[string]any{"channel": "sms", "max_repeats": 3}, "validation_failed", "delivery_channels[1].repeat_interval_minutes"},
		{map[string]any{"channel": "sms", "repeat_interval_minutes": 5, "max_repeats": 21}, "validation_failed", "delivery_channels[1].max_repeats"},
		{map[string]any{"channel": "sms", "repeat_interval_minutes": 1441, "max_repeats": 2}, "validation_failed", "delivery_channels[1].repeat_interval_minutes"},
		{map[string]any{"channel": "sms", "repeat_interval_minutes": 5, "max_repeats": -1}, "validation_failed", "delivery_channels[1].max_repeats"},
		{map[string]any{"channel": "voice_call", "delay_minutes": -5}, "validation_failed", "delivery_channels[1].delay_minutes"},
		{map[string]any{"channel": "voice_call", "delay_minutes": 60}, "validation_failed", "delivery_channels[1].delay_minutes"}, // at the expiration
		{map[string]any{"channel": "in_app_alert"}, "validation_failed", "delivery_channels[1].channel"},                          // listed twice
		{map[string]any{"channel": "sms", "repeat_interval_minutes": 0.5, "max_repeats": 3}, "invalid_request", "delivery_channels[1].repeat_interval_minutes"},
		{map[string]any{"channel": "voice_call", "delay_minutes": "ten"}, "invalid_request", "delivery_channels[1].delay_minutes"},
	} {
		code, out := f.do("POST", "/v1/emergency/alerts", timedAlert(exp, map[string]any{"channel": "in_app_alert"}, c.item))
		e, _ := out["error"].(map[string]any)
		details, _ := e["details"].(map[string]any)
		if code != 400 || e["code"] != c.code || details[c.field] == nil {
			t.Errorf("%v: %d %v, want 400 %s naming %s", c.item, code, out, c.code, c.field)
		}
	}
	_, list := f.do("GET", "/v1/emergency/alerts", nil)
	if n := len(list["alerts"].([]any)); n != 0 {
		t.Errorf("%d alerts created", n)
	}
}

// TestRepeatsAndDelaysAfterRestart: the node that created an alert stops
// before its delayed voice call and its sms repeats are due; nodes started
// afterwards on the same store (reopened) send each of them at its time,
// once, though two nodes look for due work at the same time.
func TestRepeatsAndDelaysAfterRestart(t *testing.T) {
	eachShared(t, func(t *testing.T, open sharedStore) {
		t0 := time.Now().UTC().Truncate(time.Second)
		clk := &clock{t: t0}
		gw := &flakyGateway{tries: map[string]int{}}
		a := startNode(t, open(t), gw, "a", clk, true)
		dee := a.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550006001", "voice": "+15550006001"}})
		dan := a.contact(map[string]any{"name": "Dan", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550006002", "voice": "+15550006002"}})
		both := []string{dee, dan}
		code, al := a.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour),
			map[string]any{"channel": "sms", "repeat_interval_minutes": 5, "max_repeats": 2}, map[string]any{"channel": "voice_call", "delay_minutes": 10}))
		if code != 201 {
			t.Fatalf("alert: %d %v", code, al)
		}
		id := al["alert_id"].(string)
		clk.set(t0.Add(5*time.Minute - time.Second))
		a.tick()
		a.stop()
		if got, want := gw.rounds(id), lines("sms", both, 0); !slices.Equal(got, want) {
			t.Fatalf("before the stop %v, want %v", got, want)
		}

		clk2 := &clock{t: t0.Add(5 * time.Minute)}
		b := startNode(t, open(t), gw, "b", clk2, false)
		c := startNode(t, open(t), gw, "c", clk2, false)
		_, al = b.do("GET", "/v1/emergency/alerts/"+id, nil)
		if d := delivery(t, al, dan, "voice_call"); d["status"] != "scheduled" || d["scheduled_at"] != rfc(t0.Add(10*time.Minute)) {
			t.Errorf("after the restart, Dan's voice call %v", d)
		}
		both2 := func() {
			var wg sync.WaitGroup
			for _, n := range []*node{b, c} {
				wg.Add(1)
				go func() {
					defer wg.Done()
					if _, err := n.alerts.Tick(t.Context()); err != nil {
						t.Error(err)
					}
				}()
			}
			wg.Wait()
		}
		both2()
		if got, want := gw.rounds(id), lines("sms", both, 0, 1); !slices.Equal(got, want) {
			t.Fatalf("at +5 min %v, want %v", got, want)
		}
		clk2.set(t0.Add(10 * time.Minute))
		both2()
		both2()
		want := append(lines("sms", both, 0, 1, 2), lines("voice_call", both, 0)...)
		slices.Sort(want)
		if got := gw.rounds(id); !slices.Equal(got, want) {
			t.Fatalf("at +10 min %v, want %v", got, want)
		}
		_, al = c.do("GET", "/v1/emergency/alerts/"+id, nil)
		if d := delivery(t, al, dee, "voice_call"); d["status"] != "delivered" {
			t.Errorf("Dee's voice call %v", d)
		}
		if cs := channelSchedule(t, al, "sms"); cs["status"] != "done" || cs["times_sent"] != 3.0 {
			t.Errorf("sms channel_schedule %v", cs)
		}
		if ds := al["delivery_status"].(map[string]any); ds["scheduled_deliveries"] != 0.0 || ds["successful_deliveries"] != 4.0 {
			t.Errorf("delivery_status %v", ds)
		}
	})
}

// TestReachCountsLaterDeliveries: an alert whose only channel waits for
// its delay has reached nobody at creation; once the delayed round
// reached its recipient, reading it says so in
// alert_metrics.notification_reach_percentage as in the affected area
// analysis.
func TestReachCountsLaterDeliveries(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550005001"}})
	code, al := f.do("POST", "/v1/emergency/alerts", timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "delay_minutes": 10}))
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	reach := func(al map[string]any) (any, any) {
		return al["alert_metrics"].(map[string]any)["notification_reach_percentage"], al["affected_area_analysis"].(map[string]any)["dispatchers_notified"]
	}
	if r, n := reach(al); r != 0.0 || n != 0.0 {
		t.Errorf("at creation reach %v, dispatchers notified %v; want 0, 0", r, n)
	}
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	if r, n := reach(al); r != 100.0 || n != 1.0 {
		t.Errorf("after the delayed round reach %v, dispatchers notified %v; want 100, 1", r, n)
	}
}

// TestNotifyEmergencyContactsFollowsTheirDeliveries: an alert whose only
// channel waits for its delay has notified no emergency contact yet, so
// its notify_emergency_contacts action is pending, not failed; once the
// delayed round reached them it is sent with the contacts reached.
func TestNotifyEmergencyContactsFollowsTheirDeliveries(t *testing.T) {
	t0 := time.Now().UTC().Truncate(time.Second)
	clk := &clock{t: t0}
	gw := &gateway{}
	f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{Claims: emergency.Claims{Now: clk.Now}}, nil)
	seed(f)
	b := timedAlert(t0.Add(time.Hour), map[string]any{"channel": "sms", "delay_minutes": 10})
	b["target_audience"] = map[string]any{"include": []string{"active_drivers"}}
	b["automated_actions"] = []string{"notify_emergency_contacts"}
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 {
		t.Fatalf("alert: %d %v", code, al)
	}
	action := func(al map[string]any) map[string]any {
		for _, a := range al["automated_actions_executed"].([]any) {
			if a := a.(map[string]any); a["action"] == "notify_emergency_contacts" {
				return a
			}
		}
		t.Fatalf("no notify_emergency_contacts in %v", al["automated_actions_executed"])
		return nil
	}
	if a := action(al); a["status"] != "pending" || a["contacts_notified"] != 0.0 {
		t.Errorf("at creation %v, want pending with nobody notified yet", a)
	}
	clk.set(t0.Add(10 * time.Minute))
	f.tick()
	_, al = f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	if a := action(al); a["status"] != "sent" || a["contacts_notified"].(float64) < 2 {
		t.Errorf("after the delayed round %v, want sent to the emergency contacts reached", a)
	}
}
