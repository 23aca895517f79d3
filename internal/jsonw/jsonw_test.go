package jsonw

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAppendStringMatchesEncodingJSON: both escapings, on seeded random
// strings of every kind of byte and rune, are encoding/json's bytes.
func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	runes := []rune{'a', '"', '\\', '<', '>', '&', '\n', '\r', '\t', '\b', '\f', 0, 0x1f, 0x7f, 'é', '\u2028', '\u2029', '日', 0x1f600}
	for i := range 5000 {
		var s []byte
		for range rng.IntN(12) {
			if rng.IntN(5) == 0 {
				s = append(s, byte(rng.IntN(256))) // invalid UTF-8 now and then
			} else {
				s = append(s, string(runes[rng.IntN(len(runes))])...)
			}
		}
		for _, html := range []bool{true, false} {
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(html)
			if err := enc.Encode(string(s)); err != nil {
				t.Fatal(err)
			}
			want := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
			if got := AppendString(nil, string(s), html); !bytes.Equal(got, want) {
				t.Fatalf("case %d, escapeHTML %t, %q:\n got %s\nwant %s", i, html, s, got, want)
			}
		}
	}
}

// TestAppendTime: MarshalJSON's bytes, and its refusals refused.
func TestAppendTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Unix(0, 0).UTC(),
		time.Date(2026, 11, 29, 7, 15, 3, 120000000, time.FixedZone("x", 5*3600+1800)),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.FixedZone("y", -23*3600)),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
	} {
		want, err := tm.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := AppendTime(nil, tm); !ok || !bytes.Equal(got, want) {
			t.Fatalf("%v: got %s (%t), want %s", tm, got, ok, want)
		}
	}
	for _, tm := range []time.Time{time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("z", 24*3600))} {
		if _, err := tm.MarshalJSON(); err == nil {
			t.Fatalf("%v: MarshalJSON took it", tm)
		}
		if b, ok := AppendTime([]byte("x"), tm); ok || string(b) != "x" {
			t.Fatalf("%v: written (%s, %t)", tm, b, ok)
		}
	}
}
