package ingestapi

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// TestAcceptedJSON: the 202 answers written by appendJSON are byte for
// byte what api.Ctx.JSON writes (encoding/json, HTML not escaped, a
// newline after) on seeded random answers: ids with quotes, controls,
// <>&, U+2028, invalid UTF-8 and non-ASCII; nil, empty and long lists;
// times in odd zones with and without nanoseconds.
func TestAcceptedJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 29))
	pieces := []string{"a", "veh-001", `"`, `\`, "<", ">", "&", "\n", "\t", "\x01", "\x1f", "\u2028", "\u2029", "é", "日本", "\xff", "\xe2\x82", " ", "/"}
	str := func() string {
		var s string
		for range rng.IntN(6) {
			s += pieces[rng.IntN(len(pieces))]
		}
		return s
	}
	strs := func() []string {
		switch rng.IntN(4) {
		case 0:
			return nil
		case 1:
			return []string{}
		}
		ss := make([]string, rng.IntN(40))
		for i := range ss {
			ss[i] = str()
		}
		return ss
	}
	when := func() time.Time {
		t := time.Unix(rng.Int64N(4_000_000_000), 0)
		if rng.IntN(2) == 0 {
			t = t.Add(time.Duration(rng.IntN(1e9)))
		}
		zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+1800), time.FixedZone("y", -7*3600), time.FixedZone("z", 59)}
		return t.In(zones[rng.IntN(len(zones))])
	}
	want := func(v any) []byte {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return buf.Bytes()
	}
	for i := range 3000 {
		var v jsonAppender
		if i%2 == 0 {
			a := TelemetryAccepted{Accepted: rng.IntN(1001), GeneratedEventIDs: strs(), IngestedAt: when()}
			if rng.IntN(4) > 0 {
				a.Sequence = make([]int64, rng.IntN(30))
				for j := range a.Sequence {
					a.Sequence[j] = rng.Int64() >> rng.IntN(63)
				}
			}
			v = a
		} else {
			v = EventsAccepted{Accepted: rng.IntN(1001), EventIDs: strs(), Duplicates: rng.IntN(5), DuplicateEventIDs: strs(), IngestedAt: when()}
		}
		got, ok := v.appendJSON(nil)
		if !ok {
			t.Fatalf("case %d: appendJSON refused %+v", i, v)
		}
		if w := want(v); !bytes.Equal(got, w) {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got, w)
		}
	}
	// what MarshalJSON refuses is refused, for c.JSON to report
	if _, ok := (TelemetryAccepted{IngestedAt: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}).appendJSON(nil); ok {
		t.Fatal("a year past 9999 was written")
	}
}
