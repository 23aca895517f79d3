package event_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

func TestTenantReadsTheHeadOfEveryEnvelope(t *testing.T) {
	ev, err := event.Marshal(&event.Envelope{Org: "org-a", Env: "live", Kind: event.KindEvent, Event: &event.Event{EventID: "e1"}})
	if err != nil {
		t.Fatal(err)
	}
	w := event.NewTelemetryEncoder(64)
	w.Begin("org-b", "test")
	w.VehicleID([]byte("v1"))
	w.BeginData()
	w.EndData()
	tel := w.End(time.Now())
	pts, err := event.Marshal(&event.Envelope{Org: "org-c", Env: "live", Kind: event.KindPoints, Points: []event.Point{{VehicleID: "v1"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		b              []byte
		org, env, kind string
	}{{ev, "org-a", "live", event.KindEvent}, {tel, "org-b", "test", event.KindTelemetry}, {pts, "org-c", "live", event.KindPoints}} {
		org, env, ok := event.Tenant(c.b)
		if !ok || string(org) != c.org || string(env) != c.env {
			t.Errorf("Tenant: %q %q %v, want %s %s", org, env, ok, c.org, c.env)
		}
		org, env, kind, ok := event.Head(c.b)
		if !ok || string(org) != c.org || string(env) != c.env || string(kind) != c.kind {
			t.Errorf("Head: %q %q %q %v, want %s %s %s", org, env, kind, ok, c.org, c.env, c.kind)
		}
	}
	for _, b := range [][]byte{nil, {0x80}, []byte("not msgpack")} {
		if _, _, ok := event.Tenant(b); ok {
			t.Errorf("Tenant(%q) ok", b)
		}
		if _, _, _, ok := event.Head(b); ok {
			t.Errorf("Head(%q) ok", b)
		}
	}
}

// FuzzHead: Head never panics, reads nothing past the envelope's map
// (an envelope of fewer than three keys is not read), agrees with
// Tenant, and with Unmarshal on what the encoders write.
func FuzzHead(f *testing.F) {
	for _, env := range []*event.Envelope{
		{Org: "org-a", Env: "live", Kind: event.KindEvent, Event: &event.Event{EventID: "e1"}},
		{Org: "o", Env: "test", Kind: event.KindPoints, Points: []event.Point{{VehicleID: "v"}}},
	} {
		b, err := event.Marshal(env)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{0x83, 0xa1, 'o', 0xa1, 'x'})
	f.Fuzz(func(t *testing.T, b []byte) {
		org, env, _, ok := event.Head(b)
		if !ok {
			return
		}
		torg, tenv, tok := event.Tenant(b)
		if !tok || string(torg) != string(org) || string(tenv) != string(env) {
			t.Fatalf("Head %q %q, Tenant %q %q %v", org, env, torg, tenv, tok)
		}
		e, err := event.Unmarshal(b)
		if err != nil || e.Kind != event.KindEvent || e.Event == nil {
			return
		}
		again, err := event.Marshal(e) // as the encoders write it
		if err != nil {
			return
		}
		if org, env, kind, ok := event.Head(again); !ok || string(org) != e.Org || string(env) != e.Env || string(kind) != e.Kind {
			t.Fatalf("Head of an encoded envelope: %q %q %q %v, want %q %q %q", org, env, kind, ok, e.Org, e.Env, e.Kind)
		}
	})
}
