// Package telemetry is the intake of telemetry messages and external fleet
// events (POST /v1/telemetry and POST /v1/events): it validates them,
// wraps each in an event.Envelope and publishes them on the bus, runs the
// maintenance rules over engine diagnostics and watches vehicles for
// silence.
//
// Input is the decoded JSON of each message (objects as map[string]any,
// numbers as json.Number or float64) rather than a struct: every type
// mistake, even in the top-level fields, is then reported under its full
// field path (messages[3].sequence, messages[3].data.engine.rpm), and
// every error of a request is reported at once, where encoding/json into
// structs stops at the first error and drops the array index. The service
// owns the maps it is given: numbers are normalized to float64 in place.
//
// That general path costs what a valid request should not: decoding into
// maps, checking the maps, then encoding each envelope by reflection take
// 11.8 ms and 123,000 allocations per 1,000-message request
// (BenchmarkIngestTelemetry1000/General). IngestTelemetryJSON takes the
// body as sent and, when it is valid and plainly written (no escapes, no
// repeated keys, integers as plain digits), reads, checks and encodes it
// in one pass (bodyReader, writing with event.TelemetryEncoder): 1.4 ms
// and about one allocation per message (BenchmarkIngestTelemetry1000/JSON;
// docs/performance.md). Any other body, every invalid one among
// them, is declined untouched and goes the general path, so errors keep
// their wording and paths; the reader checks the same rules in the same
// terms, and a differential test and a fuzz target hold the two paths to
// publishing the same messages.
//
// IngestEventsJSON does the same for POST /v1/events (eventReader): the
// source, location and metadata objects are read into the event directly
// and every other member into the value a decoder with UseNumber makes,
// then checked by eventField, the general path's own check; a
// 500-event request allocates half as much as decoding it into maps
// first (BenchmarkIngestEvents).
//
// Validation decisions the interface leaves open:
//   - the four documented data types accept only their documented groups
//     and fields with their documented types; counts (dtc_count, cycles,
//     engagement_count) are integers ≥ 0 and percentages and scores are
//     0-100; null is rejected (omit what the device cannot read);
//   - environmental, maintenance_indicators, gps_enhanced and
//     driver_behavior carry free-form numeric groups: data.<group>.<field>
//     is a finite number, names are [A-Za-z][A-Za-z0-9_]* up to 64
//     characters (they are addressable by stream filters);
//   - unknown top-level fields are rejected, as the OpenAPI document
//     (additionalProperties false) says; so is the server-owned
//     metadata.late of events (the pipeline sets it);
//   - an event's metadata.sequence_number is an integer from 0 to 2^53-1
//     written as plain digits (1.0 and 1e3 are refused); 0 or absent
//     means unsequenced;
//   - an event_id repeated within one events request is accepted: every
//     copy is published and Result.Duplicates counts the repeats; stream
//     deduplication decides what streams see.
//
// Fleets: an event's source.fleet_id (an extension of the interface's
// source) is kept as its sender gave it; an event without one whose
// source names a vehicle is stamped with the vehicle's fleet from
// Config.Fleets (the vehicle profiles) before it is published, rule and
// watchdog events included, so that event streams scoped to a fleet find
// it there and the pipeline looks nothing up. When the fleets cannot be
// read the request fails with ErrFleetsUnavailable and nothing of it is
// published (the caller retries); a vehicle of no known fleet leaves the
// event without one.
//
// Backpressure and acknowledgement: a request is published in one
// Publish call before it is answered (write before acknowledge). If the
// bus refuses it, the request fails with ErrUnavailable and the caller is
// told nothing was accepted, so it retries: delivery is at-least-once and
// downstream dedup (event_id; vehicle, data type and sequence) makes the
// effects exactly-once. A bus that blocks blocks the request.
//
// Rule and watchdog state is kept per vehicle (organization, environment,
// vehicle id) in a bounded LRU (Config.Vehicles, default 100,000) under
// one mutex held only for in-memory work, never across Publish. A
// request's state changes are applied before Publish and rolled back if
// Publish fails and no later request changed the vehicle since, so a
// retried request raises its alerts again. State is memory only: after a
// restart or an eviction the first engine_diagnostics message of a
// vehicle is the new baseline (a dtc_count rise needs a previous value)
// and a vehicle is watched again once it speaks.
//
// Concurrency: a Service is safe for concurrent use; any number of
// requests run at once, each validating and encoding on its caller's
// goroutine with an encoder of its own (the schema tables are only
// read), and they meet only at that one mutex and at the bus. Run is
// the watchdog's one goroutine; Check, which it calls, may also be called
// from elsewhere.
package telemetry
