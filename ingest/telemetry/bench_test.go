package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

type nopBus struct{}

func (nopBus) Publish(context.Context, ...hub.Message) error { return nil }

// request1000 is a 1,000-message request body: 100 vehicles, the four
// structured data types and two free-form ones in turn.
func request1000() []byte {
	types := []string{"engine_diagnostics", "fuel_system", "vehicle_dynamics", "electrical_system", "environmental", "gps_enhanced"}
	var b strings.Builder
	b.WriteString(`{"messages":[`)
	for i := range 1000 {
		if i > 0 {
			b.WriteByte(',')
		}
		dt := types[i%len(types)]
		fmt.Fprintf(&b, `{"timestamp":%q,"vehicle_id":"veh-%03d","data_type":%q,"sequence":%d,"data":%s,"quality_indicators":{"signal_strength":88,"data_completeness":99}}`,
			t0.Add(time.Duration(i-1000)*time.Millisecond).Format(time.RFC3339Nano), i%100, dt, i, strings.Join(strings.Fields(samples[dt]), ""))
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkIngestTelemetry1000 validates, runs the rules over and encodes
// (msgpack envelopes) a 1,000-message request; decoding the JSON body is
// outside the timer (see api/ingestapi BenchmarkDecode).
func BenchmarkIngestTelemetry1000(b *testing.B) {
	body := request1000()
	svc, err := telemetry.New(telemetry.Config{Now: func() time.Time { return t0 }}, nopBus{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := svc.IngestTelemetry(context.Background(), "o", "test", req.Messages); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "msgs/s")
}
