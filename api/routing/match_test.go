package routing_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/apitest"
	apirouting "github.com/fleethub/fleethub/api/routing"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/fleethub/fleethub/internal/routing"
)

// key is the one key the test servers know.
var key = apitest.NewKey("all")

// testKey is its value.
var testKey = key.Key

// startServer serves h's routes over HTTP on a free port.
func startServer(t testing.TB, h *apirouting.Handlers) string {
	t.Helper()
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), key, ratelimit.NewMemory(nil))
	srv.Handle(h.Routes()...)
	a := apitest.Serve(t, srv)
	return "http://" + a
}

func post(t testing.TB, url string, body any) (int, []byte) {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", url+"/api/v1/fleet/routing/match", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", testKey)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, out
}

// lineNet is a hand-built network of straight edges in meters east (x)
// and north (y) of 40°N 83°W, each edge between the junctions of ends
// and on its road.
type lineNet struct {
	nodes int
	edges [][2][2]float64
	ends  [][2]int
	roads []routing.Road
}

const mPerDeg = 111_194.93

func toLatLon(x, y float64) (float64, float64) {
	return 40 + y/mPerDeg, -83 + x/(mPerDeg*math.Cos(40*math.Pi/180))
}

func (n lineNet) Edges() int { return len(n.edges) }
func (n lineNet) Nodes() int { return n.nodes }
func (n lineNet) EdgePoints(e int, lat, lon []float64) ([]float64, []float64) {
	for _, p := range n.edges[e] {
		a, b := toLatLon(p[0], p[1])
		lat, lon = append(lat, a), append(lon, b)
	}
	return lat, lon
}
func (n lineNet) EdgeEnds(e int) (int, int)                { return n.ends[e][0], n.ends[e][1] }
func (lineNet) EdgeOpen(int, routing.Costing) (bool, bool) { return true, true }
func (n lineNet) EdgeRoad(e int, _ bool) routing.Road      { return n.roads[e] }

// handNet: road 1 (posted 50) east from (0,0) to (1000,0), road 2 (no
// limit posted: the class default, 30) north from its end to
// (1000,1000).
var handNet = lineNet{
	nodes: 3,
	edges: [][2][2]float64{{{0, 0}, {1000, 0}}, {{1000, 0}, {1000, 1000}}},
	ends:  [][2]int{{0, 1}, {1, 2}},
	roads: []routing.Road{
		{WayID: 11, Class: routing.ClassPrimary, LimitKmh: 50, Posted: true},
		{WayID: 22, Class: routing.ClassResidential, LimitKmh: 30},
	},
}

// crossNet: a road east from (0,0) to (500,0) (way 1), on to (1000,0)
// (way 2), and a cross street north from (500,0) to (500,400) (way 3),
// all residential, posted 50.
var crossNet = lineNet{
	nodes: 4,
	edges: [][2][2]float64{{{0, 0}, {500, 0}}, {{500, 0}, {1000, 0}}, {{500, 0}, {500, 400}}},
	ends:  [][2]int{{0, 1}, {1, 2}, {1, 3}},
	roads: []routing.Road{
		{WayID: 1, Class: routing.ClassResidential, LimitKmh: 50, Posted: true},
		{WayID: 2, Class: routing.ClassResidential, LimitKmh: 50, Posted: true},
		{WayID: 3, Class: routing.ClassResidential, LimitKmh: 50, Posted: true},
	},
}

type point = map[string]any

func fix(x, y float64, at time.Time) point {
	lat, lon := toLatLon(x, y)
	return point{"latitude": lat, "longitude": lon, "timestamp": at.Format(time.RFC3339Nano), "accuracy_m": 5}
}

type matchAnswer struct {
	Success bool                 `json:"success"`
	Data    apirouting.MatchData `json:"data"`
}

// matchTrace posts pts to /match with the auto costing and returns the
// answer, failing the test unless it is a 200.
func matchTrace(t *testing.T, url string, pts []point) matchAnswer {
	t.Helper()
	status, body := post(t, url, point{"costing": "auto", "points": pts})
	if status != 200 {
		t.Fatalf("%d %s", status, body)
	}
	var a matchAnswer
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestMatchOverHTTP: a trace east along road 1 and north up road 2, a
// fix every 5 s 50 m apart, then a fix 2 km off the roads and two more
// on road 2: two matchings split at the far fix, which is reported
// unmatched and placed nowhere; the first goes road 1 (posted 50) then
// road 2 (its class default, 30) with their distances, their durations
// shared from the timestamps, and a geometry through the corner.
func TestMatchOverHTTP(t *testing.T) {
	url := startServer(t, apirouting.NewMatching(handNet))
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var pts []point
	for x := 200.0; x <= 950; x += 50 {
		pts = append(pts, fix(x, 2, t0.Add(time.Duration(len(pts))*5*time.Second)))
	}
	for y := 50.0; y <= 600; y += 50 {
		pts = append(pts, fix(1002, y, t0.Add(time.Duration(len(pts))*5*time.Second)))
	}
	far := len(pts)
	pts = append(pts, fix(3000, 3000, t0.Add(time.Duration(len(pts))*5*time.Second)))
	pts = append(pts, fix(1000, 700, t0.Add(time.Duration(len(pts))*5*time.Second)))
	pts = append(pts, fix(1000, 750, t0.Add(time.Duration(len(pts))*5*time.Second)))
	a := matchTrace(t, url, pts)
	d := a.Data
	if !a.Success || len(d.Tracepoints) != len(pts) || d.MatchedCount != len(pts)-1 || d.UnmatchedCount != 1 {
		t.Fatalf("answer %+v", a)
	}
	if tp := d.Tracepoints[far]; tp.Matched || tp.Latitude != nil || tp.WayID != nil || tp.Matching != nil {
		t.Errorf("the far fix %+v, want unmatched and placed nowhere", tp)
	}
	if len(d.Matchings) != 2 || d.Matchings[0].FirstPoint != 0 || d.Matchings[0].LastPoint != far-1 || d.Matchings[1].FirstPoint != far+1 {
		t.Fatalf("matchings %+v", d.Matchings)
	}
	m := d.Matchings[0]
	if len(m.Segments) != 2 || fmt.Sprint(m.WayIDs) != "[11 22]" {
		t.Fatalf("segments %+v", m.Segments)
	}
	s0, s1 := m.Segments[0], m.Segments[1]
	if s0.SpeedLimitKmh != 50 || s0.SpeedLimitSource != "posted" || s0.RoadClass != "primary" ||
		s1.SpeedLimitKmh != 30 || s1.SpeedLimitSource != "class_default" || s1.RoadClass != "residential" {
		t.Errorf("roads %+v / %+v", s0, s1)
	}
	// 800 m then 600 m; 5 s between fixes, the corner's 100 m shared
	// half and half: 75 + 2.5 s and 2.5 + 55 s
	if math.Abs(s0.DistanceM-800) > 5 || math.Abs(s1.DistanceM-600) > 5 || math.Abs(m.DistanceM-1400) > 5 {
		t.Errorf("distances %v + %v = %v, want 800 + 600", s0.DistanceM, s1.DistanceM, m.DistanceM)
	}
	if math.Abs(s0.DurationS-77.5) > 0.5 || math.Abs(s1.DurationS-57.5) > 0.5 || m.DurationS != 135 {
		t.Errorf("durations %v + %v = %v, want 77.5 + 57.5", s0.DurationS, s1.DurationS, m.DurationS)
	}
	corner := s0.Geometry.Coordinates[len(s0.Geometry.Coordinates)-1]
	if lat, lon := toLatLon(1000, 0); math.Abs(corner[0]-lon) > 1e-5 || math.Abs(corner[1]-lat) > 1e-5 || s0.Geometry.Type != "LineString" {
		t.Errorf("the first segment ends at %v, want the corner", corner)
	}
	if s0.Confidence <= 0 || s0.Confidence > 1 || m.Confidence <= 0.5 {
		t.Errorf("confidences %v, %v", s0.Confidence, m.Confidence)
	}
	if tp := d.Tracepoints[3]; !tp.Matched || *tp.WayID != 11 || *tp.Matching != 0 || *tp.DistanceM > 3 {
		t.Errorf("tracepoint 3 %+v", tp)
	}
}

// TestMatchRefusals: a bad trace is a 400 naming the field; without a
// road graph the answer is the matrix's 501.
func TestMatchRefusals(t *testing.T) {
	url := startServer(t, apirouting.NewMatching(handNet))
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	ok := func() []point {
		return []point{fix(100, 0, t0), fix(150, 0, t0.Add(time.Second)), fix(200, 0, t0.Add(2*time.Second))}
	}
	many := make([]point, apirouting.MaxMatchPoints+1)
	for i := range many {
		many[i] = fix(float64(i%900), 0, t0.Add(time.Duration(i)*time.Second))
	}
	cases := []struct {
		name  string
		body  point
		field string
	}{
		{"no points", point{"costing": "auto", "points": []point{}}, "points"},
		{"too many points", point{"costing": "auto", "points": many}, "points"},
		{"truck", point{"costing": "truck", "points": ok()}, "costing"},
		{"no costing", point{"points": ok()}, "costing"},
		{"latitude", point{"costing": "auto", "points": func() []point { p := ok(); p[1]["latitude"] = 91; return p }()}, "points[1].latitude"},
		{"longitude missing", point{"costing": "auto", "points": func() []point { p := ok(); delete(p[2], "longitude"); return p }()}, "points[2].longitude"},
		{"time backwards", point{"costing": "auto", "points": func() []point { p := ok(); p[2]["timestamp"] = t0.Format(time.RFC3339); return p }()}, "points[2].timestamp"},
		{"bad time", point{"costing": "auto", "points": func() []point { p := ok(); p[0]["timestamp"] = "yesterday"; return p }()}, "points[0].timestamp"},
		{"accuracy", point{"costing": "auto", "points": func() []point { p := ok(); p[0]["accuracy_m"] = 0; return p }()}, "points[0].accuracy_m"},
		{"speed", point{"costing": "auto", "points": func() []point { p := ok(); p[1]["speed_kmh"] = -3; return p }()}, "points[1].speed_kmh"},
		{"heading", point{"costing": "auto", "points": func() []point { p := ok(); p[2]["heading"] = 361; return p }()}, "points[2].heading"},
		{"heading without speed", point{"costing": "auto", "points": func() []point { p := ok(); p[0]["heading"] = 90; return p }()}, "points[0].heading"},
		{"unknown field", point{"costing": "auto", "points": ok(), "radiuses": []int{5}}, "radiuses"},
	}
	for _, c := range cases {
		status, body := post(t, url, c.body)
		var e api.ErrorBody
		if err := json.Unmarshal(body, &e); err != nil {
			t.Fatalf("%s: %s", c.name, body)
		}
		details, _ := e.Error.Details.(map[string]any)
		if status != 400 || details[c.field] == nil {
			t.Errorf("%s: %d %s, want 400 naming %s", c.name, status, body, c.field)
		}
	}
	if status, _ := post(t, url, point{"costing": "bicycle", "points": ok()}); status != 200 {
		t.Errorf("bicycle: %d", status)
	}
	none := startServer(t, apirouting.New(nil, nil))
	status, body := post(t, none, point{"costing": "auto", "points": ok()})
	if status != 501 || !strings.Contains(string(body), `"not_implemented"`) || !strings.Contains(string(body), "no road graph loaded (start with --osm)") {
		t.Errorf("without a graph: %d %s", status, body)
	}
}

// TestMatchReadsSpeedAndHeading: a car drives east past a cross street,
// a fix every 5 s; the three fixes at the junction lie 30 m up the cross
// street. Without the speed and course the device measured, some of them
// are put on the cross street; with them (43 km/h, east) none is.
func TestMatchReadsSpeedAndHeading(t *testing.T) {
	url := startServer(t, apirouting.NewMatching(crossNet))
	t0 := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	onCross := func(sensors bool) int {
		var pts []point
		for i, x := range []float64{300, 360, 420, 498, 503, 497, 560, 620, 680} {
			y := 2 * math.Sin(float64(i)*2.3)
			if x > 490 && x < 510 {
				y = 30
			}
			p := fix(x, y, t0.Add(time.Duration(i)*5*time.Second))
			p["accuracy_m"] = 8
			if sensors {
				p["speed_kmh"], p["heading"] = 43.2, 90
			}
			pts = append(pts, p)
		}
		a := matchTrace(t, url, pts)
		n := 0
		for _, tp := range a.Data.Tracepoints {
			if tp.WayID != nil && *tp.WayID == 3 {
				n++
			}
		}
		return n
	}
	plain, sensed := onCross(false), onCross(true)
	if plain == 0 {
		t.Fatalf("without speed and course no fix went onto the cross street: the test shows nothing")
	}
	if sensed != 0 {
		t.Errorf("with the car's speed and course east, %d fixes on the cross street (%d without)", sensed, plain)
	}
}
