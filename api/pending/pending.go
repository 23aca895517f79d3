// Package pending routes the endpoints of the interface that this release
// does not build yet. Each answers 501 with code not_implemented after
// authentication and permission checks, so clients see the final auth
// behaviour already. The README lists them.
package pending

import (
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/ratelimit"
)

type ep struct{ method, path, perm, tag, summary string }

var endpoints = []ep{
	{"POST", "/v1/trips", "trips:write", "trips", "Start a trip"},
	{"GET", "/v1/trips", "trips:read", "trips", "List trips"},
	{"GET", "/v1/trips/{trip_id}", "trips:read", "trips", "Get a trip"},
	{"POST", "/v1/trips/{trip_id}/pause", "trips:write", "trips", "Pause a trip"},
	{"POST", "/v1/trips/{trip_id}/resume", "trips:write", "trips", "Resume a paused trip"},
	{"POST", "/v1/trips/{trip_id}/stop", "trips:write", "trips", "Stop a trip"},
	{"PUT", "/v1/trips/{trip_id}/metadata", "trips:write", "trips", "Update trip metadata"},
	{"GET", "/v1/trips/{trip_id}/route", "trips:read", "trips", "Route data of a trip"},
	{"GET", "/v1/organizations/{org_id}/trips/history", "trips:read", "trips", "Organization trip history"},
	{"GET", "/v1/analytics/safety-score/{trip_id}", "analytics:read", "analytics", "Safety score analysis"},
	{"POST", "/v1/locations/batch", "locations:write", "locations", "Upload a batch of points"},
	{"POST", "/v1/locations/single", "locations:write", "locations", "Upload one point"},
	{"GET", "/v1/emergency/incidents", "emergency:read", "emergency", "List incidents"},
	{"POST", "/v1/emergency/incidents", "emergency:write", "emergency", "Report an incident"},
	{"GET", "/v1/emergency/incidents/{incident_id}", "emergency:read", "emergency", "Get an incident"},
	{"PUT", "/v1/emergency/incidents/{incident_id}/status", "emergency:write", "emergency", "Update incident status"},
	{"POST", "/v1/emergency/alerts", "emergency:write", "emergency", "Broadcast an alert"},
	{"GET", "/v1/emergency/alerts/{alert_id}", "emergency:read", "emergency", "Get an alert"},
	{"DELETE", "/v1/emergency/alerts/{alert_id}", "emergency:write", "emergency", "Cancel an alert"},
	{"POST", "/v1/emergency/alerts/{alert_id}/acknowledge", "emergency:write", "emergency", "Acknowledge an alert"},
	{"PUT", "/v1/devices/{device_id}/settings", "devices:manage", "devices", "Apply device settings"},
	{"GET", "/v1/devices/{device_id}/settings", "devices:manage", "devices", "Read device settings"},
	{"POST", "/v1/telemetry", "telemetry:write", "ingest", "Ingest telemetry messages"},
	{"POST", "/v1/events", "events:write", "ingest", "Ingest fleet events"},
	{"POST", "/api/v1/streaming/telemetry/start", "streams:manage", "streaming", "Start a telemetry stream"},
	{"POST", "/api/v1/streaming/telemetry/stop", "streams:manage", "streaming", "Stop a telemetry stream"},
	{"GET", "/api/v1/streaming/telemetry/status/{stream_id}", "streams:read", "streaming", "Telemetry stream status"},
	{"PUT", "/api/v1/streaming/telemetry/configure/{stream_id}", "streams:manage", "streaming", "Configure a telemetry stream"},
	{"POST", "/api/v1/streaming/events/start", "streams:manage", "streaming", "Start an event stream"},
	{"POST", "/api/v1/streaming/events/stop", "streams:manage", "streaming", "Stop an event stream"},
	{"GET", "/api/v1/streaming/events/status/{stream_id}", "streams:read", "streaming", "Event stream status"},
	{"PUT", "/api/v1/streaming/events/configure/{stream_id}", "streams:manage", "streaming", "Configure an event stream"},
	{"GET", "/api/v1/streaming/ws", "streams:read", "streaming", "Websocket delivery of streams"},
	{"POST", "/v1/geofences", "fleet:write", "geofences", "Create a geofence"},
	{"GET", "/v1/geofences", "fleet:read", "geofences", "List geofences"},
	{"GET", "/v1/geofences/{geofence_id}", "fleet:read", "geofences", "Get a geofence"},
	{"PUT", "/v1/geofences/{geofence_id}", "fleet:write", "geofences", "Replace a geofence"},
	{"DELETE", "/v1/geofences/{geofence_id}", "fleet:write", "geofences", "Delete a geofence"},
	{"POST", "/v1/routing/sources_to_targets", "routing:read", "routing", "Distance matrix"},
	{"POST", "/api/v1/fleet/optimization/routes", "fleet:write", "optimization", "Optimize fleet routes"},
	{"GET", "/api/v1/fleet/optimization/{optimization_id}", "fleet:read", "optimization", "Get an optimization"},
	{"PUT", "/api/v1/fleet/optimization/{optimization_id}/apply", "fleet:write", "optimization", "Apply an optimization"},
	{"GET", "/v1/autocomplete", "geocoding:read", "geocoding", "Address autocomplete"},
	{"GET", "/v1/search", "geocoding:read", "geocoding", "Address search"},
	{"GET", "/v1/validate", "geocoding:read", "geocoding", "Address validation"},
	{"GET", "/v1/api/tiles/buildings/metadata", "maps:read", "tiles", "Building tile archive metadata"},
	{"GET", "/v1/api/tiles/buildings/{z}/{x}/{y}.mvt", "maps:read", "tiles", "A building tile"},
}

// plain lists the tags whose endpoints use the plain error form.
var plain = map[string]bool{"geocoding": true, "tiles": true}

// Routes returns a 501 route for every pending endpoint not in built
// (keys are "METHOD path").
func Routes(built map[string]bool) []*api.Route {
	var out []*api.Route
	for _, e := range endpoints {
		if built[e.method+" "+e.path] {
			continue
		}
		e := e
		auth := api.AuthKey
		if plain[e.tag] || e.path == "/v1/organizations/{org_id}/trips/history" {
			auth = api.AuthKeyPlain
		}
		var params []api.Param
		for _, seg := range splitParams(e.path) {
			params = append(params, api.Param{Name: seg, In: "path", Type: "string", Required: true})
		}
		var el *ratelimit.Limit
		if e.path == "/v1/search" {
			el = &ratelimit.Limit{Rate: 1000, Burst: 1000, Window: time.Minute}
		}
		out = append(out, &api.Route{Method: e.method, Path: e.path, Permission: e.perm, Tag: e.tag, Auth: auth, EndpointLimit: el,
			Summary: e.summary + " (not implemented in this release: answers 501)", Params: params, Errors: []int{501},
			Handler: func(c *api.Ctx) error { return api.NotImplemented(e.method + " " + e.path) }})
	}
	return out
}

func splitParams(path string) []string {
	var out []string
	for i := 0; i < len(path); i++ {
		if path[i] == '{' {
			j := i + 1
			for j < len(path) && path[j] != '}' {
				j++
			}
			out = append(out, path[i+1:j])
			i = j
		}
	}
	return out
}
