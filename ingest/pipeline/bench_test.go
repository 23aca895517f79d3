package pipeline

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
)

// BenchmarkHandle: one bus batch of 512 telemetry messages of 64
// vehicles, matched by three websocket streams of the tenant (every
// message, ten vehicles, one data type).
func BenchmarkHandle(b *testing.B) {
	f := newFixture(b)
	f.start("org-a", "live", hub.KindTelemetry, `{}`)
	f.start("org-a", "live", hub.KindTelemetry, `{"vehicles": ["v00", "v01", "v02", "v03", "v04", "v05", "v06", "v07", "v08", "v09"]}`)
	f.start("org-a", "live", hub.KindTelemetry, `{"data_types": ["engine_diagnostics"]}`)
	p := New(Config{}, nil, f.reg, f.log, dedup.NewLocal(1000, time.Minute), nil, nil, f.logger)
	msgs := make([]hub.Message, 512)
	for i := range msgs {
		msgs[i] = msg(b, hub.TopicTelemetry, int64(i), aTelemetry("org-a", "live", fmt.Sprintf("v%02d", i%64), int64(i)))
	}
	ctx := b.Context()
	b.ReportAllocs()
	for b.Loop() {
		if err := p.Handle(ctx, msgs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(msgs)), "ns/msg")
}
