// Package expr compiles a stream's filters (the event_filters of an event
// stream, the vehicles, data_types and filters of a telemetry stream) into
// a Program whose Match(*event.Envelope) bool is what the stream
// registry's matcher (hub/streams, Registry.Match) asks for, and keeps
// many Programs in an Index that finds the matching ones without
// scanning them all.
//
// # Compile
//
// Compile validates the whole Spec and returns the first problem as a
// *FieldError whose Field is the body path ("event_filters.categories[1]",
// "event_filters.custom_conditions[2].operator", "filters.max_fuel_level"),
// ready for the API's map of field path to message. It rejects unknown
// categories, severities, priorities, data types, alert thresholds and
// operators; empty ids; an unknown or "Local" timezone; fields of the other
// kind of stream (a telemetry Spec with categories); and conditions that
// could never mean what they say: an unknown field path, an object named
// as a value, in without an array, ordering operators without a number or
// an RFC3339 time, a constant of the wrong type for a known field
// ("location.latitude" = "37"), or an enum value that does not exist
// ("severity" = "hgh"). Limits: MaxConditions, MaxValues, MaxFieldLen,
// MaxFieldDepth. The timezone database is embedded (time/tzdata), so
// stream timezones do not depend on the host image.
//
// # Semantics
//
// A Program matches a message when every given filter passes (lists allow
// any of their values; an empty list allows everything):
//
//   - event streams: category, severity, priority, source.vehicle_id,
//     source.driver_id, source.fleet_id (the stream's fleet_id: an event
//     without a fleet passes none); geofences match location.geofence or
//     event_data.geofence_id (geofence events carry the latter).
//   - time filters judge the event's timestamp (IngestedAt when it is
//     zero) in the stream's timezone, UTC by default: business_hours_only
//     passes Monday to Friday, 08:00 to 18:00 local (18:00 excluded);
//     exclude_weekends drops Saturday and Sunday local.
//   - telemetry streams: vehicle_id and data_type. min_engine_temp,
//     alert_thresholds and max_fuel_level apply to the data type that
//     carries their field: an engine_diagnostics message passes when
//     data.engine.coolant_temp >= min_engine_temp and when any alert
//     threshold is reached (data.engine.rpm >= engine_rpm or
//     data.engine.coolant_temp >= coolant_temp); a fuel_system message
//     passes when data.fuel_level.percentage <= max_fuel_level. A message
//     of that type without the field fails; messages of other data types
//     are not affected (use data_types to narrow the stream).
//   - custom conditions, all of which must hold. The field is a dotted
//     path into the message by JSON name; a numeric segment indexes an
//     array. A field is present exactly when the message's JSON form has
//     it (an empty omitempty field is missing).
//
// Operators, for a field value v and constant c:
//
//	= ==      equal: numbers numerically (JSON float64 or msgpack integers
//	          alike), strings exactly or, when c is an RFC3339 time, as the
//	          same instant; c null matches a missing or null field
//	!=        not =, so a missing field passes != "x"
//	> >= < <= numbers with a number, or times (the timestamp field, or
//	          RFC3339 strings) with an RFC3339 time; anything else fails
//	in        = for any element of the array c
//	contains  substring of a string, element of an array, or key of an
//	          object
//
// Numbers compare as float64: integers beyond 2^53 lose precision.
//
// Match does not allocate (TestMatchDoesNotAllocate), except when a time
// condition parses a string with a non-UTC offset. Measured on a 2-vCPU
// AMD EPYC VM: about 120 ns for an event filter with five lists, a
// timezone and two conditions (BenchmarkProgramMatch); the time filter
// looks up the zone offset once, since Weekday and Clock each looking it
// up cost a third of that.
//
// # Index
//
// Index[K] holds Programs by id. Keys says which values a program can
// match: its vehicle ids, categories or data types, narrowed by
// conditions that pin them (source.vehicle_id in [...]). Each program is
// stored under its most selective dimension only: under each of its
// vehicle ids if it has any, else under each category (event) or data
// type (telemetry), else in its kind's wildcard bucket; a program whose
// conditions contradict its lists is stored nowhere. A message reads the
// bucket of its vehicle, of its category or data type, and the wildcard
// bucket, and runs the full Match on those candidates only. Since a
// program is in one dimension and a message has one value per dimension,
// no candidate is seen twice and no dedup is needed.
//
// A Program is immutable once compiled: any number of goroutines may
// call its Match at once. An Index is safe for concurrent use. Its
// Match takes no lock: it loads an immutable snapshot through an
// atomic.Pointer (copy-on-write). Add and Remove serialize on a mutex and
// publish a new snapshot that shares all untouched parts; vehicle buckets
// are split into 256 maps by a hash of the vehicle id, so an Add copies a
// few small maps and one bucket slice rather than the index.
//
// Measured with 10,000 programs over 2,000 vehicles (80% per-vehicle,
// 19.9% category- or data-type-only, 0.1% wildcards; BenchmarkIndexMatch),
// on a 2-vCPU AMD EPYC VM shared with other work: 5-12 µs and 0
// allocations per message, most of it in the roughly 130 programs that do
// match (the category-only ones), against 240-650 µs for Match on every
// program (BenchmarkScanMatch). Add plus Remove at that size: 10-30 µs.
//
// The Index does not know tenants: keep one per organization and
// environment, or put the tenant in K and check it, since vehicle ids of
// two organizations may collide.
package expr
