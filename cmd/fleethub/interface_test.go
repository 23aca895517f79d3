package main

import "testing"

// interfaceEndpoints lists every endpoint the API promises its clients
// (docs/api.md and the page of each area), so none can lose its route
// unnoticed.
var interfaceEndpoints = [][2]string{
	{"POST", "/v1/trips"},
	{"GET", "/v1/trips"},
	{"GET", "/v1/trips/{trip_id}"},
	{"POST", "/v1/trips/{trip_id}/pause"},
	{"POST", "/v1/trips/{trip_id}/resume"},
	{"POST", "/v1/trips/{trip_id}/stop"},
	{"PUT", "/v1/trips/{trip_id}/metadata"},
	{"GET", "/v1/trips/{trip_id}/route"},
	{"GET", "/v1/organizations/{org_id}/trips/history"},
	{"GET", "/v1/analytics/safety-score/{trip_id}"},
	{"POST", "/v1/locations/batch"},
	{"POST", "/v1/locations/single"},
	{"GET", "/v1/emergency/incidents"},
	{"POST", "/v1/emergency/incidents"},
	{"GET", "/v1/emergency/incidents/{incident_id}"},
	{"PUT", "/v1/emergency/incidents/{incident_id}/status"},
	{"POST", "/v1/emergency/alerts"},
	{"GET", "/v1/emergency/alerts/{alert_id}"},
	{"DELETE", "/v1/emergency/alerts/{alert_id}"},
	{"POST", "/v1/emergency/alerts/{alert_id}/acknowledge"},
	{"PUT", "/v1/devices/{device_id}/settings"},
	{"GET", "/v1/devices/{device_id}/settings"},
	{"POST", "/v1/telemetry"},
	{"POST", "/v1/events"},
	{"POST", "/api/v1/streaming/telemetry/start"},
	{"POST", "/api/v1/streaming/telemetry/stop"},
	{"GET", "/api/v1/streaming/telemetry/status/{stream_id}"},
	{"PUT", "/api/v1/streaming/telemetry/configure/{stream_id}"},
	{"POST", "/api/v1/streaming/events/start"},
	{"POST", "/api/v1/streaming/events/stop"},
	{"GET", "/api/v1/streaming/events/status/{stream_id}"},
	{"PUT", "/api/v1/streaming/events/configure/{stream_id}"},
	{"GET", "/api/v1/streaming/ws"},
	{"POST", "/v1/geofences"},
	{"GET", "/v1/geofences"},
	{"GET", "/v1/geofences/{geofence_id}"},
	{"PUT", "/v1/geofences/{geofence_id}"},
	{"DELETE", "/v1/geofences/{geofence_id}"},
	{"PUT", "/v1/vehicles/{vehicle_id}"},
	{"GET", "/v1/vehicles/{vehicle_id}"},
	{"GET", "/v1/vehicles"},
	{"DELETE", "/v1/vehicles/{vehicle_id}"},
	{"POST", "/v1/routing/sources_to_targets"},
	{"POST", "/api/v1/fleet/optimization/routes"},
	{"GET", "/api/v1/fleet/optimization/{optimization_id}"},
	{"PUT", "/api/v1/fleet/optimization/{optimization_id}/apply"},
	{"GET", "/v1/autocomplete"},
	{"GET", "/v1/search"},
	{"GET", "/v1/validate"},
	{"GET", "/v1/api/tiles/buildings/metadata"},
	{"GET", "/v1/api/tiles/buildings/{z}/{x}/{y}.mvt"},
	{"GET", "/v1/api/tiles/buildings/archive.pmtiles"},
}

// TestEveryInterfaceEndpointIsRouted fails when an endpoint of the
// interface has no route (the OpenAPI test covers the other direction).
func TestEveryInterfaceEndpointIsRouted(t *testing.T) {
	n := startNode(t, testConfig(t))
	routed := map[string]bool{}
	for method, paths := range n.app.server.RouterList() {
		for _, p := range paths {
			routed[method+" "+p] = true
		}
	}
	for _, e := range interfaceEndpoints {
		if !routed[e[0]+" "+e[1]] {
			t.Errorf("%s %s is not routed", e[0], e[1])
		}
	}
}
