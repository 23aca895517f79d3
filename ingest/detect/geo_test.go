package detect

import (
	"math"
	"testing"
	"time"
)

func TestDistanceM(t *testing.T) {
	ref := func(lat1, lon1, lat2, lon2 float64) float64 {
		s1 := math.Sin((lat2 - lat1) * degree / 2)
		s2 := math.Sin((lon2 - lon1) * degree / 2)
		h := s1*s1 + math.Cos(lat1*degree)*math.Cos(lat2*degree)*s2*s2
		return 2 * earthRadiusM * math.Asin(math.Sqrt(h))
	}
	cases := []struct {
		lat1, lon1, lat2, lon2 float64
		want                   float64 // meters; 0 = compare with ref only
	}{
		{52, 4, 52.01, 4, 1111.95},
		{0, 0, 0, 0.01, 1111.95},
		{0, 0, 0, 0, 0},
		{60, 10, 60, 10.02, 0},
		{52.37, 4.89, 52.37001, 4.89001, 0},
		{51.5, -0.12, 48.85, 2.35, 0},  // London–Paris, past the series
		{-33.9, 151.2, 51.5, -0.12, 0}, // Sydney–London
		{0, 179.999, 0, -179.999, 222.39},
	}
	for _, c := range cases {
		got := distanceM(c.lat1*degree, c.lon1*degree, math.Cos(c.lat1*degree), c.lat2*degree, c.lon2*degree, math.Cos(c.lat2*degree))
		want := c.want
		if want == 0 {
			want = ref(c.lat1, c.lon1, c.lat2, c.lon2)
		}
		if math.Abs(got-want) > 1e-9*want+0.01 {
			t.Errorf("distance %v: %.6f m, want %.6f", c, got, want)
		}
	}
}

func TestBearingAndAngleDiff(t *testing.T) {
	b := func(lat1, lon1, lat2, lon2 float64) float64 {
		return bearing(lat1*degree, lon1*degree, math.Cos(lat1*degree), lat2*degree, lon2*degree, math.Cos(lat2*degree)) / degree
	}
	for _, c := range []struct{ lat1, lon1, lat2, lon2, want float64 }{
		{52, 4, 52.01, 4, 0}, {52, 4, 52, 4.01, 90}, {52, 4, 51.99, 4, 180}, {52, 4, 52, 3.99, 270},
	} {
		if got := b(c.lat1, c.lon1, c.lat2, c.lon2); math.Abs(got-c.want) > 0.01 {
			t.Errorf("bearing %v = %.3f, want %v", c, got, c.want)
		}
	}
	for _, c := range []struct{ a, b, want float64 }{
		{350, 10, 20}, {10, 350, -20}, {0, 180, 180}, {90, 90, 0}, {-720, 30, 30},
	} {
		if got := angleDiff(c.a*degree, c.b*degree) / degree; math.Abs(got-c.want) > 1e-9 {
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
