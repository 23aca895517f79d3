package streams_test

import (
	"context"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/streams"
)

// takes is what Scope says a scope takes of a kind of message.
func takes(reg *streams.Registry, org, kind string) bool {
	events, telemetry, orders := reg.Scope(org, "live")
	if kind == hub.KindTelemetry {
		return telemetry
	}
	return events || orders
}

// TestScopeFollowsTheActiveStreams: a scope takes a kind of message while
// it has an active stream of that kind, and events also while it has an
// events stream with event_ordering that is not stopped (paused ones
// included: they track every sequenced event); pausing, resuming and
// stopping move the answer, and another scope's streams never do.
func TestScopeFollowsTheActiveStreams(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	want := func(org, kind string, want bool) {
		t.Helper()
		if got := takes(f.reg, org, kind); got != want {
			t.Fatalf("scope %s takes %s: %v, want %v", org, kind, got, want)
		}
	}
	want("org", hub.KindEvents, false)
	want("org", hub.KindTelemetry, false)
	tel := f.start(t, hub.KindTelemetry, `{}`)
	want("org", hub.KindTelemetry, true)
	want("org", hub.KindEvents, false)
	want("other", hub.KindTelemetry, false)
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindTelemetry, tel, []byte(`{"state": "paused"}`), 0); err != nil {
		t.Fatal(err)
	}
	want("org", hub.KindTelemetry, false)
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindTelemetry, tel, []byte(`{"state": "active"}`), 0); err != nil {
		t.Fatal(err)
	}
	want("org", hub.KindTelemetry, true)
	if _, err := f.svc.Stop(ctx, "org", "live", hub.KindTelemetry, tel); err != nil {
		t.Fatal(err)
	}
	want("org", hub.KindTelemetry, false)

	ord := f.start(t, hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	plain := f.start(t, hub.KindEvents, `{}`)
	want("org", hub.KindEvents, true)
	for _, id := range []string{ord, plain} {
		if _, err := f.svc.Configure(ctx, "org", "live", hub.KindEvents, id, []byte(`{"state": "paused"}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	want("org", hub.KindEvents, true) // the paused ordering stream tracks sequences
	if _, err := f.svc.Stop(ctx, "org", "live", hub.KindEvents, ord); err != nil {
		t.Fatal(err)
	}
	want("org", hub.KindEvents, false)
	want("org", hub.KindTelemetry, false)
}
