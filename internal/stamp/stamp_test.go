package stamp_test

import (
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/stamp"
)

func TestSub(t *testing.T) {
	base := time.Date(2025, 3, 14, 8, 0, 0, 123456789, time.UTC)
	for _, u := range []time.Time{
		base, base.Add(time.Nanosecond), base.Add(-999 * time.Millisecond), base.Add(1500 * time.Millisecond),
		base.AddDate(-200, 0, 0), base.AddDate(250, 0, 0), base.AddDate(-400, 0, 0), {},
		time.Unix(math.MaxInt64/2, 0), time.Unix(math.MinInt64/2, 0), time.Unix(1<<62, 999999999), time.Unix(-1<<62, 0),
	} {
		for _, v := range []time.Time{base, u} {
			if got, want := stamp.Of(v).Sub(stamp.Of(u)), v.Sub(u); got != want {
				t.Errorf("%v − %v: %v, want %v", v, u, got, want)
			}
			if got, want := stamp.Of(u).Sub(stamp.Of(v)), u.Sub(v); got != want {
				t.Errorf("%v − %v: %v, want %v", u, v, got, want)
			}
		}
	}
}
