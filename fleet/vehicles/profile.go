package vehicles

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// FuelTypes are the fuel types a profile may name. An electric vehicle
// burns no fuel: its consumption is energy_consumption_kwh_per_100km, and
// it has no tank.
var FuelTypes = []string{"gasoline", "diesel", "hybrid", "lpg", "electric"}

// VehicleTypes are the kinds of vehicle a profile may name.
var VehicleTypes = []string{"car", "van", "truck", "bus", "motorcycle", "other"}

// OdometerUnits are the units of the odometer readings a vehicle's trips
// are stopped with.
var OdometerUnits = []string{"km", "mi"}

// The bounds of a profile's figures: wide enough for a motorcycle and a
// loaded truck, narrow enough to catch a figure in the wrong unit.
const (
	MinLitersPer100Km = 1.0
	MaxLitersPer100Km = 100.0
	MinKWhPer100Km    = 5.0
	MaxKWhPer100Km    = 300.0
	MinTankLiters     = 5.0
	MaxTankLiters     = 2000.0
	MinBatteryKWh     = 5.0
	MaxBatteryKWh     = 2000.0
	maxText           = 200
)

// Body creates or replaces a profile; a field left out is cleared.
type Body struct {
	FleetID                      string   `json:"fleet_id,omitempty" doc:"the fleet the vehicle belongs to, at most 200 characters, no control character; none when absent"`
	Name                         string   `json:"name,omitempty" doc:"at most 200 characters, none of them a control character"`
	VehicleType                  string   `json:"vehicle_type,omitempty" enum:"car,van,truck,bus,motorcycle,other"`
	FuelType                     string   `json:"fuel_type,omitempty" enum:"gasoline,diesel,hybrid,lpg,electric" doc:"required with any of the consumption and tank figures"`
	FuelConsumptionLPer100Km     *float64 `json:"fuel_consumption_l_per_100km,omitempty" doc:"liters per 100 km at steady speeds up to 90 km/h, 1 to 100; not for electric"`
	EnergyConsumptionKWhPer100Km *float64 `json:"energy_consumption_kwh_per_100km,omitempty" doc:"electric only: kWh per 100 km, 5 to 300"`
	TankCapacityLiters           *float64 `json:"tank_capacity_liters,omitempty" doc:"5 to 2000; turns the stop's fuel_level_percent into liters; not for electric"`
	BatteryCapacityKWh           *float64 `json:"battery_capacity_kwh,omitempty" doc:"electric only: usable battery capacity, 5 to 2000 kWh; turns the stop's fuel_level_percent (the state of charge) into kWh"`
	OdometerUnit                 string   `json:"odometer_unit,omitempty" enum:"km,mi" doc:"unit of the odometer_reading the vehicle's trips are stopped with; default km"`
}

// Profile is the vehicle resource.
type Profile struct {
	VehicleID                    string    `json:"vehicle_id"`
	FleetID                      string    `json:"fleet_id,omitempty"`
	Name                         string    `json:"name,omitempty"`
	VehicleType                  string    `json:"vehicle_type,omitempty" enum:"car,van,truck,bus,motorcycle,other"`
	FuelType                     string    `json:"fuel_type,omitempty" enum:"gasoline,diesel,hybrid,lpg,electric"`
	FuelConsumptionLPer100Km     *float64  `json:"fuel_consumption_l_per_100km,omitempty"`
	EnergyConsumptionKWhPer100Km *float64  `json:"energy_consumption_kwh_per_100km,omitempty"`
	TankCapacityLiters           *float64  `json:"tank_capacity_liters,omitempty"`
	BatteryCapacityKWh           *float64  `json:"battery_capacity_kwh,omitempty"`
	OdometerUnit                 string    `json:"odometer_unit" enum:"km,mi"`
	CreatedAt                    time.Time `json:"created_at"`
	UpdatedAt                    time.Time `json:"updated_at"`
}

// Electric reports whether the profile is an electric vehicle's.
func (p *Profile) Electric() bool { return p.FuelType == "electric" }

// ValidationError is a bad profile; Fields maps a field to a message.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string {
	return fmt.Sprintf("vehicles: invalid profile (%s)", strings.Join(sortedKeys(e.Fields), ", "))
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// IDRefusal is the message for an id that breaks the id rule (ValidID).
const IDRefusal = "must be 1 to 200 characters, none of them a control character, and not only white space"

// ValidID reports whether id can be a vehicle's id: 1 to 200 characters
// (counted as characters, not bytes) of UTF-8 text without control
// characters, and not only white space. It is the rule of the
// {vehicle_id} path parameter, so that every vehicle a trip or a
// driver id names could have a profile; trips take driver ids by it too.
func ValidID(id string) bool {
	return id != "" && utf8.RuneCountInString(id) <= maxText && utf8.ValidString(id) && !jsonpath.IsBlank(id) && !jsonpath.HasControl(id)
}

// checkID names a vehicle id that cannot be one.
func checkID(bad map[string]string, id string) {
	if !ValidID(id) {
		bad["vehicle_id"] = IDRefusal
	}
}

// Check names every bad field of b, the profile of vehicle id (Put's
// checks, which change nothing); empty when there is none.
func (b *Body) Check(id string) map[string]string {
	bad := map[string]string{}
	checkID(bad, id)
	b.validate(bad)
	return bad
}

// validate names every bad field of b.
func (b *Body) validate(bad map[string]string) {
	switch {
	case utf8.RuneCountInString(b.FleetID) > maxText:
		bad["fleet_id"] = "must be at most 200 characters"
	case jsonpath.HasControl(b.FleetID):
		bad["fleet_id"] = jsonpath.ControlRefusal
	}
	switch {
	case utf8.RuneCountInString(b.Name) > maxText:
		bad["name"] = "must be at most 200 characters"
	case jsonpath.HasControl(b.Name):
		bad["name"] = jsonpath.ControlRefusal
	}
	if b.VehicleType != "" && !slices.Contains(VehicleTypes, b.VehicleType) {
		bad["vehicle_type"] = enum.Refusal(VehicleTypes...)
	}
	if b.OdometerUnit != "" && !slices.Contains(OdometerUnits, b.OdometerUnit) {
		bad["odometer_unit"] = enum.Refusal(OdometerUnits...)
	}
	electric := b.FuelType == "electric"
	switch {
	case b.FuelType != "" && !slices.Contains(FuelTypes, b.FuelType):
		bad["fuel_type"] = enum.Refusal(FuelTypes...)
	case b.FuelType == "" && (b.FuelConsumptionLPer100Km != nil || b.EnergyConsumptionKWhPer100Km != nil || b.TankCapacityLiters != nil || b.BatteryCapacityKWh != nil):
		bad["fuel_type"] = "is required with a consumption, a tank or a battery capacity"
	}
	between(bad, "fuel_consumption_l_per_100km", b.FuelConsumptionLPer100Km, MinLitersPer100Km, MaxLitersPer100Km)
	between(bad, "energy_consumption_kwh_per_100km", b.EnergyConsumptionKWhPer100Km, MinKWhPer100Km, MaxKWhPer100Km)
	between(bad, "tank_capacity_liters", b.TankCapacityLiters, MinTankLiters, MaxTankLiters)
	between(bad, "battery_capacity_kwh", b.BatteryCapacityKWh, MinBatteryKWh, MaxBatteryKWh)
	if !electric && b.FuelType != "" && b.BatteryCapacityKWh != nil {
		bad["battery_capacity_kwh"] = "is only for fuel_type electric"
	}
	if electric && b.FuelConsumptionLPer100Km != nil {
		bad["fuel_consumption_l_per_100km"] = "is not for an electric vehicle: give energy_consumption_kwh_per_100km"
	}
	if electric && b.TankCapacityLiters != nil {
		bad["tank_capacity_liters"] = "is not for an electric vehicle"
	}
	if !electric && b.FuelType != "" && b.EnergyConsumptionKWhPer100Km != nil {
		bad["energy_consumption_kwh_per_100km"] = "is only for fuel_type electric"
	}
}

func between(bad map[string]string, field string, v *float64, lo, hi float64) {
	if v != nil && (math.IsNaN(*v) || *v < lo || *v > hi) {
		bad[field] = fmt.Sprintf("must be between %g and %g", lo, hi)
	}
}

// profile is the resource b makes for id.
func (b *Body) profile(id string, created, updated time.Time) Profile {
	unit := b.OdometerUnit
	if unit == "" {
		unit = "km"
	}
	return Profile{VehicleID: id, FleetID: b.FleetID, Name: b.Name, VehicleType: b.VehicleType, FuelType: b.FuelType,
		FuelConsumptionLPer100Km: b.FuelConsumptionLPer100Km, EnergyConsumptionKWhPer100Km: b.EnergyConsumptionKWhPer100Km,
		TankCapacityLiters: b.TankCapacityLiters, BatteryCapacityKWh: b.BatteryCapacityKWh, OdometerUnit: unit, CreatedAt: created, UpdatedAt: updated}
}
