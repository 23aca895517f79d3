package ingestapi_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/fleethub/fleethub/api/ingestapi"
)

// BenchmarkDecode compares the decoders for a 1,000-message telemetry
// body: goccy/go-json (what the handlers use) and encoding/json, both
// with UseNumber.
func BenchmarkDecode(b *testing.B) {
	body := body1000()
	b.Run("goccy", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for range b.N {
			if _, err := ingestapi.DecodeTelemetryBody(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(body)))
		b.ReportAllocs()
		for range b.N {
			var v struct {
				Messages []any `json:"messages"`
			}
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.UseNumber()
			if err := dec.Decode(&v); err != nil {
				b.Fatal(err)
			}
		}
	})
}
