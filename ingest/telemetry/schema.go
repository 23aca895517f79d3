package telemetry

// kind is the type a documented telemetry field must have.
type kind uint8

const (
	kNumber  kind = iota // any finite number
	kCount               // integer ≥ 0
	kPercent             // number from 0 to 100
	kBool
	kText  // string of at most MaxTextLen characters
	kCodes // array of strings (diagnostic trouble codes)
)

func (k kind) String() string {
	switch k {
	case kCount:
		return "an integer ≥ 0"
	case kPercent:
		return "a number from 0 to 100"
	case kBool:
		return "a boolean"
	case kText:
		return "a string"
	case kCodes:
		return "an array of strings"
	}
	return "a number"
}

// group is the fields of one data group.
type group map[string]kind

func numbers(names ...string) group {
	g := make(group, len(names))
	for _, n := range names {
		g[n] = kNumber
	}
	return g
}

func (g group) with(k kind, names ...string) group {
	for _, n := range names {
		g[n] = k
	}
	return g
}

// Data type names.
const (
	EngineDiagnostics     = "engine_diagnostics"
	FuelSystem            = "fuel_system"
	VehicleDynamics       = "vehicle_dynamics"
	ElectricalSystem      = "electrical_system"
	Environmental         = "environmental"
	MaintenanceIndicators = "maintenance_indicators"
	GPSEnhanced           = "gps_enhanced"
	DriverBehavior        = "driver_behavior"
)

// schema holds the documented groups of the four structured data types
// (docs/ingest.md, Data groups). It is built by New and read only.
// Every other data type of event.DataTypes (environmental,
// maintenance_indicators, gps_enhanced, driver_behavior) carries
// free-form numeric groups.
type schema map[string]map[string]group

func newSchema() schema {
	tires := group{}
	for _, f := range []string{"pressure", "temp", "tread_depth"} {
		for _, w := range []string{"fl", "fr", "rl", "rr"} {
			tires[f+"_"+w] = kNumber
		}
	}
	return schema{
		EngineDiagnostics: {
			"engine": numbers("rpm", "coolant_temp", "oil_pressure", "oil_temp", "air_intake_temp",
				"fuel_trim_bank1", "fuel_trim_bank2", "timing_advance").with(kPercent, "load_percentage", "throttle_position"),
			"exhaust":      numbers("egr_valve_position", "dpf_pressure", "nox_level", "exhaust_temp"),
			"turbo":        numbers("boost_pressure", "turbo_rpm", "wastegate_position"),
			"status_codes": group{"dtc_count": kCount, "pending_codes": kCodes, "mil_status": kBool, "readiness_status": kText},
		},
		FuelSystem: {
			"fuel_level":         numbers("gallons", "liters", "range_remaining").with(kPercent, "percentage"),
			"consumption":        numbers("instant_mpg", "average_mpg", "fuel_rate_gph", "fuel_rate_lph"),
			"system_health":      numbers("fuel_pressure", "fuel_temp", "injector_pulse_width", "fuel_pump_duty"),
			"efficiency_metrics": numbers("fuel_waste_estimate", "optimization_potential").with(kPercent, "efficiency_score", "eco_driving_score"),
		},
		VehicleDynamics: {
			"motion": numbers("speed_mph", "speed_kmh", "acceleration_x", "acceleration_y", "acceleration_z",
				"angular_velocity_x", "angular_velocity_y", "angular_velocity_z"),
			"braking": numbers("brake_pedal_position", "brake_pressure", "brake_temp_front", "brake_temp_rear",
				"brake_wear_front", "brake_wear_rear").with(kBool, "abs_active"),
			"steering":   numbers("steering_angle", "steering_rate", "power_steering_pressure").with(kText, "wheel_alignment"),
			"suspension": numbers("ride_height_front", "ride_height_rear", "shock_travel_front", "shock_travel_rear").with(kBool, "stability_control_active"),
			"tires":      tires,
		},
		ElectricalSystem: {
			"battery": numbers("voltage", "current", "temperature", "internal_resistance").
				with(kPercent, "state_of_charge", "health_percentage").with(kCount, "cycles"),
			"charging_system":    numbers("alternator_voltage", "alternator_current", "charging_rate", "regulator_temp").with(kText, "belt_tension"),
			"power_distribution": numbers("main_bus_voltage", "accessory_load", "lighting_load", "hvac_load", "total_load"),
			"starter_system":     numbers("starter_voltage", "starter_current", "cranking_time_avg").with(kCount, "engagement_count"),
		},
	}
}

// tables returns the groups of each structured data type as fieldTables.
func (sc schema) tables() map[string]map[string]*fieldTable {
	out := make(map[string]map[string]*fieldTable, len(sc))
	for dt, groups := range sc {
		out[dt] = make(map[string]*fieldTable, len(groups))
		for name, g := range groups {
			out[dt][name] = newFieldTable(g)
		}
	}
	return out
}

// fieldTable finds a documented field of a group by the bytes of its
// name, with a number of its own (for repeat checks). Built by New, read
// only. It is a small open-addressed table on the name's length and
// three of its bytes: in the one-pass reader, the group's map took a
// quarter of the time of reading a group (BenchmarkIngestTelemetry1000).
type fieldTable struct {
	slots [64]fieldSlot
}

type fieldSlot struct {
	name string
	kind kind
	n    uint8 // the field's number in its group, from 0
}

func fieldHash(f []byte) int {
	return (len(f)*37 + int(f[0])*7 + int(f[len(f)/2])*3 + int(f[len(f)-1])) & 63
}

func newFieldTable(g group) *fieldTable {
	t := &fieldTable{}
	n := uint8(0)
	for _, name := range sortedKeys(g) {
		h := fieldHash([]byte(name))
		for t.slots[h].name != "" {
			h = (h + 1) & 63
		}
		t.slots[h] = fieldSlot{name: name, kind: g[name], n: n}
		n++
	}
	return t
}

// find returns the field named f.
func (t *fieldTable) find(f []byte) (k kind, n uint8, ok bool) {
	if len(f) == 0 {
		return 0, 0, false
	}
	for h := fieldHash(f); t.slots[h].name != ""; h = (h + 1) & 63 {
		if s := &t.slots[h]; s.name == string(f) {
			return s.kind, s.n, true
		}
	}
	return 0, 0, false
}
