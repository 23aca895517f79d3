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
