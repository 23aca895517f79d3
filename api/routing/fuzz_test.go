package routing

import (
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/api"
)

// FuzzDecodeMatch: the match endpoint's fast decoding of a trace takes
// what api.DecodeJSON (every other route's decoding) takes, into the same
// value, and refuses what it refuses; the checks of the fixes never panic
// and refuse a trace by naming its fields.
func FuzzDecodeMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var fast, general MatchBody
		errFast, errGeneral := decodeFast(body, &fast), api.DecodeJSON(body, &general)
		if (errFast == nil) != (errGeneral == nil) {
			t.Fatalf("%q: fast decoding %v, general %v", body, errFast, errGeneral)
		}
		if errFast != nil {
			return
		}
		if !reflect.DeepEqual(fast, general) {
			t.Fatalf("%q: fast decoding %+v, general %+v", body, fast, general)
		}
		bad := map[string]string{}
		pts, times := tracePoints(fast.Points, bad)
		for k, v := range bad {
			if k == "" || v == "" {
				t.Fatalf("a refusal without its field or words: %q: %q", k, v)
			}
		}
		if len(bad) == 0 && (len(pts) != len(fast.Points) || len(times) != len(fast.Points)) {
			t.Fatalf("%d fixes accepted as %d points", len(fast.Points), len(pts))
		}
	})
}
