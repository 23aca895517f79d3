package detect

import (
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
)

func TestAngleDiff(t *testing.T) {
	for _, c := range []struct{ a, b, want float64 }{
		{350, 10, 20}, {10, 350, -20}, {0, 180, 180}, {90, 90, 0}, {-720, 30, 30},
	} {
		if got := angleDiff(c.a*geo.Degree, c.b*geo.Degree) / geo.Degree; math.Abs(got-c.want) > 1e-9 {
			t.Errorf("angleDiff(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
	}
}

func TestSeverityOf(t *testing.T) {
	for _, c := range []struct {
		typ  string
		mag  float64
		want string
	}{
		{TypeHarshAcceleration, 0.49, SeverityModerate}, {TypeHarshAcceleration, 0.50, SeverityHigh}, {TypeHarshAcceleration, 0.65, SeverityCritical},
		{TypeHarshBraking, 0.59, SeverityModerate}, {TypeHarshBraking, 0.60, SeverityHigh}, {TypeHarshBraking, 0.80, SeverityCritical},
		{TypeHarshCornering, 0.54, SeverityModerate}, {TypeHarshCornering, 0.55, SeverityHigh}, {TypeHarshCornering, 0.70, SeverityCritical},
		{TypeSpeeding, 15.9, SeverityModerate}, {TypeSpeeding, 16, SeverityHigh}, {TypeSpeeding, 32, SeverityCritical},
		{TypeIdle, 599, SeverityModerate}, {TypeIdle, 600, SeverityHigh}, {TypeIdle, 1800, SeverityCritical},
	} {
		if got := severityOf(c.typ, c.mag); got != c.want {
			t.Errorf("severityOf(%s, %v) = %s, want %s", c.typ, c.mag, got, c.want)
		}
	}
}

func TestStampSince(t *testing.T) {
	base := time.Date(2025, 3, 14, 8, 0, 0, 123456789, time.UTC)
	for _, u := range []time.Time{
		base, base.Add(time.Nanosecond), base.Add(-999 * time.Millisecond), base.Add(1500 * time.Millisecond),
		base.AddDate(-200, 0, 0), base.AddDate(250, 0, 0), base.AddDate(-400, 0, 0), {},
		time.Unix(math.MaxInt64/2, 0), time.Unix(math.MinInt64/2, 0), time.Unix(1<<62, 999999999), time.Unix(-1<<62, 0),
	} {
		for _, v := range []time.Time{base, u} {
			if got, want := stampOf(v).since(stampOf(u)), v.Sub(u); got != want {
				t.Errorf("%v − %v: %v, want %v", v, u, got, want)
			}
			if got, want := stampOf(u).since(stampOf(v)), u.Sub(v); got != want {
				t.Errorf("%v − %v: %v, want %v", u, v, got, want)
			}
		}
	}
}
