// Package devices is the device settings service, served over HTTP by
// api/devices: Apply merges and validates a device's telemetry, power,
// connectivity and safety settings into its current ones and stores the
// applied record with a new version (a concurrent change is retried three
// times); Get reads the record back. The safety settings drive trip
// detection: DetectThresholds satisfies fleet/trips' Thresholds, so the
// trips service takes a device's harsh-event and speeding thresholds from
// here.
//
// The service holds no state between calls and is safe for concurrent
// use; the store it needs is declared here (Store).
package devices
