package expr

import "strconv"

// Kinds of streams.
const (
	KindEvent     = "event"
	KindTelemetry = "telemetry"
)

// Limits of a Spec, enforced by Compile.
const (
	// MaxConditions is the most custom conditions a stream may have.
	MaxConditions = 64
	// MaxValues is the longest value list of an in condition.
	MaxValues = 1024
	// MaxFieldLen is the longest field path, in bytes.
	MaxFieldLen = 256
	// MaxFieldDepth is the most segments of a field path.
	MaxFieldDepth = 16
)

// Alert threshold names of telemetry streams.
const (
	ThresholdEngineRPM   = "engine_rpm"
	ThresholdCoolantTemp = "coolant_temp"
)

// Spec is what a stream's filters say, decoded by the API layer from the
// start body. Fields of the other kind of stream must be left empty.
type Spec struct {
	Kind string // KindEvent or KindTelemetry

	// Event streams (event_filters).
	Categories []string // categories
	Severities []string // severity_levels
	Priorities []string // priority_levels
	VehicleIDs []string // vehicle_ids; for telemetry streams: vehicles
	DriverIDs  []string // driver_ids
	Geofences  []string // geofences: location.geofence or event_data.geofence_id
	// FleetIDs are the stream's fleet_id: source.fleet_id must be one of
	// them (an event without a fleet passes no such list).
	FleetIDs []string

	// time_filters
	BusinessHoursOnly bool   // Mon-Fri 08:00-18:00 local
	ExcludeWeekends   bool   // drop Saturday and Sunday, local
	Timezone          string // IANA name; "" means UTC

	// Conditions are the custom_conditions (event_filters.custom_conditions,
	// or filters.custom_conditions of a telemetry stream).
	Conditions []Condition

	// Telemetry streams.
	DataTypes     []string // data_types
	MinEngineTemp *float64 // filters.min_engine_temp: engine_diagnostics data.engine.coolant_temp >= this
	MaxFuelLevel  *float64 // filters.max_fuel_level: fuel_system data.fuel_level.percentage <= this
	// AlertThresholds are filters.alert_thresholds: engine_rpm
	// (data.engine.rpm >= v) and coolant_temp (data.engine.coolant_temp >= v);
	// an engine_diagnostics message passes when any threshold is reached.
	AlertThresholds map[string]float64
}

// Condition is one custom condition: Field Operator Value.
//
// Field is a dotted path into the message by JSON name ("severity",
// "source.vehicle_id", "event_data.deceleration_g", "data.engine.rpm");
// a numeric segment indexes an array. Operator is one of = == != > >= <
// <= in contains. Value is what encoding/json gives for the body's value:
// string, float64, bool, nil or []any (other Go numbers and []string are
// accepted too).
type Condition struct {
	Field    string `json:"field"`
	Operator string `json:"operator" enum:"=,==,!=,>,>=,<,<=,in,contains"`
	Value    any    `json:"value"`
}

// FieldError is the error of Compile: Field is the path of the offending
// field in the start body, e.g. "event_filters.custom_conditions[2].operator".
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return "expr: " + e.Field + ": " + e.Message }

// paths names the body fields of one kind of stream, for FieldErrors.
type paths struct {
	categories, severities, priorities, vehicles, drivers, geofences string
	fleets                                                           string
	timezone, businessHours, excludeWeekends                         string
	conditions                                                       string
	dataTypes, minEngineTemp, maxFuelLevel, alertThresholds          string
}

var eventPaths = paths{
	categories:      "event_filters.categories",
	severities:      "event_filters.severity_levels",
	priorities:      "event_filters.priority_levels",
	vehicles:        "event_filters.vehicle_ids",
	drivers:         "event_filters.driver_ids",
	geofences:       "event_filters.geofences",
	fleets:          "fleet_id",
	timezone:        "event_filters.time_filters.timezone",
	businessHours:   "event_filters.time_filters.business_hours_only",
	excludeWeekends: "event_filters.time_filters.exclude_weekends",
	conditions:      "event_filters.custom_conditions",
	dataTypes:       "data_types",
	minEngineTemp:   "filters.min_engine_temp",
	maxFuelLevel:    "filters.max_fuel_level",
	alertThresholds: "filters.alert_thresholds",
}

var telemetryPaths = func() paths {
	p := eventPaths
	p.vehicles = "vehicles"
	p.conditions = "filters.custom_conditions"
	return p
}()

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
