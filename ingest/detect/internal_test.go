package detect

import (
	"math"
	"testing"

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

func TestNewAppliesDefaults(t *testing.T) {
	want := Thresholds{
		AccelerationG: DefaultAccelerationG, BrakingG: DefaultBrakingG, CorneringG: DefaultCorneringG,
		MinHarshDuration: DefaultMinHarshDuration, OverLimitKmh: DefaultOverLimitKmh,
		MinSpeedingDuration: DefaultMinSpeedingDuration, IdleSpeedKmh: DefaultIdleSpeedKmh,
		MinIdle: DefaultMinIdle, MaxAccuracyM: DefaultMaxAccuracyM, MinSampleGap: DefaultMinSampleGap,
		MaxSampleGap: DefaultMaxSampleGap, MaxEpisodeGap: DefaultMaxEpisodeGap,
	}
	if got := New(Thresholds{}).t; got != want {
		t.Fatalf("defaults %+v, want %+v", got, want)
	}
	if b := New(Thresholds{BrakingG: -0.6}).t.BrakingG; b != 0.6 {
		t.Errorf("device-style braking -0.6 → %v, want 0.6", b)
	}
	if a := New(Thresholds{AccelerationG: math.NaN()}).t.AccelerationG; a != DefaultAccelerationG {
		t.Errorf("NaN acceleration threshold → %v", a)
	}
}
