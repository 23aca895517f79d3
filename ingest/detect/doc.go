// Package detect finds safety events in one trip's stream of GPS points:
// harsh acceleration, harsh braking, harsh cornering, speeding and idling.
//
// A Detector is fed the points of one trip in timestamp order, one at a
// time, in as many batches as the uploads bring; it keeps its state between
// calls, so splitting a track into batches never changes the events found.
// Feed appends the events that complete at a point; Flush, at trip end,
// closes the episodes still open. The package is pure: no I/O, no clock, no
// globals. A Detector is not safe for concurrent use; the caller owns one
// per active trip and serializes the trip's uploads.
//
// # Kinematics
//
// Every admitted point becomes a sample with a speed and a heading, each
// with an uncertainty:
//
//   - speed: the reported speed (Doppler, ±0.5 km/h) when present; otherwise
//     the chord distance to the newest earlier sample at least 2.5 s old,
//     divided by the time between them, with uncertainty (acc₁+acc₂)/Δt;
//     for idling, a chord shorter than the combined accuracy counts as
//     standing still (so at 10 m accuracy, creeping under about 25 km/h
//     cannot be told from standing; a reported speed can);
//   - heading: the reported heading (±1°) when present; otherwise the
//     bearing of the same chord, when the chord is at least twice the
//     combined accuracy, with uncertainty (acc₁+acc₂)/chord radians.
//
// Longitudinal acceleration is (v₂−v₁)/Δt and lateral acceleration
// v̄·|Δheading|/Δt, both over the newest sample pair at least 0.9 s and at
// most MaxSampleGap apart (0.9 s rather than 1 s so that 1 Hz data with a
// little timestamp jitter still uses consecutive samples; faster data is
// differenced over about one second, not sample to sample, because the
// noise of a finite difference grows as 1/Δt). Lateral acceleration needs
// both samples at 10 km/h or more: below that a GPS heading is noise.
//
// A sample counts towards a harsh episode when its magnitude minus its
// uncertainty reaches the threshold, and keeps an open episode going while
// that stays above 75 % of the threshold (hysteresis, so one manoeuvre is one
// event). The uncertainty margin is what keeps GPS noise from creating
// events: with reported speed it costs about 0.03 g at 1 Hz; with speed
// derived from 5 m positions it is about 0.7 g, so devices that do not report
// speed get harsh events only from very accurate fixes. That is deliberate:
// a ±5 m position error over one second is a ±10 m/s speed error, ±1 g.
//
// # Filtering
//
// A point is ignored when its coordinates are not finite or out of range,
// when its accuracy is worse than MaxAccuracyM, when it is not after the
// previous admitted point, or when it is closer than MinSampleGap to it
// (high-rate data is decimated). A point that implies more than 250 km/h
// from the previous admitted point, beyond both accuracies, is a jump and is
// ignored; after three jumps in a row the position is believed, the
// kinematic chain restarts there and open harsh episodes are closed. A
// reported speed above 300 km/h is treated as absent. A gap longer than
// MaxEpisodeGap closes every open episode and restarts the chain.
//
// # Speed limits
//
// A point may carry the limit of the road it was matched to
// (Point.RoadLimitKmh, with its class in RoadType); it is then judged by
// that limit plus the tolerance, else by Thresholds.SpeedLimitKmh. A
// speeding episode runs under one limit: where the limit changes it ends
// and one under the new limit may start. Events carry the road where they
// started.
//
// # Defaults and severity
//
// The Default* constants list the defaults New applies to zero fields;
// docs/analytics.md lists them with the severity bands (see severityOf).
//
// # State across restarts
//
// The Detector's state lives in memory only. Running analytics are persisted
// by the caller; a Detector recreated after a restart starts a fresh chain,
// so an episode open at the restart is lost. That costs at most one event
// and keeps this type free of a wire format.
//
// # Constructor
//
// New returns no error although the house style asks for one: every field
// of Thresholds is sanitized (zero, negative or NaN takes the default, a
// negative braking threshold is read as its magnitude), so nothing can fail.
package detect
