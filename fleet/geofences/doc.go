// Package geofences keeps an organization's circle and polygon geofences,
// served over HTTP by api/geofences: it validates a geofence's shape
// (through fleet/geofences/fence, naming the bad field), bounds its metadata
// and stores it. Vehicles entering and leaving the geofences produce
// geofence_events in fleet/geofences/crossings, which reads the same store.
//
// The service holds no state between calls and is safe for concurrent
// use; the store it needs is declared here (Store).
package geofences
