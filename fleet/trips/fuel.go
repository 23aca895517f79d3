package trips

import (
	"context"
	"errors"

	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/ingest/analytics"
	"github.com/fleethub/fleethub/internal/store"
)

// The fuel model and the distance a trip's figures rest on: the vehicle's
// profile (fleet/vehicles) when it has one, and the odometer and fuel
// readings of the trip's start and stop when they agree with the track.
// docs/trips.md states the rules.

// Profiles reads a vehicle's profile (a *vehicles.Service):
// vehicles.ErrNotFound when the vehicle has none.
type Profiles interface {
	Get(ctx context.Context, s store.Scope, vehicleID string) (vehicles.Profile, error)
}

// The values of distance_source, fuel_model and fuel_source.
const (
	SourceGPS      = "gps"
	SourceOdometer = "odometer"

	ModelDefault = "default"
	ModelProfile = "vehicle_profile"

	FuelFromModel  = "model"
	FuelFromLevels = "fuel_level"
)

// kmPerMile converts an odometer in miles.
const kmPerMile = 1.609344

// odometerSlackUnits is how many odometer units a difference may stray
// from the track's bounds: readings are whole units, each truncated.
const odometerSlackUnits = 2

// fuelProfile is what a trip keeps of its vehicle's profile, read at the
// start and again at the stop: the fuel model of its figures and what
// turns its readings into kilometers and liters.
type fuelProfile struct {
	FuelType     string  `json:"fuel_type,omitempty"`
	LPer100Km    float64 `json:"l_per_100km,omitempty"`
	KWhPer100Km  float64 `json:"kwh_per_100km,omitempty"`
	TankLiters   float64 `json:"tank_liters,omitempty"`
	BatteryKWh   float64 `json:"battery_kwh,omitempty"`
	OdometerUnit string  `json:"odometer_unit,omitempty"`
}

// profileOf reads the fuel profile of a vehicle; nil when the service
// has no Profiles or the vehicle no profile.
func (s *Service) profileOf(ctx context.Context, sc store.Scope, vehicleID string) (*fuelProfile, error) {
	if s.cfg.Profiles == nil {
		return nil, nil
	}
	p, err := s.cfg.Profiles.Get(ctx, sc, vehicleID)
	if errors.Is(err, vehicles.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	fp := &fuelProfile{FuelType: p.FuelType, OdometerUnit: p.OdometerUnit}
	for _, f := range []struct {
		to   *float64
		from *float64
	}{{&fp.LPer100Km, p.FuelConsumptionLPer100Km}, {&fp.KWhPer100Km, p.EnergyConsumptionKWhPer100Km}, {&fp.TankLiters, p.TankCapacityLiters}, {&fp.BatteryKWh, p.BatteryCapacityKWh}} {
		if f.from != nil {
			*f.to = *f.from
		}
	}
	return fp, nil
}

// vehicle is the fuel model of a trip and its name: the profile's
// consumption, or its electric fuel type, else the service's default.
// A profile's consumption scales the default's idle and harsh
// acceleration terms with it (0.8 L/h and 0.03 L at 8 L/100 km).
func (s *Service) vehicle(p *fuelProfile) (analytics.Vehicle, string) {
	v := s.cfg.Vehicle
	switch {
	case p == nil:
		return v, ModelDefault
	case p.FuelType == "electric":
		return analytics.Vehicle{AeroShare: v.AeroShare, Electric: true, KWhPer100Km: p.KWhPer100Km}, ModelProfile
	case p.LPer100Km > 0:
		base := v.LitersPer100Km
		if base <= 0 {
			base = analytics.DefaultLitersPer100Km
		}
		idle, harsh := v.IdleLitersPerHour, v.HarshAccelerationLiters
		if idle <= 0 {
			idle = analytics.DefaultIdleLitersPerHour
		}
		if harsh <= 0 {
			harsh = analytics.DefaultHarshAccelerationLiters
		}
		k := p.LPer100Km / base
		return analytics.Vehicle{LitersPer100Km: p.LPer100Km, IdleLitersPerHour: idle * k, AeroShare: v.AeroShare, HarshAccelerationLiters: harsh * k}, ModelProfile
	}
	return v, ModelDefault
}

// odometerKm is the stop's odometer reading less the start's, in km; ok
// is false without both.
func (st *state) odometerKm() (km float64, ok bool) {
	if st.StartOdometer == nil || st.Odometer == nil {
		return 0, false
	}
	return float64(*st.Odometer-*st.StartOdometer) * st.unitKm(), true
}

// unitKm is the length of one odometer unit of the trip's vehicle.
func (st *state) unitKm() float64 {
	if st.Profile != nil && st.Profile.OdometerUnit == "mi" {
		return kmPerMile
	}
	return 1
}

// odometerAgrees is the sanity rule of an odometer difference against the
// track's length: not negative, and between half and twice the GPS
// distance, give or take two odometer units.
func odometerAgrees(odoKm, gpsKm, unitKm float64) bool {
	slack := odometerSlackUnits * unitKm
	return odoKm >= 0 && odoKm >= gpsKm/2-slack && odoKm <= 2*gpsKm+slack
}

// fromLevels is what the drop of the level between start and stop makes
// with the vehicle's tank (liters) or, for an electric vehicle, its
// battery (kWh: the level is the state of charge); ok is false without
// both levels, without the capacity, or when the level did not drop (a
// refuel or a charge, or a gauge that did not move).
func (st *state) fromLevels() (amount float64, electric, ok bool) {
	p := st.Profile
	if st.StartFuelLevel == nil || st.FuelLevel == nil || p == nil {
		return 0, false, false
	}
	electric = p.FuelType == "electric"
	capacity := p.TankLiters
	if electric {
		capacity = p.BatteryKWh
	}
	drop := *st.StartFuelLevel - *st.FuelLevel
	if drop <= 0 || capacity <= 0 {
		return 0, electric, false
	}
	return drop / 100 * capacity, electric, true
}

// figures are a trip's summary with the distance and fuel it reports and
// where they come from.
type figures struct {
	sum            analytics.Summary
	gpsKm          float64
	odometerKm     *float64
	distanceSource string
	model          string
	fuelSource     string
}

// figuresOf computes the trip's summary under its fuel model, with the
// odometer's distance when it agrees with the track and the fuel the
// levels give when they can.
func (s *Service) figuresOf(st *state) figures {
	v, model := s.vehicle(st.Profile)
	f := figures{sum: st.Running.Summary(v), distanceSource: SourceGPS, model: model, fuelSource: FuelFromModel}
	f.gpsKm = f.sum.DistanceKm
	if km, ok := st.odometerKm(); ok {
		f.odometerKm = &km
		if odometerAgrees(km, f.gpsKm, st.unitKm()) {
			f.sum = f.sum.WithDistance(v, km)
			f.distanceSource = SourceOdometer
		}
	}
	if amount, electric, ok := st.fromLevels(); ok {
		if electric {
			f.sum.EnergyConsumedKWh = amount
		} else {
			f.sum.FuelConsumedLiters = amount
			f.sum.FuelEfficiencyKmpl = f.sum.DistanceKm / amount
		}
		f.fuelSource = FuelFromLevels
	}
	return f
}
