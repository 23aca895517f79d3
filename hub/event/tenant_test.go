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
	for _, c := range []struct {
		b        []byte
		org, env string
	}{{ev, "org-a", "live"}, {tel, "org-b", "test"}} {
		org, env, ok := event.Tenant(c.b)
		if !ok || string(org) != c.org || string(env) != c.env {
			t.Errorf("Tenant: %q %q %v, want %s %s", org, env, ok, c.org, c.env)
		}
	}
	for _, b := range [][]byte{nil, {0x80}, []byte("not msgpack")} {
		if _, _, ok := event.Tenant(b); ok {
			t.Errorf("Tenant(%q) ok", b)
		}
	}
}
