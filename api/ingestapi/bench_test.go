package ingestapi_test

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/ingestapi"
	"github.com/valyala/fasthttp"
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

// BenchmarkAccepted writes the 202 answer of a one-event and of a
// one-message request, as the handlers do after the publish.
func BenchmarkAccepted(b *testing.B) {
	at := time.Date(2026, 11, 23, 10, 0, 0, 123456789, time.UTC)
	c := &api.Ctx{RequestCtx: &fasthttp.RequestCtx{}}
	b.Run("events", func(b *testing.B) {
		ids := []string{"evt_0123456789abcdef01234567"}
		b.ReportAllocs()
		for b.Loop() {
			if err := ingestapi.AcceptEvents(c, ids, at); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("telemetry", func(b *testing.B) {
		seqs := []int64{42}
		b.ReportAllocs()
		for b.Loop() {
			if err := ingestapi.AcceptTelemetry(c, seqs, at); err != nil {
				b.Fatal(err)
			}
		}
	})
}
