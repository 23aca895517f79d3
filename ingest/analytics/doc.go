// Package analytics keeps the running analytics of one trip: distance,
// duration, speeds, idle time, event counts, safety and eco scores and a
// fuel estimate.
//
// A Running is a value: its zero value is an empty trip, and it marshals to
// JSON (MarshalJSON, UnmarshalJSON) so that the caller can persist it with
// the trip and carry on after a restart exactly where it stopped: the
// distance anchor and the jump filter state travel with the totals. The
// caller feeds it the trip's points (Add), the events of a detect.Detector
// (AddEvent) and the trip's pauses (Pause), and reads a Summary whenever it
// needs one. It is not safe for concurrent use. The package is pure: no
// I/O, no clock, no globals.
//
// Every formula is written down in docs/analytics.md; the constants below
// carry the same names.
//
// Two choices worth knowing:
//
//   - Distance is the haversine length of the track after a jitter filter:
//     a point adds the distance from the last counted point (the anchor)
//     only when it lies farther than the sum of both accuracies and the
//     vehicle is not reported standing at both ends, so a parked vehicle
//     adds nothing and slow movement is counted once it clears the noise,
//     without loss. A small move that no reported speed vouches for must
//     be confirmed by the next point, so that a lone outlier adds nothing.
//     Points with accuracy worse than 30 m and jumps over 250 km/h are left
//     out, as in package detect.
//   - Average speed is distance over the whole trip duration minus pauses
//     (stops included), so that distance, duration and average speed
//     reported together agree with each other.
//
// Distances are package internal/geo's haversine (geo.DistanceRad), on
// the latitude cosines each point keeps.
package analytics
