package streams_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// TestConfigureWithoutChange: a configure that changes nothing (an empty
// body, the settings as they are, the state it is in) makes no new
// version and leaves updated_at; a real change moves both.
func TestConfigureWithoutChange(t *testing.T) {
	f := newReapFixture(t)
	ctx := context.Background()
	for _, tc := range []struct{ kind, start, same string }{
		{hub.KindEvents, `{"event_filters":{"severity_levels":["high"]},"processing_rules":{"deduplication":true}}`, `{"event_filters":{"severity_levels":["high"]}}`},
		{hub.KindTelemetry, `{"data_types":["gps_enhanced"],"stream_config":{"frequency":"medium"}}`, `{"stream_config":{"frequency":"medium"}}`},
	} {
		id := f.start(t, tc.kind, tc.start)
		e0, err := f.svc.Get(ctx, "org", "live", tc.kind, id)
		if err != nil {
			t.Fatal(err)
		}
		v0, at0 := e0.Rec.Version, e0.Rec.UpdatedAt
		for _, body := range []string{`{}`, tc.same, `{"state":"active"}`} {
			f.clk.add(time.Second)
			got, err := f.svc.Configure(ctx, "org", "live", tc.kind, id, []byte(body), 0)
			if err != nil {
				t.Fatalf("%s %s: %v", tc.kind, body, err)
			}
			if got.Entry.Rec.Version != v0 || !got.Entry.Rec.UpdatedAt.Equal(at0) {
				t.Fatalf("%s %s: version %d updated_at %v, want %d %v (nothing changed)", tc.kind, body, got.Entry.Rec.Version, got.Entry.Rec.UpdatedAt, v0, at0)
			}
		}
		f.clk.add(time.Second)
		got, err := f.svc.Configure(ctx, "org", "live", tc.kind, id, []byte(`{"state":"paused"}`), 0)
		if err != nil {
			t.Fatal(err)
		}
		if got.Entry.Rec.Version != v0+1 || !got.Entry.Rec.UpdatedAt.After(at0) {
			t.Fatalf("%s paused: version %d updated_at %v, want a new version and time", tc.kind, got.Entry.Rec.Version, got.Entry.Rec.UpdatedAt)
		}
	}
}
