package telemetry_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
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
				list := decodeList(b, body, func(r *struct {
					Messages []any `json:"messages"`
				}) []any {
					return r.Messages
				})
				if _, err := svc.IngestTelemetry(context.Background(), "o", "test", list); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*1000/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// eventsRequest is an events request body of n events shaped as the load
// generators send them (ids, source, location, event_data, metadata).
func eventsRequest(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"events":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"event_id":"be-%d","event_type":"harsh_braking","category":"safety_events","timestamp":%q,"severity":"high","priority":"normal",`+
			`"source":{"vehicle_id":"veh-%03d","driver_id":"drv-%03d"},"location":{"latitude":40.%06d,"longitude":-83.%06d},`+
			`"event_data":{"deceleration_g":0.62,"speed_before_kmh":71.5,"n":%d},"metadata":{"sequence_number":%d,"source_system":"bench"}}`,
			i, t0.Add(time.Duration(i-n)*time.Millisecond).Format(time.RFC3339Nano), i%100, i%100, i, i, i, i+1)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// BenchmarkIngestEvents runs events request bodies of 1 and 500 events
// through the intake, from the JSON bytes to the messages handed to the
// bus: JSON reads them in one pass (IngestEventsJSON, what POST
// /v1/events does); General decodes them as the handler does when the
// reader declines (goccy/go-json into maps, numbers as json.Number) and
// calls IngestEvents.
func BenchmarkIngestEvents(b *testing.B) {
	for _, n := range []int{1, 500} {
		body := eventsRequest(n)
		for _, path := range []string{"JSON", "General"} {
			b.Run(fmt.Sprintf("%s/%d", path, n), func(b *testing.B) {
				svc, err := telemetry.New(telemetry.Config{Now: func() time.Time { return t0 }}, nopBus{}, nil)
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				for b.Loop() {
					if path == "JSON" {
						if _, taken, err := svc.IngestEventsJSON(context.Background(), "o", "test", body); !taken || err != nil {
							b.Fatalf("not taken: %v", err)
						}
						continue
					}
					list := decodeList(b, body, func(r *struct {
						Events []any `json:"events"`
					}) []any {
						return r.Events
					})
					if _, err := svc.IngestEvents(context.Background(), "o", "test", list); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.N)*float64(n)/b.Elapsed().Seconds(), "events/s")
			})
		}
	}
}

// decodeList decodes a request body as the handlers do when the reader
// declines it (goccy/go-json into the request's struct, numbers as
// json.Number) and returns its list as maps.
func decodeList[T any](b *testing.B, body []byte, items func(*T) []any) []map[string]any {
	var req T
	dec := gojson.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		b.Fatal(err)
	}
	list := make([]map[string]any, len(items(&req)))
	for i, m := range items(&req) {
		list[i], _ = m.(map[string]any)
	}
	return list
}

// BenchmarkPublishOne publishes one event and one telemetry message per
// request, as POST /v1/events and POST /v1/telemetry do with a body of
// one, from the JSON bytes to the records durable in an embedded bus on
// disk: what a single-event publish allocates on the way in.
func BenchmarkPublishOne(b *testing.B) {
	bodies := map[string][]byte{"events": eventsRequest(1), "telemetry": telemetryRequest1()}
	for _, path := range []string{"events", "telemetry"} {
		b.Run(path, func(b *testing.B) {
			bus, err := embedbus.Open(embedbus.Config{Dir: b.TempDir()})
			if err != nil {
				b.Fatal(err)
			}
			defer bus.Close(context.Background())
			svc, err := telemetry.New(telemetry.Config{Now: func() time.Time { return t0 }}, bus, nil)
			if err != nil {
				b.Fatal(err)
			}
			body := bodies[path]
			ingest := svc.IngestEventsJSON
			if path == "telemetry" {
				ingest = svc.IngestTelemetryJSON
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, taken, err := ingest(context.Background(), "o", "test", body); !taken || err != nil {
					b.Fatalf("not taken: %v", err)
				}
			}
		})
	}
}

// telemetryRequest1 is a telemetry request body of one message.
func telemetryRequest1() []byte {
	return []byte(`{"messages":[{"timestamp":"` + t0.Add(-time.Second).Format(time.RFC3339Nano) +
		`","vehicle_id":"veh-001","data_type":"engine_diagnostics","sequence":1,"data":` +
		strings.Join(strings.Fields(samples["engine_diagnostics"]), "") + `}]}`)
}
