package streams_test

import (
	"context"
	"testing"

	"github.com/fleethub/fleethub/hub"
)

// TestTakesFollowsTheActiveStreams: a scope takes a kind of message while
// it has an active stream of that kind, and events also while it has an
// events stream with event_ordering that is not stopped (paused ones
// included: they track every sequenced event); pausing, resuming and
// stopping move the answer, and another scope's streams never do.
func TestTakesFollowsTheActiveStreams(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	takes := func(org, kind string, want bool) {
		t.Helper()
		if got := f.reg.Takes(org, "live", kind); got != want {
			t.Fatalf("Takes(%s, live, %s) = %v, want %v", org, kind, got, want)
		}
	}
	takes("org", hub.KindEvents, false)
	takes("org", hub.KindTelemetry, false)
	tel := f.start(t, hub.KindTelemetry, `{}`)
	takes("org", hub.KindTelemetry, true)
	takes("org", hub.KindEvents, false)
	takes("other", hub.KindTelemetry, false)
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindTelemetry, tel, []byte(`{"state": "paused"}`), 0); err != nil {
		t.Fatal(err)
	}
	takes("org", hub.KindTelemetry, false)
	if _, err := f.svc.Configure(ctx, "org", "live", hub.KindTelemetry, tel, []byte(`{"state": "active"}`), 0); err != nil {
		t.Fatal(err)
	}
	takes("org", hub.KindTelemetry, true)
	if _, err := f.svc.Stop(ctx, "org", "live", hub.KindTelemetry, tel); err != nil {
		t.Fatal(err)
	}
	takes("org", hub.KindTelemetry, false)

	ord := f.start(t, hub.KindEvents, `{"processing_rules": {"event_ordering": true}}`)
	plain := f.start(t, hub.KindEvents, `{}`)
	takes("org", hub.KindEvents, true)
	for _, id := range []string{ord, plain} {
		if _, err := f.svc.Configure(ctx, "org", "live", hub.KindEvents, id, []byte(`{"state": "paused"}`), 0); err != nil {
			t.Fatal(err)
		}
	}
	takes("org", hub.KindEvents, true) // the paused ordering stream tracks sequences
	if _, err := f.svc.Stop(ctx, "org", "live", hub.KindEvents, ord); err != nil {
		t.Fatal(err)
	}
	takes("org", hub.KindEvents, false)
	takes("org", hub.KindTelemetry, false)
}
