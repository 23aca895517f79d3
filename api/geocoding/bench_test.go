package geocoding_test

import (
	"testing"
)

// BenchmarkRoutes is one request to each route over a real connection
// (client and server in this process) on the fixture: decode, engine,
// encode.
func BenchmarkRoutes(b *testing.B) {
	s := start(b, fixture(b))
	for _, c := range []struct{ name, path string }{
		{"search", "/v1/search?q=" + q("240-16 Bradock Ave Glen Oaks NY 11004")},
		{"autocomplete", "/v1/autocomplete?q=" + q("240-16 Brad")},
		{"validate", "/v1/validate?q=" + q("240-16 Braddock Avenue, Glen Oaks, NY 11004")},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if status, _ := s.get(b, c.path); status != 200 {
					b.Fatal(status)
				}
			}
		})
	}
}
