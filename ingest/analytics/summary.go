package analytics

import (
	"math"

	"github.com/fleethub/fleethub/ingest/detect"
)

// Vehicle is the fuel model of a vehicle. Zero fields take the defaults of
// a light-duty petrol vehicle (the Default constants).
type Vehicle struct {
	// LitersPer100Km is the consumption at steady speeds up to 90 km/h.
	LitersPer100Km float64
	// IdleLitersPerHour is the consumption while idling.
	IdleLitersPerHour float64
	// AeroShare is the share of LitersPer100Km spent on air drag at 90
	// km/h; above 90 km/h that share grows with the square of the speed.
	AeroShare float64
	// HarshAccelerationLiters is the extra fuel of one harsh acceleration.
	HarshAccelerationLiters float64
	// Electric makes the vehicle burn no fuel: its consumption is energy,
	// KWhPer100Km at steady speeds up to 90 km/h with the same AeroShare,
	// and nothing while idling or for a harsh acceleration (no engine
	// idles, and regenerative braking gives much of it back). An electric
	// vehicle of unknown KWhPer100Km consumes no fuel and an unknown
	// energy (0).
	Electric    bool
	KWhPer100Km float64
}

// Defaults of Vehicle.
const (
	DefaultLitersPer100Km          = 8.0
	DefaultIdleLitersPerHour       = 0.8
	DefaultAeroShare               = 0.5
	DefaultHarshAccelerationLiters = 0.03
)

// Scoring constants; docs/analytics.md gives the formulas.
const (
	scoreFloorKm = 20.0  // shorter trips are scored as if this long
	speedingUnit = 300.0 // s: each 5 minutes of speeding weighs one more event
	speedingCap  = 600.0 // s: up to 10 minutes
	ecoHarshMax  = 40.0  // eco points lost to harsh accelerations and brakings at most
	ecoIdleMax   = 30.0  // to idling at most
	ecoSpeedMax  = 30.0  // to speeding at most
	ecoShareFull = 0.30  // idle or speeding share of the trip that loses all its points
)

// Summary is a snapshot of the trip's analytics. Presentation rounding is
// the caller's.
type Summary struct {
	DistanceKm      float64
	DurationMinutes float64 // first to last point, pauses excluded
	MaxSpeedKmh     float64
	// SpeedMeasured: some point reported a speed, or points far enough
	// apart gave one; false, MaxSpeedKmh's 0 measured nothing.
	SpeedMeasured   bool
	AvgSpeedKmh     float64 // DistanceKm over DurationMinutes
	IdleTimeMinutes float64

	LocationsCount int
	EventsCount    int // every event added, idle included

	HarshAcceleration int
	HarshBraking      int
	HarshCornering    int
	Speeding          int

	SafetyScore float64 // 0-100
	EcoScore    float64 // 0-100

	FuelConsumedLiters float64
	FuelEfficiencyKmpl float64 // 0 until the trip has consumed fuel
	EnergyConsumedKWh  float64 // an electric vehicle's; 0 for any other
	// HighSpeedExtraKm is the extra distance air drag above 90 km/h
	// weighs as (docs/analytics.md, Fuel): the fuel model's input beside
	// the distance, idle time and harsh accelerations.
	HighSpeedExtraKm float64

	Last detect.Point // the newest point added; zero before any
}

// Summary computes the trip's analytics for vehicle v.
func (r *Running) Summary(v Vehicle) Summary {
	v = v.withDefaults()
	s := Summary{
		DistanceKm:        (r.distanceM + r.pendingM()) / 1000,
		MaxSpeedKmh:       r.maxSpeedKmh,
		SpeedMeasured:     r.speedSeen,
		IdleTimeMinutes:   r.idleS / 60,
		LocationsCount:    r.locations,
		EventsCount:       r.events,
		HarshAcceleration: r.harshAccel,
		HarshBraking:      r.harshBrake,
		HarshCornering:    r.harshCorner,
		Speeding:          r.speeding,
		Last:              r.lastPoint,
		HighSpeedExtraKm:  r.highSpeedExtraM / 1000,
	}
	durS := 0.0
	if r.locations > 0 {
		durS = (r.last.Sub(r.first) - r.pausedWithin(r.first, r.last)).Seconds()
	}
	durS = math.Max(durS, 0)
	s.DurationMinutes = durS / 60
	if durS > 0 {
		s.AvgSpeedKmh = s.DistanceKm / (durS / 3600)
	}

	scoreKm := math.Max(s.DistanceKm, scoreFloorKm)
	s.SafetyScore = SafetyScore(r.safetyPoints, s.DistanceKm)
	idleShare, speedShare := 0.0, 0.0
	if durS > 0 {
		idleShare = math.Min(r.idleS/durS, 1)
		speedShare = math.Min(r.speedingS/durS, 1)
	}
	s.EcoScore = 100 -
		ecoHarshMax*(1-math.Exp(-2*r.ecoPoints/scoreKm)) -
		ecoIdleMax*math.Min(idleShare/ecoShareFull, 1) -
		ecoSpeedMax*math.Min(speedShare/ecoShareFull, 1)
	s.EcoScore = math.Max(s.EcoScore, 0)

	s.consume(v)
	return s
}

// consume sets the fuel model's figures of s from its distance, extra
// distance, idle time and harsh accelerations; v has its defaults.
func (s *Summary) consume(v Vehicle) {
	s.FuelConsumedLiters, s.FuelEfficiencyKmpl, s.EnergyConsumedKWh = 0, 0, 0
	if v.Electric {
		s.EnergyConsumedKWh = v.KWhPer100Km / 100 * (s.DistanceKm + v.AeroShare*s.HighSpeedExtraKm)
		return
	}
	s.FuelConsumedLiters = v.LitersPer100Km/100*(s.DistanceKm+v.AeroShare*s.HighSpeedExtraKm) +
		v.IdleLitersPerHour*s.IdleTimeMinutes/60 +
		v.HarshAccelerationLiters*float64(s.HarshAcceleration)
	if s.FuelConsumedLiters > 0 {
		s.FuelEfficiencyKmpl = s.DistanceKm / s.FuelConsumedLiters
	}
}

// WithDistance answers s for a trip that covered distanceKm rather than
// the length of its track (an odometer's difference): the average speed
// and the fuel model's figures for v follow distanceKm; the scores, the
// speeds and the extra distance, counted on the track, stay.
func (s Summary) WithDistance(v Vehicle, distanceKm float64) Summary {
	s.DistanceKm = distanceKm
	s.AvgSpeedKmh = 0
	if s.DurationMinutes > 0 {
		s.AvgSpeedKmh = distanceKm / (s.DurationMinutes / 60)
	}
	s.consume(v.withDefaults())
	return s
}

func (v Vehicle) withDefaults() Vehicle {
	v.LitersPer100Km = positiveOr(v.LitersPer100Km, DefaultLitersPer100Km)
	v.IdleLitersPerHour = positiveOr(v.IdleLitersPerHour, DefaultIdleLitersPerHour)
	v.AeroShare = positiveOr(v.AeroShare, DefaultAeroShare)
	v.HarshAccelerationLiters = positiveOr(v.HarshAccelerationLiters, DefaultHarshAccelerationLiters)
	v.KWhPer100Km = positiveOr(v.KWhPer100Km, 0)
	return v
}

func positiveOr(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return def
}

// severityWeight is the weight of an event of the given severity in the
// scores: moderate 1, high 2, critical 4; anything else counts as moderate.
func severityWeight(severity string) float64 {
	switch severity {
	case detect.SeverityHigh:
		return 2
	case detect.SeverityCritical:
		return 4
	}
	return 1
}
