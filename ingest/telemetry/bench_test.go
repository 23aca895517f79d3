package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/ingest/telemetry"
	gojson "github.com/goccy/go-json"
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

// BenchmarkIngestTelemetry1000 runs a 1,000-message request body
// through the intake, from the JSON bytes to the messages handed to the
// bus: JSON reads it in one pass (IngestTelemetryJSON, what POST
// /v1/telemetry does); General decodes it as the handler did before
// (goccy/go-json into maps, numbers as json.Number) and calls
// IngestTelemetry, which validates the maps and encodes the envelopes by
// reflection. Both include the rules and the vehicle state.
func BenchmarkIngestTelemetry1000(b *testing.B) {
	body := request1000()
	for _, path := range []string{"JSON", "General"} {
		b.Run(path, func(b *testing.B) {
			svc, err := telemetry.New(telemetry.Config{Now: func() time.Time { return t0 }}, nopBus{}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if path == "JSON" {
					if _, taken, err := svc.IngestTelemetryJSON(context.Background(), "o", "test", body); !taken || err != nil {
						b.Fatalf("not taken: %v", err)
					}
					continue
				}
				var req struct {
					Messages []any `json:"messages"`
				}
				dec := gojson.NewDecoder(bytes.NewReader(body))
				dec.UseNumber()
				if err := dec.Decode(&req); err != nil {
					b.Fatal(err)
				}
				list := make([]map[string]any, len(req.Messages))
				for i, m := range req.Messages {
					list[i], _ = m.(map[string]any)
				}
				if _, err := svc.IngestTelemetry(context.Background(), "o", "test", list); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
