package main

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/conformance"
)

// minSeen is how many times a computed field must be seen to be judged.
const minSeen = 3

// corpus sends requests, checks each answer against the OpenAPI document
// and tallies the computed fields it holds.
type corpus struct {
	t        *testing.T
	n        *node
	doc      map[string]any
	tally    *conformance.Tally
	patterns []pathPattern
	answers  int
	// times are the times of the answers that are not UTC to the
	// millisecond, "METHOD path: field = value" (the corpus sends its
	// own times in whole seconds and UTC, so these are the service's)
	times []string
}

type pathPattern struct {
	template string
	re       *regexp.Regexp
	params   int
}

func newCorpus(t *testing.T, n *node) *corpus {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	c := &corpus{t: t, n: n, doc: doc, tally: conformance.NewTally(doc)}
	param := regexp.MustCompile(`\\\{[^}]*\}`)
	for p := range doc["paths"].(map[string]any) {
		re := regexp.MustCompile("^" + param.ReplaceAllString(regexp.QuoteMeta(p), "[^/]+") + "$")
		c.patterns = append(c.patterns, pathPattern{template: p, re: re, params: strings.Count(p, "{")})
	}
	// a literal path wins over a template that would also match it
	sort.Slice(c.patterns, func(i, j int) bool {
		a, b := c.patterns[i], c.patterns[j]
		return a.params < b.params || a.params == b.params && a.template < b.template
	})
	return c
}

// call sends a request, requires status want, checks the answer against
// the document and tallies it; it returns the decoded answer.
func (c *corpus) call(method, path, key string, body any, want int) map[string]any {
	c.t.Helper()
	r := c.n.do(method, path, key, body)
	if r.Status != want {
		c.t.Fatalf("%s %s: %d, want %d: %.400s", method, path, r.Status, want, r.Body)
	}
	u, err := url.Parse(path)
	if err != nil {
		c.t.Fatal(err)
	}
	tmpl := ""
	for _, p := range c.patterns {
		if p.re.MatchString(u.Path) {
			tmpl = p.template
			break
		}
	}
	if tmpl == "" {
		c.t.Fatalf("%s matches no path of the document", u.Path)
	}
	op := c.doc["paths"].(map[string]any)[tmpl].(map[string]any)[strings.ToLower(method)].(map[string]any)
	checkResponse(c.t, c.doc, op, method, tmpl, r)
	spec, _ := op["responses"].(map[string]any)[strconv.Itoa(r.Status)].(map[string]any)
	content, _ := spec["content"].(map[string]any)
	js, _ := content["application/json"].(map[string]any)
	var v map[string]any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		c.t.Fatalf("%s %s: not a JSON object: %v", method, path, err)
	}
	if js != nil {
		c.tally.Observe(js["schema"].(map[string]any), v)
		c.answers++
	}
	c.times = append(c.times, offTimes(method+" "+tmpl+": ", v)...)
	return v
}

// anyTime is a string that reads as an RFC 3339 date-time.
var anyTime = regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$`)

// offTimes are the date-times of v, at any depth, that are not UTC to
// the millisecond (statedTime), each as "prefix path = value".
func offTimes(prefix string, v any) []string {
	var out []string
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				walk(strings.TrimPrefix(path+"."+k, "."), e)
			}
		case []any:
			for i, e := range x {
				walk(path+"["+strconv.Itoa(i)+"]", e)
			}
		case string:
			if anyTime.MatchString(x) && !statedTime.MatchString(x) {
				out = append(out, prefix+path+" = "+x)
			}
		}
	}
	walk("", v)
	return out
}

// fix is one generated GPS point.
type fix struct {
	speed, heading float64 // km/h, degrees
}

// drive turns a profile into 1 Hz points from (lat, lon) at t0: each fix
// moves the vehicle at its speed along its heading for the next second.
// acc is the accuracy in meters (0: none); alt the altitude of the first
// point and climb its change per point (NaN: no altitude).
func drive(t0 time.Time, lat, lon float64, fixes []fix, acc, alt, climb float64) []map[string]any {
	out := make([]map[string]any, 0, len(fixes))
	for i, f := range fixes {
		p := map[string]any{"latitude": lat, "longitude": lon, "timestamp": t0.Add(time.Duration(i) * time.Second).UTC().Format(time.RFC3339Nano),
			"speed_kmh": f.speed, "heading": f.heading}
		if acc > 0 {
			p["accuracy_meters"] = acc
		}
		if !math.IsNaN(alt) {
			p["altitude_meters"] = alt + climb*float64(i)
		}
		out = append(out, p)
		m := f.speed / 3.6
		rad := f.heading * math.Pi / 180
		lat += m * math.Cos(rad) / 111195
		lon += m * math.Sin(rad) / (111195 * math.Cos(lat*math.Pi/180))
	}
	return out
}

// ramp is n fixes going from speed a to b (heading h0 to h1) linearly.
func ramp(n int, a, b, h0, h1 float64) []fix {
	out := make([]fix, n)
	for i := range out {
		f := float64(i+1) / float64(n)
		out[i] = fix{speed: a + (b-a)*f, heading: h0 + (h1-h0)*f}
	}
	return out
}

func hold(n int, v, h float64) []fix { return ramp(n, v, v, h, h) }

func join(parts ...[]fix) []fix {
	var out []fix
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// TestNoComputedFieldIsConstant drives a varied corpus through the API
// (trips fast, slow, congested, braking hard, idling, turning, at
// different accuracies and hours; single points of different quality;
// route and safety reads before and after other trips complete; device
// settings; incidents; alerts and their acknowledgments; a stream's
// status; health; address search; a distance matrix) and fails on a
// field the OpenAPI document marks computed that kept one value across
// every answer that carried it (seen at least minSeen times): a constant
// presented as a measurement. Computed fields the corpus reaches fewer
// times are logged, so that the gaps are visible.
func TestNoComputedFieldIsConstant(t *testing.T) {
	// the gateway takes every channel but push notifications, whose
	// provider is down: those stay queued, nobody is reached through them
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err == nil && m["channel"] == "push_notification" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer gw.Close()
	cfg := testConfig(t)
	cfg.NotifyURL = gw.URL
	cfg.Addresses = addressFixture(t)
	cfg.OSM = tinyOSM(t)
	n := startNode(t, cfg)
	c := newCorpus(t, n)
	k := n.key("org-a", "test", []string{"all"}, 1000000)

	trips := corpusTrips(c, k)
	corpusEmergency(c, k, trips)
	corpusFinishTrips(c, k, trips)
	corpusDevices(c, k)
	corpusRest(c, k)

	for src, fields := range conformance.Sources(c.doc) {
		if !api.IsSource(src) {
			t.Errorf("x-fleethub-source %q (on %v) is not one of computed, measured, constant, unknown", src, fields)
		}
	}
	for _, k := range c.tally.Constants(minSeen) {
		t.Errorf("%s was %s in all %d answers that carried it: a computed field that never changes is a constant presented as a measurement", k.Field, k.Value, k.Count)
	}
	judged, rare := 0, []string{}
	for _, f := range conformance.Computed(c.doc) {
		if n := c.tally.Count(f); n >= minSeen {
			judged++
		} else {
			rare = append(rare, f+" ("+strconv.Itoa(n)+")")
		}
	}
	t.Logf("%d answers; %d computed fields judged; %d seen fewer than %d times: %s", c.answers, judged, len(rare), minSeen, strings.Join(rare, ", "))
	if judged < 80 {
		t.Errorf("only %d computed fields were seen %d times or more: the corpus no longer reaches what it should", judged, minSeen)
	}
}

// corpusTrip is a trip of the corpus and where it ended.
type corpusTrip struct {
	id, vehicle, driver string
	last                map[string]any // the last batch point
}

// corpusTrips starts four trips yesterday at different hours, uploads
// their points, single points of different quality, pauses and resumes
// them, and reads them, their routes and their safety scores.
func corpusTrips(c *corpus, k string) []*corpusTrip {
	day := time.Now().UTC().Truncate(24 * time.Hour).Add(-24 * time.Hour)
	nan := math.NaN()
	specs := []struct {
		vehicle, driver string
		hour            int
		lat             float64
		fixes           []fix
		acc, alt, climb float64
	}{
		// highway, speeding twice, climbing
		{"veh-a", "drv-1", 13, 40.0, join(ramp(40, 0, 120, 0, 0), hold(300, 125, 0), ramp(10, 125, 90, 0, 0), hold(60, 90, 0), ramp(10, 90, 125, 0, 0), hold(260, 125, 0)), 3, 200, 0.05},
		// town in the morning peak: hard braking, idling, hard acceleration, a sharp turn
		{"veh-b", "drv-2", 8, 40.5, join(ramp(20, 0, 50, 0, 0), hold(180, 50, 0), ramp(2, 50, 0, 0, 0), hold(200, 0, 0), ramp(2, 0, 40, 0, 0), hold(100, 40, 0), ramp(3, 40, 40, 0, 90), hold(160, 40, 90)), 4, nan, 0},
		// evening peak with a congested stretch, descending, poorer accuracy
		{"veh-c", "drv-2", 17, 41.0, join(ramp(20, 0, 40, 0, 0), hold(380, 40, 0), hold(200, 12, 0), hold(100, 40, 0)), 25, 300, -0.1},
		// short, at night, poor accuracy, zigzagging
		{"veh-d", "drv-3", 21, 41.5, join(hold(30, 30, 0), hold(30, 30, 90), hold(30, 30, 0), hold(30, 30, 90), hold(30, 30, 0), hold(30, 30, 90)), 60, nan, 0},
		// long and steady, a little speeding and one hard brake: a
		// small share of a long trip
		{"veh-e", "drv-1", 10, 42.0, join(ramp(30, 0, 80, 0, 0), hold(1400, 80, 0), ramp(5, 80, 115, 0, 0), hold(40, 115, 0), ramp(5, 115, 80, 0, 0),
			hold(600, 80, 0), ramp(2, 80, 46, 0, 0), ramp(10, 46, 80, 0, 0), hold(900, 80, 0)), 5, 250, 0.01},
	}
	var out []*corpusTrip
	for i, s := range specs {
		t0 := day.Add(time.Duration(s.hour) * time.Hour)
		tr := c.call("POST", "/v1/trips", k, map[string]any{"vehicle_id": s.vehicle, "driver_id": s.driver, "start_time": t0.Format(time.RFC3339),
			"start_location": map[string]any{"latitude": s.lat, "longitude": -83.0, "address": "Depot " + s.vehicle}}, 201)
		ct := &corpusTrip{id: tr["trip_id"].(string), vehicle: s.vehicle, driver: s.driver}
		pts := drive(t0.Add(time.Second), s.lat, -83.0, s.fixes, s.acc, s.alt, s.climb)
		for from := 0; from < len(pts); from += 1000 {
			c.call("POST", "/v1/locations/batch", k, map[string]any{"trip_id": ct.id, "locations": pts[from:min(from+1000, len(pts))],
				"device_info": map[string]any{"device_id": "dev-" + s.vehicle}}, 200)
		}
		ct.last = pts[len(pts)-1]
		if i < 3 {
			corpusSingles(c, k, ct, s.fixes[len(s.fixes)-1].heading, float64(i))
			corpusPauseResume(c, k, ct, float64(i))
		}
		out = append(out, ct)
	}
	for _, ct := range out {
		c.call("GET", "/v1/trips/"+ct.id, k, nil, 200)
		c.call("GET", "/v1/trips/"+ct.id+"/route?include_traffic_data=true&include_alternatives=true", k, nil, 200)
	}
	for _, ct := range append(out[:3:3], out[4]) {
		c.call("GET", "/v1/analytics/safety-score/"+ct.id, k, nil, 200)
	}
	c.call("GET", "/v1/trips", k, nil, 200) // with trips in progress
	return out
}

// corpusSingles uploads three single points after the trip's last one,
// each further off its heading and with another device report.
func corpusSingles(c *corpus, k string, ct *corpusTrip, heading, nth float64) {
	ts, err := time.Parse(time.RFC3339Nano, ct.last["timestamp"].(string))
	if err != nil {
		c.t.Fatal(err)
	}
	lat, lon := ct.last["latitude"].(float64), ct.last["longitude"].(float64)
	rad := heading * math.Pi / 180
	for i, d := range []map[string]any{
		{"accuracy_meters": 3.0, "altitude_meters": 210.0, "device_info": map[string]any{"device_id": "dev-" + ct.vehicle, "signal_strength": -60.0, "satellites_count": 12.0}},
		{"accuracy_meters": 20.0, "device_info": map[string]any{"device_id": "dev-" + ct.vehicle, "satellites_count": 3.0}},
		{"device_info": map[string]any{"device_id": "dev-" + ct.vehicle, "signal_strength": 40.0}},
	} {
		off := []float64{5, 17, 21}[i] * (1 + nth/2) // meters across the heading
		ahead := float64(20 * (i + 1))               // meters along it
		p := map[string]any{"trip_id": ct.id, "timestamp": ts.Add(time.Duration(5*(i+1)) * time.Second).Format(time.RFC3339Nano),
			"latitude":  lat + (ahead*math.Cos(rad)-off*math.Sin(rad))/111195,
			"longitude": lon + (ahead*math.Sin(rad)+off*math.Cos(rad))/(111195*math.Cos(lat*math.Pi/180)),
			"speed_kmh": 10.0 * float64(i+1), "heading": heading}
		for f, v := range d {
			p[f] = v
		}
		c.call("POST", "/v1/locations/single", k, p, 200)
	}
}

// corpusPauseResume pauses the trip where it is and resumes it km
// further north.
func corpusPauseResume(c *corpus, k string, ct *corpusTrip, km float64) {
	lat, lon := ct.last["latitude"].(float64), ct.last["longitude"].(float64)
	c.call("POST", "/v1/trips/"+ct.id+"/pause", k, map[string]any{"reason": "break", "location": map[string]any{"latitude": lat, "longitude": lon}}, 200)
	c.call("POST", "/v1/trips/"+ct.id+"/resume", k, map[string]any{"reason": "back", "location": map[string]any{"latitude": lat + (0.3+km)/111.195, "longitude": lon}}, 200)
}

// corpusFinishTrips stops the trips one by one, reading the safety scores
// in between (so that benchmarks find other trips), then lists them.
func corpusFinishTrips(c *corpus, k string, trips []*corpusTrip) {
	a, b, cc, d, e := trips[0], trips[1], trips[2], trips[3], trips[4]
	stop := func(ct *corpusTrip, status string, odo int, fuel float64) {
		c.call("POST", "/v1/trips/"+ct.id+"/stop", k, map[string]any{"completion_status": status, "odometer_reading": odo, "fuel_level_percent": fuel,
			"end_location": map[string]any{"latitude": ct.last["latitude"], "longitude": ct.last["longitude"], "address": "Yard " + ct.vehicle}}, 200)
	}
	stop(a, "completed", 12040, 61)
	stop(b, "completed", 5310, 44)
	for _, ct := range []*corpusTrip{cc, a, b} {
		c.call("GET", "/v1/analytics/safety-score/"+ct.id, k, nil, 200)
	}
	stop(cc, "completed", 880, 23)
	stop(d, "cancelled", 70, 90)
	stop(e, "completed", 20500, 35)
	c.call("GET", "/v1/analytics/safety-score/"+a.id+"?include_breakdown=false", k, nil, 200)
	for _, q := range []string{"", "?status=completed&sort=distance", "?vehicle_id=veh-b", "?driver_id=drv-2&order=asc", "?include_analytics=false"} {
		c.call("GET", "/v1/trips"+q, k, nil, 200)
	}
	for _, st := range []string{"completed", "cancelled"} {
		c.call("GET", "/v1/organizations/org-a/trips/history?status="+st, k, nil, 200)
	}
	for _, ct := range trips {
		c.call("GET", "/v1/trips/"+ct.id+"/route?include_traffic_data=true", k, nil, 200)
	}
}

// corpusEmergency reports incidents of the trips and raises alerts over
// areas that hold one, two or three of them (one on a delayed channel, so
// that its next status check is not its expiration), and acknowledges
// some.
func corpusEmergency(c *corpus, k string, trips []*corpusTrip) {
	loc := func(ct *corpusTrip) map[string]any {
		return map[string]any{"latitude": ct.last["latitude"], "longitude": ct.last["longitude"], "address": "near " + ct.vehicle}
	}
	var incidents []string
	for _, b := range []map[string]any{
		{"event_type": "crash", "severity_level": "high", "location": loc(trips[0]), "vehicle_id": trips[0].vehicle, "driver_id": trips[0].driver, "trip_id": trips[0].id},
		{"event_type": "crash", "severity_level": "moderate", "location": loc(trips[2]), "vehicle_id": trips[2].vehicle, "trip_id": trips[2].id},
		{"event_type": "crash", "severity_level": "critical", "location": loc(trips[1]), "vehicle_id": trips[1].vehicle, "airbag_deployment": true},
		{"event_type": "crash", "severity_level": "low", "location": loc(trips[3]), "vehicle_id": trips[3].vehicle, "trip_id": trips[3].id},
		{"event_type": "breakdown", "severity_level": "low", "location": loc(trips[3]), "driver_id": trips[3].driver},
	} {
		incidents = append(incidents, c.call("POST", "/v1/emergency/incidents", k, b, 201)["incident_id"].(string))
	}
	// crashes on trips whose last point is seconds old, far from the
	// alerts' areas: the corpus trips drove yesterday, and only a fresh
	// point's speed is a speed at impact
	for i, v := range []float64{35, 90} {
		vehicle, lat := "veh-crash-"+strconv.Itoa(i), 44.0+float64(i)
		t0 := time.Now().UTC().Add(-time.Minute)
		tr := c.call("POST", "/v1/trips", k, map[string]any{"vehicle_id": vehicle, "start_time": t0.Format(time.RFC3339Nano)}, 201)
		c.call("POST", "/v1/locations/batch", k, map[string]any{"trip_id": tr["trip_id"], "locations": track(t0.Add(time.Second), lat, -83, constant(v, 20))}, 200)
		c.call("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "crash", "severity_level": "high", "trip_id": tr["trip_id"],
			"location": map[string]any{"latitude": lat, "longitude": -83.0}}, 201)
	}
	c.call("PUT", "/v1/emergency/incidents/"+incidents[0]+"/status", k, map[string]any{"status": "resolved", "resolution_type": "towed", "notes": "cleared"}, 200)
	for _, id := range incidents {
		c.call("GET", "/v1/emergency/incidents/"+id, k, nil, 200)
	}
	c.call("GET", "/v1/emergency/incidents?event_type=crash", k, nil, 200)

	exp := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	// a channel is its name, or its item with a timing
	alert := func(area map[string]any, channels ...any) string {
		var ch []any
		for _, x := range channels {
			if name, ok := x.(string); ok {
				x = map[string]any{"channel": name}
			}
			ch = append(ch, x)
		}
		return c.call("POST", "/v1/emergency/alerts", k, map[string]any{"alert_type": "road_hazard", "severity": "high", "title": "Flooding", "message": "Avoid the river road",
			"affected_area": area, "target_audience": map[string]any{"include": []string{"active_drivers"}}, "delivery_channels": ch,
			"expiration": exp, "acknowledgment_required": true}, 201)["alert_id"].(string)
	}
	center := func(ct *corpusTrip) map[string]any {
		return map[string]any{"latitude": ct.last["latitude"], "longitude": ct.last["longitude"]}
	}
	box := func(ct *corpusTrip, d float64) []map[string]any {
		lat, lon := ct.last["latitude"].(float64), ct.last["longitude"].(float64)
		return []map[string]any{{"latitude": lat - d, "longitude": lon - d}, {"latitude": lat - d, "longitude": lon + d}, {"latitude": lat + d, "longitude": lon + d}, {"latitude": lat + d, "longitude": lon - d}}
	}
	one := alert(map[string]any{"type": "radius", "center": center(trips[1]), "radius_km": 15}, "in_app_alert")
	three := alert(map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.65, "longitude": -83.0}, "radius_km": 75}, "in_app_alert", "sms")
	two := alert(map[string]any{"type": "polygon", "polygon": box(trips[2], 0.6)}, map[string]any{"channel": "push_notification", "delay_minutes": 30})
	c.call("POST", "/v1/emergency/alerts/"+one+"/acknowledge", k, map[string]any{"recipient_id": trips[1].driver}, 200)
	c.call("POST", "/v1/emergency/alerts/"+three+"/acknowledge", k, map[string]any{"recipient_id": trips[0].driver}, 200)
	c.call("POST", "/v1/emergency/alerts/"+three+"/acknowledge", k, map[string]any{"recipient_id": trips[2].driver, "recipient_type": "dispatcher"}, 200)
	for _, id := range []string{one, two, three} {
		c.call("GET", "/v1/emergency/alerts/"+id, k, nil, 200)
	}
}

// corpusDevices applies settings of different intervals, data types,
// power and detection settings to five devices (the last its detection
// settings alone) and reads one back.
func corpusDevices(c *corpus, k string) {
	for i, s := range []map[string]any{
		{"telemetry_settings": map[string]any{"collection_interval_seconds": 10, "data_types": []string{"location", "camera"}, "high_frequency_events": true},
			"safety_features": map[string]any{"harsh_event_detection": map[string]any{"acceleration_threshold": 0.2, "braking_threshold": -0.25}}},
		{"telemetry_settings": map[string]any{"collection_interval_seconds": 45, "data_types": []string{"location", "audio"}},
			"power_management": map[string]any{"sleep_mode_enabled": true}},
		{"telemetry_settings": map[string]any{"collection_interval_seconds": 300},
			"power_management": map[string]any{"sleep_mode_enabled": true, "charging_optimization": true},
			"safety_features":  map[string]any{"harsh_event_detection": map[string]any{"enabled": false}}},
		{"connectivity": map[string]any{"preferred_network": "4g_lte", "roaming_enabled": false},
			"safety_features": map[string]any{"harsh_event_detection": map[string]any{"acceleration_threshold": 0.6}}},
		{"safety_features": map[string]any{"speeding_alerts": map[string]any{"threshold_over_limit": 10, "alert_frequency": "once_per_trip"}}},
	} {
		c.call("PUT", "/v1/devices/cdev-"+strconv.Itoa(i)+"/settings", k, s, 200)
	}
	c.call("GET", "/v1/devices/cdev-0/settings", k, nil, 200)
}

// corpusRest reads a stream's status, health, address searches and a
// distance matrix.
func corpusRest(c *corpus, k string) {
	s := c.call("POST", "/api/v1/streaming/events/start", k, map[string]any{"event_filters": map[string]any{"categories": []string{"safety_events"}},
		"stream_config": map[string]any{"delivery_method": "websocket"}}, 201)
	c.call("GET", "/api/v1/streaming/events/status/"+s["stream_id"].(string), k, nil, 200)
	c.call("GET", "/v1/trips/health", k, nil, 200)
	for _, q := range []string{"90-05 212th St Glen Oaks NY", "401 Aplegate Lane Westerville", "240-16 Braddock", "36 N State St Westerville OH"} {
		c.call("GET", "/v1/search?q="+url.QueryEscape(q), k, nil, 200)
	}
	c.call("POST", "/v1/routing/sources_to_targets", k, map[string]any{"sources": []map[string]any{{"lat": 40.000, "lon": -83.000}, {"lat": 40.002, "lon": -83.000}},
		"targets": []map[string]any{{"lat": 40.002, "lon": -83.000}, {"lat": 40.004, "lon": -83.000}, {"lat": 40.001, "lon": -83.001}}, "costing": "auto"}, 200)
	corpusMatch(c, k)
}

// corpusMatch matches three traces on the tiny extract's block: up Main
// Street, round the block, and up Main Street with a fix off the roads.
func corpusMatch(c *corpus, k string) {
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	trace := func(ll ...[2]float64) []map[string]any {
		var pts []map[string]any
		for i, p := range ll {
			pts = append(pts, map[string]any{"latitude": p[0], "longitude": p[1], "timestamp": t0.Add(time.Duration(3*i) * time.Second).Format(time.RFC3339), "accuracy_m": 5 + i%3})
		}
		return pts
	}
	up := [][2]float64{{40.0002, -83.00002}, {40.0005, -82.99998}, {40.0008, -83.00003}, {40.0011, -83.00001}, {40.0014, -82.99997}, {40.0017, -83.00002}}
	round := append(append([][2]float64{}, up...), [2]float64{40.00202, -83.0003}, [2]float64{40.00198, -83.0006}, [2]float64{40.00201, -83.00098},
		[2]float64{40.0015, -83.00102}, [2]float64{40.001, -83.00099}, [2]float64{40.0005, -83.00101})
	jump := append(append(append([][2]float64{}, up[:3]...), [2]float64{40.05, -83.05}), up[3:]...)
	for _, tr := range [][][2]float64{up, round, jump} {
		c.call("POST", "/api/v1/fleet/routing/match", k, map[string]any{"costing": "auto", "points": trace(tr...)}, 200)
	}
}
