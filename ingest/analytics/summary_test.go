package analytics_test

import (
	"math"
	"testing"
	"time"

	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/ingest/detect"
)

// trip is a Running over a straight drive of km kilometers at kmh.
func trip(km, kmh float64) analytics.Running {
	var r analytics.Running
	dur := time.Duration(km / kmh * float64(time.Hour)).Round(time.Second)
	add(&r, drive{start: t0, lat: 10, lon: 20, kmh: kmh, dur: dur}.points(jitter{speedKmh: 0, accuracy: 3}))
	return r
}

func TestEmptySummary(t *testing.T) {
	var r analytics.Running
	s := r.Summary(analytics.Vehicle{})
	if s != (analytics.Summary{SafetyScore: 100, EcoScore: 100}) {
		t.Fatalf("empty trip: %+v", s)
	}
}

func TestScoresDecreaseWithEvents(t *testing.T) {
	events := []detect.Event{
		{Type: detect.TypeHarshAcceleration, Severity: detect.SeverityModerate},
		{Type: detect.TypeHarshBraking, Severity: detect.SeverityHigh},
		{Type: detect.TypeHarshCornering, Severity: detect.SeverityCritical},
		{Type: detect.TypeSpeeding, Severity: detect.SeverityModerate, Metrics: detect.Metrics{DurationSeconds: 60}},
	}
	for _, km := range []float64{1, 20, 100} {
		r := trip(km, 60)
		prev := r.Summary(analytics.Vehicle{})
		for i := 0; i < 400; i++ {
			e := events[i%len(events)]
			r.AddEvent(e)
			s := r.Summary(analytics.Vehicle{})
			if s.SafetyScore < 0 || s.SafetyScore > 100 || s.EcoScore < 0 || s.EcoScore > 100 {
				t.Fatalf("%v km, %d events: scores %v, %v out of 0..100", km, i+1, s.SafetyScore, s.EcoScore)
			}
			if !(s.SafetyScore < prev.SafetyScore) && prev.SafetyScore > 1e-9 {
				t.Fatalf("%v km: safety %v after a %s, was %v", km, s.SafetyScore, e.Type, prev.SafetyScore)
			}
			if s.EcoScore > prev.EcoScore {
				t.Fatalf("%v km: eco rose to %v after a %s", km, s.EcoScore, e.Type)
			}
			// Harsh accelerations and brakings always cost eco points; the
			// idle and speeding shares saturate at 30 %.
			isEco := e.Type == detect.TypeHarshAcceleration || e.Type == detect.TypeHarshBraking
			if isEco && !(s.EcoScore < prev.EcoScore) {
				t.Fatalf("%v km: eco %v unchanged by a %s", km, s.EcoScore, e.Type)
			}
			prev = s
		}
	}
}

func TestScoreValues(t *testing.T) {
	withEvents := func(km float64, evs ...detect.Event) analytics.Summary {
		r := trip(km, 60)
		for _, e := range evs {
			r.AddEvent(e)
		}
		return r.Summary(analytics.Vehicle{})
	}
	brake := func(sev string) detect.Event {
		return detect.Event{Type: detect.TypeHarshBraking, Severity: sev}
	}
	cases := []struct {
		name        string
		s           analytics.Summary
		safety, eco float64
	}{
		{"clean", withEvents(30), 100, 100},
		// safety = 100·e^(−P/max(km, 20)); eco loses 40·(1−e^(−2E/max(km, 20))).
		{"1 moderate brake in 20 km", withEvents(20, brake(detect.SeverityModerate)), 100 * math.Exp(-1.0/20), 100 - 40*(1-math.Exp(-2.0/20))},
		{"1 moderate brake in 2 km (floor)", withEvents(2, brake(detect.SeverityModerate)), 100 * math.Exp(-1.0/20), 100 - 40*(1-math.Exp(-2.0/20))},
		{"1 moderate brake in 200 km", withEvents(200, brake(detect.SeverityModerate)), 100 * math.Exp(-1.0/200), 100 - 40*(1-math.Exp(-2.0/200))},
		{"1 critical brake in 20 km", withEvents(20, brake(detect.SeverityCritical)), 100 * math.Exp(-4.0/20), 100 - 40*(1-math.Exp(-8.0/20))},
		{"cornering is not eco", withEvents(20, detect.Event{Type: detect.TypeHarshCornering, Severity: detect.SeverityHigh}), 100 * math.Exp(-2.0/20), 100},
		// 20 km at 60 km/h is 20 minutes; 6 minutes of speeding is a 30 % share.
		{"6 minutes of speeding", withEvents(20, detect.Event{Type: detect.TypeSpeeding, Severity: detect.SeverityHigh, Metrics: detect.Metrics{DurationSeconds: 360}}),
			100 * math.Exp(-2*(1+360.0/300)/20), 70},
		{"3 minutes of idling", withEvents(20, detect.Event{Type: detect.TypeIdle, Metrics: detect.Metrics{DurationSeconds: 180}}), 100, 85},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			near(t, "safety_score", c.s.SafetyScore, c.safety, 1e-6)
			near(t, "eco_score", c.s.EcoScore, c.eco, 0.01)
		})
	}
}

func TestFuel(t *testing.T) {
	cases := []struct {
		name   string
		km     float64
		kmh    float64
		v      analytics.Vehicle
		events []detect.Event
		liters float64
	}{
		{"100 km at 80", 100, 80, analytics.Vehicle{}, nil, 8},
		{"100 km at 90", 100, 90, analytics.Vehicle{}, nil, 8},
		{"100 km at 120", 100, 120, analytics.Vehicle{}, nil, 8 * (1 + 0.5*(120.0*120/(90*90)-1))},
		{"100 km at 130, 6 L/100 km, aero 0.4", 100, 130, analytics.Vehicle{LitersPer100Km: 6, AeroShare: 0.4}, nil, 6 * (1 + 0.4*(130.0*130/(90*90)-1))},
		{"idle hour and two harsh launches", 50, 60, analytics.Vehicle{}, []detect.Event{
			{Type: detect.TypeIdle, Metrics: detect.Metrics{DurationSeconds: 3600}},
			{Type: detect.TypeHarshAcceleration}, {Type: detect.TypeHarshAcceleration},
		}, 4 + 0.8 + 2*0.03},
		{"heavy vehicle", 50, 60, analytics.Vehicle{LitersPer100Km: 30, IdleLitersPerHour: 3, HarshAccelerationLiters: 0.2}, []detect.Event{
			{Type: detect.TypeIdle, Metrics: detect.Metrics{DurationSeconds: 1800}},
			{Type: detect.TypeHarshAcceleration},
		}, 15 + 1.5 + 0.2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := trip(c.km, c.kmh)
			for _, e := range c.events {
				r.AddEvent(e)
			}
			s := r.Summary(c.v)
			near(t, "distance_km", s.DistanceKm, c.km, 0.002*c.km)
			near(t, "fuel_consumed_liters", s.FuelConsumedLiters, c.liters, 0.003*c.liters)
			near(t, "fuel_efficiency_kmpl", s.FuelEfficiencyKmpl, s.DistanceKm/s.FuelConsumedLiters, 1e-9)
			near(t, "avg_speed_kmh", s.AvgSpeedKmh, c.kmh, 0.002*c.kmh)
			near(t, "max_speed_kmh", s.MaxSpeedKmh, c.kmh, 1e-9)
		})
	}
}

// An electric vehicle burns no fuel: its model gives energy, without idle
// or harsh-acceleration terms, and none when its consumption is unknown.
func TestElectric(t *testing.T) {
	r := trip(100, 120)
	r.AddEvent(detect.Event{Type: detect.TypeIdle, Metrics: detect.Metrics{DurationSeconds: 3600}})
	r.AddEvent(detect.Event{Type: detect.TypeHarshAcceleration})
	s := r.Summary(analytics.Vehicle{Electric: true, KWhPer100Km: 18})
	if s.FuelConsumedLiters != 0 || s.FuelEfficiencyKmpl != 0 {
		t.Errorf("electric: %v L, %v km/L, want none", s.FuelConsumedLiters, s.FuelEfficiencyKmpl)
	}
	near(t, "energy_consumed_kwh", s.EnergyConsumedKWh, 18*(1+0.5*(120.0*120/(90*90)-1)), 0.003*18*1.4)
	if s := r.Summary(analytics.Vehicle{Electric: true}); s.EnergyConsumedKWh != 0 || s.FuelConsumedLiters != 0 {
		t.Errorf("electric of unknown consumption: %v kWh, %v L, want 0 and 0", s.EnergyConsumedKWh, s.FuelConsumedLiters)
	}
	if s := r.Summary(analytics.Vehicle{}); s.EnergyConsumedKWh != 0 || s.FuelConsumedLiters == 0 {
		t.Errorf("petrol: %v kWh, %v L", s.EnergyConsumedKWh, s.FuelConsumedLiters)
	}
}

// WithDistance answers for another distance than the track's: the
// average speed and the model's fuel follow it, the scores stay.
func TestWithDistance(t *testing.T) {
	r := trip(50, 60)
	r.AddEvent(detect.Event{Type: detect.TypeHarshAcceleration})
	v := analytics.Vehicle{LitersPer100Km: 10}
	s := r.Summary(v)
	o := s.WithDistance(v, 55)
	near(t, "distance_km", o.DistanceKm, 55, 0)
	near(t, "avg_speed_kmh", o.AvgSpeedKmh, 55/(s.DurationMinutes/60), 1e-9)
	near(t, "fuel_consumed_liters", o.FuelConsumedLiters, s.FuelConsumedLiters+10*(55-s.DistanceKm)/100, 1e-9)
	near(t, "fuel_efficiency_kmpl", o.FuelEfficiencyKmpl, 55/o.FuelConsumedLiters, 1e-9)
	if o.SafetyScore != s.SafetyScore || o.EcoScore != s.EcoScore || o.MaxSpeedKmh != s.MaxSpeedKmh || o.DurationMinutes != s.DurationMinutes {
		t.Errorf("scores, speeds or duration changed: %+v from %+v", o, s)
	}
	e := r.Summary(analytics.Vehicle{Electric: true, KWhPer100Km: 20}).WithDistance(analytics.Vehicle{Electric: true, KWhPer100Km: 20}, 60)
	near(t, "energy_consumed_kwh", e.EnergyConsumedKWh, 12, 1e-9)
}
