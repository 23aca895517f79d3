package optimization_test

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/routing"
)

// The checker's own reading of the documented rules, kept apart from the
// service's: what a vehicle provides (its restrictions and its type's).
var typeGives = map[string][]string{"truck": {"pallet", "oversized"}}

// minutesOf reads HH:MM or HH:MM:SS.
func minutesOf(t *testing.T, s string) float64 {
	t.Helper()
	parts := strings.Split(s, ":")
	if len(parts) < 2 {
		t.Fatalf("time %q", s)
	}
	var m float64
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil {
			t.Fatalf("time %q: %v", s, err)
		}
		m += float64(n) * []float64{60, 1, 1.0 / 60}[i]
	}
	return m
}

// checkPlan verifies an answer against its request body without the
// solver: every destination served once or unassigned; each route's
// vehicle provides what its destinations' special_handling needs; the
// weight within capacity; a stop reached no sooner than the matrix's
// travel from where the vehicle was and served inside its window; the
// vehicle's breaks (its windows, or the default rule) each taken once,
// in order, inside its window, for its duration, where the vehicle is;
// the weight within capacity, or with vehicle_capacity_strict false
// within 20 % over it and reported as the route's capacity_overload; the
// return within the shift; the route's distance, fuel and cost by the
// matrix and its vehicle's cost model (checkCosts). Bodies use a matrix
// (durations in seconds).
func checkPlan(t *testing.T, body, data map[string]any) {
	t.Helper()
	m := body["matrix"].(map[string]any)["durations"].([][]float64)
	vehicles := map[string]map[string]any{}
	for _, v := range body["vehicles"].([]map[string]any) {
		vehicles[v["vehicle_id"].(string)] = v
	}
	dests := map[string]map[string]any{}
	for _, d := range body["destinations"].([]map[string]any) {
		dests[d["destination_id"].(string)] = d
	}
	seen := map[string]bool{}
	for _, r := range data["optimized_routes"].([]any) {
		rv := r.(map[string]any)
		v := vehicles[rv["vehicle_id"].(string)]
		has := provides(v)
		at := v["start_index"].(int)
		shiftStart, shiftEnd := minutesOf(t, fmt.Sprint(v["shift_start"])), minutesOf(t, fmt.Sprint(v["shift_end"]))
		clock, load, breaks := shiftStart, 0.0, 0
		seq := rv["route_sequence"].([]any)
		if first, last := seq[0].(map[string]any), seq[len(seq)-1].(map[string]any); first["activity_type"] != "depot_start" || last["activity_type"] != "depot_end" ||
			minutesOf(t, first["departure_time"].(string)) != shiftStart || first["location_index"] != float64(at) {
			t.Errorf("%s: the sequence runs from %v to %v", rv["vehicle_id"], first, last)
		}
		for k, e := range seq {
			s := e.(map[string]any)
			if s["sequence"] != float64(k+1) {
				t.Errorf("%s: entry %d numbered %v", rv["vehicle_id"], k, s["sequence"])
			}
			arrive, depart := minutesOf(t, s["arrival_time"].(string)), minutesOf(t, s["departure_time"].(string))
			switch s["activity_type"] {
			case "depot_start":
				continue
			case "depot_end":
				if back := clockAfter(clock, m[at][v["start_index"].(int)]); arrive < back-0.02 || arrive > shiftEnd+0.02 {
					t.Errorf("%s: back at %v; the matrix needs until %.2f, the shift ends at %v", rv["vehicle_id"], s["arrival_time"], back, shiftEnd)
				}
				continue
			case "break":
				ws := breakWindows(t, body, v)
				if breaks >= len(ws) {
					t.Errorf("%s: break %d of %d windows", rv["vehicle_id"], breaks+1, len(ws))
					continue
				}
				w := ws[breaks]
				breaks++
				if arrive < clock-0.02 || arrive < w[0]-0.02 || depart > w[1]+0.02 || math.Abs(depart-arrive-w[2]) > 0.02 {
					t.Errorf("%s: break %d %v–%v after %v, window %v", rv["vehicle_id"], breaks, s["arrival_time"], s["departure_time"], clock, w)
				}
				clock = depart
				continue
			}
			id := s["destination_id"].(string)
			d := dests[id]
			if seen[id] {
				t.Errorf("%s served twice", id)
			}
			seen[id] = true
			loc := d["location_index"].(int)
			if need := clockAfter(clock, m[at][loc]); arrive < need-0.02 {
				t.Errorf("%s: %s reached at %v, the matrix needs until %.2f", rv["vehicle_id"], id, s["arrival_time"], need)
			}
			q, _ := d["delivery_requirements"].(map[string]any)
			if q != nil {
				load += toFloat(q["weight"])
				if sh, ok := q["special_handling"].([]string); ok {
					for _, w := range sh {
						if !has[w] {
							t.Errorf("%s serves %s, which needs %s it does not provide", rv["vehicle_id"], id, w)
						}
					}
				}
			}
			begin := depart - toFloat(s["service_duration"])
			if tw, ok := d["time_window"].(map[string]any); ok {
				if e, ok := tw["earliest"].(string); ok && begin < minutesOf(t, e)-0.02 {
					t.Errorf("%s begins at %.2f before %s", id, begin, e)
				}
				if l, ok := tw["latest"].(string); ok && begin > minutesOf(t, l)+0.02 {
					t.Errorf("%s begins at %.2f after %s", id, begin, l)
				}
			}
			clock, at = depart, loc
		}
		checkLoad(t, body, rv, v, load)
		checkCosts(t, body, rv, v)
		if back := clockAfter(clock, m[at][v["start_index"].(int)]); back > shiftEnd+0.02 {
			t.Errorf("%s back at %.2f after its shift ends at %v", rv["vehicle_id"], back, shiftEnd)
		}
		if want := len(breakWindows(t, body, v)); want != breaks {
			t.Errorf("%s takes %d breaks of %d", rv["vehicle_id"], breaks, want)
		}
	}
	checkCovered(t, data, seen, len(dests))
}

// checkCovered checks that the destinations served (seen) and the
// unassigned ones are apart and together all n of the request.
func checkCovered(t *testing.T, data map[string]any, seen map[string]bool, n int) {
	t.Helper()
	for _, u := range data["unassigned_destinations"].([]any) {
		id := u.(map[string]any)["destination_id"].(string)
		if seen[id] {
			t.Errorf("%s served and unassigned", id)
		}
		seen[id] = true
	}
	if len(seen) != n {
		t.Errorf("%d of %d destinations served or unassigned", len(seen), n)
	}
}

// provides is what vehicle v provides: its restrictions and its type's.
func provides(v map[string]any) map[string]bool {
	has := map[string]bool{}
	for _, w := range typeGives[fmt.Sprint(v["vehicle_type"])] {
		has[w] = true
	}
	if rs, ok := v["restrictions"].([]string); ok {
		for _, w := range rs {
			has[w] = true
		}
	}
	return has
}

// clockAfter is the time after leaving at clock for seconds of travel.
func clockAfter(clock, seconds float64) float64 { return clock + seconds/60 }

// breakWindows are vehicle v's breaks as [start, end, duration] minutes,
// in order: its break_windows, or the default rule with
// driver_break_requirements (where the shift, or max_route_duration
// when shorter, is longer than 8 hours, 30 minutes beginning at most 8
// hours after the shift starts and ending at least 8 hours before the
// latest return); nil without any.
func breakWindows(t *testing.T, body, v map[string]any) [][]float64 {
	if bw, ok := v["break_windows"].([]map[string]any); ok && len(bw) > 0 {
		var out [][]float64
		for _, w := range bw {
			out = append(out, []float64{minutesOf(t, w["start"].(string)), minutesOf(t, w["end"].(string)), toFloat(w["duration"])})
		}
		return out
	}
	c, _ := body["constraints"].(map[string]any)
	if c == nil || c["driver_break_requirements"] != true {
		return nil
	}
	s, e := minutesOf(t, fmt.Sprint(v["shift_start"])), minutesOf(t, fmt.Sprint(v["shift_end"]))
	if d, ok := c["max_route_duration"]; ok {
		e = math.Min(e, s+toFloat(d))
	}
	if e-s <= 8*60 {
		return nil
	}
	return [][]float64{{math.Max(s, e-8*60-30), s + 8*60 + 30, 30}}
}

// The checker's own reading of the documented cost models: litres per
// 100 km, USD per km besides fuel, USD per hour, by vehicle_type (12, 0
// and 25 for a type not listed); fuel costs 1.05 USD a litre.
var (
	typeFuel  = map[string]float64{"van": 12, "car": 8, "auto": 8, "truck": 30, "electric": 0, "bicycle": 0, "pedestrian": 0, "bus": 35, "motorcycle": 5, "other": 12}
	typePerKm = map[string]float64{"electric": 0.05}
)

// checkCosts checks route rv's total_distance against the matrix along
// its sequence, and its estimated_fuel and estimated_cost against its
// vehicle's cost model (its type's, or the figures it sets).
func checkCosts(t *testing.T, body, rv, v map[string]any) {
	t.Helper()
	dist := body["matrix"].(map[string]any)["distances"].([][]float64)
	idx := map[string]int{}
	for _, d := range body["destinations"].([]map[string]any) {
		idx[d["destination_id"].(string)] = d["location_index"].(int)
	}
	at, km := v["start_index"].(int), 0.0
	for _, e := range rv["route_sequence"].([]any) {
		if id, ok := e.(map[string]any)["destination_id"].(string); ok {
			km += dist[at][idx[id]]
			at = idx[id]
		}
	}
	km += dist[at][v["start_index"].(int)]
	typ := fmt.Sprint(v["vehicle_type"])
	fuel, ok := typeFuel[typ]
	if !ok {
		fuel = 12
	}
	perKm, perHour := typePerKm[typ], 25.0
	if x, ok := v["fuel_consumption_l_per_100km"]; ok {
		fuel = toFloat(x)
	}
	if x, ok := v["cost_per_km"]; ok {
		perKm = toFloat(x)
	}
	if x, ok := v["cost_per_hour"]; ok {
		perHour = toFloat(x)
	}
	sum := rv["route_summary"].(map[string]any)
	litres := km * fuel / 100
	cost := litres*1.05 + km*perKm + toFloat(sum["total_time"])/60*perHour
	if math.Abs(toFloat(sum["total_distance"])-km) > 0.006 || math.Abs(toFloat(sum["estimated_fuel"])-litres) > 0.006 ||
		math.Abs(toFloat(sum["estimated_cost"])-cost) > 0.02 {
		t.Errorf("%s: summary %v; the matrix gives %.3f km, the model %.3f L and %.3f USD", rv["vehicle_id"], sum, km, litres, cost)
	}
}

// checkLoad checks route rv's weight load against its vehicle v: within
// capacity, or with vehicle_capacity_strict false within 20 % over it,
// with the route's capacity_overload its excess.
func checkLoad(t *testing.T, body, rv, v map[string]any, load float64) {
	t.Helper()
	c, ok := v["capacity"].(map[string]any)
	if !ok {
		return
	}
	limit, excess := toFloat(c["weight"]), 0.0
	if load > limit {
		excess = load - limit
	}
	cs, _ := body["constraints"].(map[string]any)
	strict := cs == nil || cs["vehicle_capacity_strict"] != false
	if strict && excess > 1e-9 || !strict && load > 1.2*limit+1e-9 {
		t.Errorf("%s carries %v over %v (strict %v)", rv["vehicle_id"], load, limit, strict)
	}
	got, _ := rv["route_summary"].(map[string]any)["capacity_overload"].(map[string]any)
	if strict != (got == nil) || !strict && math.Abs(toFloat(got["weight"])-excess) > 0.01 {
		t.Errorf("%s: capacity_overload %v, load %v over %v", rv["vehicle_id"], got, load, limit)
	}
}

func toFloat(x any) float64 {
	switch v := x.(type) {
	case float64:
		return v
	case int:
		return float64(v)
	}
	return 0
}

// line is a matrix request over places on a line at xs kilometres (one
// minute a kilometre): vehicles start at the rows given, destinations
// are the other rows, each of weight 1, open all day, 5 minutes long.
func line(xs []float64, starts map[string]int) map[string]any {
	n := len(xs)
	dur, dist := make([][]float64, n), make([][]float64, n)
	for i := range xs {
		dur[i], dist[i] = make([]float64, n), make([]float64, n)
		for j := range xs {
			d := math.Abs(xs[i] - xs[j])
			dur[i][j], dist[i][j] = 60*d, d
		}
	}
	var vs, ds []map[string]any
	ids := make([]string, 0, len(starts))
	for id := range starts {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	rows := map[int]bool{}
	for _, id := range ids {
		vs = append(vs, map[string]any{"vehicle_id": id, "start_index": starts[id], "shift_start": "08:00", "shift_end": "18:00"})
		rows[starts[id]] = true
	}
	for i := range xs {
		if !rows[i] {
			ds = append(ds, map[string]any{"destination_id": fmt.Sprintf("d%d", i), "location_index": i,
				"delivery_requirements": map[string]any{"weight": 1}, "time_window": map[string]any{"service_duration": 5}})
		}
	}
	return map[string]any{"fleet_id": "f", "vehicles": vs, "destinations": ds, "matrix": map[string]any{"durations": dur, "distances": dist},
		"optimization_goals": []string{"minimize_distance"}, "options": map[string]any{"time_limit_seconds": 60, "seed": 1}}
}

// byID finds a vehicle or destination of a line body.
func byID(body map[string]any, list, key, id string) map[string]any {
	for _, x := range body[list].([]map[string]any) {
		if x[key] == id {
			return x
		}
	}
	panic(id)
}

// routeOf is the destinations vehicle id serves, in order.
func routeOf(data map[string]any, id string) []string {
	var out []string
	for _, r := range data["optimized_routes"].([]any) {
		rv := r.(map[string]any)
		if rv["vehicle_id"] != id {
			continue
		}
		for _, s := range rv["route_sequence"].([]any) {
			if st := s.(map[string]any); st["activity_type"] == "delivery" {
				out = append(out, st["destination_id"].(string))
			}
		}
	}
	return out
}

// TestCapabilities: a destination that needs refrigeration goes to the
// only refrigerated vehicle, far away, though the near one would cost
// less; one that needs a pallet goes to the truck (a truck provides
// pallets unlisted); one that needs hazmat, which no vehicle provides,
// is unassigned naming it.
func TestCapabilities(t *testing.T) {
	url := serveWork(t, nil, 2_000_000)
	// Rows: 0 the near van's depot, 1..3 destinations near it, 4 the far
	// refrigerated van's depot, 5 the far truck's depot.
	body := line([]float64{0, 1, 2, 3, 40, 50}, map[string]int{"near": 0, "cold": 4, "truck": 5})
	byID(body, "vehicles", "vehicle_id", "cold")["restrictions"] = []string{"refrigerated"}
	byID(body, "vehicles", "vehicle_id", "truck")["vehicle_type"] = "truck"
	needs := func(id string, w ...string) {
		byID(body, "destinations", "destination_id", id)["delivery_requirements"].(map[string]any)["special_handling"] = w
	}
	needs("d1", "refrigerated")
	needs("d2", "pallet")
	needs("d3", "hazmat", "refrigerated")
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	if got := routeOf(data, "cold"); !slices.Equal(got, []string{"d1"}) {
		t.Errorf("the refrigerated van serves %v, want d1", got)
	}
	if got := routeOf(data, "truck"); !slices.Equal(got, []string{"d2"}) {
		t.Errorf("the truck serves %v, want d2", got)
	}
	un := data["unassigned_destinations"].([]any)
	if len(un) != 1 {
		t.Fatalf("unassigned %v", un)
	}
	u := un[0].(map[string]any)
	if u["destination_id"] != "d3" || u["reason"] != "missing_capability" || fmt.Sprint(u["missing_capabilities"]) != "[hazmat]" {
		t.Errorf("unassigned %v: d3 lacks hazmat", u)
	}
}

// TestCapabilityRefusals: unknown words and what a vehicle type cannot
// provide are refused by name.
func TestCapabilityRefusals(t *testing.T) {
	url := serve(t, nil)
	for _, tc := range []struct {
		name  string
		edit  func(b map[string]any)
		field string
	}{
		{"unknown need", func(b map[string]any) {
			byID(b, "destinations", "destination_id", "d2")["delivery_requirements"].(map[string]any)["special_handling"] = []string{"pallet", "cold"}
		}, "destinations[1].delivery_requirements.special_handling[1]"},
		{"unknown capability", func(b map[string]any) { byID(b, "vehicles", "vehicle_id", "a")["restrictions"] = []string{"wings"} }, "vehicles[0].restrictions[0]"},
		{"bicycle pallet", func(b map[string]any) {
			v := byID(b, "vehicles", "vehicle_id", "a")
			v["vehicle_type"], v["restrictions"] = "bicycle", []string{"refrigerated", "pallet"}
		}, "vehicles[0].restrictions"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := line([]float64{0, 1, 2}, map[string]int{"a": 0})
			tc.edit(body)
			st, res := post(t, url, body)
			if st != 400 {
				t.Fatalf("status %d: %v", st, res)
			}
			want := "validation_failed"
			if strings.HasPrefix(tc.name, "unknown ") { // a value outside the field's fixed set
				want = "invalid_request"
			}
			if e := res["error"].(map[string]any); e["code"] != want || e["details"].(map[string]any)[tc.field] == nil {
				t.Errorf("error %v lacks %s", e, tc.field)
			}
		})
	}
}

// TestSequenceAndConfidence: a route runs from depot_start at the shift
// start to depot_end at the return (checkPlan), and on a problem every
// search solves alike the confidences are 1; alternative routes are not
// computed (null).
func TestSequenceAndConfidence(t *testing.T) {
	url := serveWork(t, nil, 1_000_000)
	body := line([]float64{0, 1, 2, 3}, map[string]int{"a": 0})
	byID(body, "vehicles", "vehicle_id", "a")["break_windows"] = []map[string]any{{"start": "08:00", "end": "09:00", "duration": 15}}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	checkPlan(t, body, data)
	if c := data["optimization_summary"].(map[string]any)["confidence_score"]; c != 1.0 {
		t.Errorf("confidence score %v on a problem with one best plan", c)
	}
	rv := data["optimized_routes"].([]any)[0].(map[string]any)
	d := rv["route_optimization_details"].(map[string]any)
	if d["confidence_level"] != 1.0 || d["alternative_routes"] != nil {
		t.Errorf("details %v", d)
	}
	var kinds []string
	for _, s := range rv["route_sequence"].([]any) {
		kinds = append(kinds, s.(map[string]any)["activity_type"].(string))
	}
	if len(kinds) != 6 || kinds[0] != "depot_start" || kinds[5] != "depot_end" || slices.Index(kinds, "break") < 0 {
		t.Errorf("activities %v", kinds)
	}
}

// TestTrafficRestrictions: the three avoid keys false are accepted (and
// the plan passes checkPlan); true is refused with the request's matrix
// and without a road network, each by name, and any other key as
// unknown. With a road network that can leave roads out, true prices
// travel without those roads (avoidRoads) and the routes say so.
func TestTrafficRestrictions(t *testing.T) {
	url := serveWork(t, nil, 500_000)
	body := line([]float64{0, 1, 2}, map[string]int{"a": 0})
	body["constraints"] = map[string]any{"traffic_restrictions": map[string]any{"avoid_toll_roads": false, "avoid_highways": false, "avoid_ferries": false}}
	st, res := post(t, url, body)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	checkPlan(t, body, res["data"].(map[string]any))
	depot := map[string]any{"latitude": 39.96, "longitude": -83.0}
	coords := map[string]any{"fleet_id": "f", "options": map[string]any{"time_limit_seconds": 0.1},
		"vehicles": []map[string]any{{"vehicle_id": "v", "start_location": depot}},
		"destinations": []map[string]any{
			{"destination_id": "a", "location": map[string]any{"latitude": 39.97, "longitude": -83.0}},
			{"destination_id": "b", "location": map[string]any{"latitude": 39.98, "longitude": -83.0}}}}
	flat := serveWork(t, &flatRoads{}, 500_000)
	for _, tc := range []struct {
		url  string
		body map[string]any
		key  string
		want string
	}{
		{url, body, "avoid_toll_roads", "the request's matrix"},
		{url, body, "avoid_highways", "the request's matrix"},
		{url, coords, "avoid_ferries", "needs the road network"},
		{flat, coords, "avoid_ferries", "the road network cannot"},
		{url, body, "avoid_tolls", "unknown"},
		{url, body, "avoid_unpaved", "unknown"},
	} {
		tc.body["constraints"] = map[string]any{"traffic_restrictions": map[string]any{tc.key: true}}
		st, res := post(t, tc.url, tc.body)
		if st != 400 {
			t.Fatalf("%s: status %d", tc.key, st)
		}
		e := res["error"].(map[string]any)
		if msg, _ := e["details"].(map[string]any)["constraints.traffic_restrictions."+tc.key].(string); e["code"] != "validation_failed" || !strings.HasPrefix(msg, tc.want) {
			t.Errorf("%s: error %v, want %q", tc.key, e, tc.want)
		}
	}
	roads := &avoidRoads{}
	coords["constraints"] = map[string]any{"traffic_restrictions": map[string]any{"avoid_highways": true, "avoid_ferries": true, "avoid_toll_roads": false}}
	st, res = post(t, serveWork(t, roads, 500_000), coords)
	if st != 200 {
		t.Fatalf("%d %v", st, res)
	}
	data := res["data"].(map[string]any)
	if km := metric(data, "total_distance"); km != 15 || !slices.Equal(roads.asked(), []routing.Avoid{routing.AvoidHighways | routing.AvoidFerries}) || roads.calls != 0 {
		t.Errorf("%v km (want 3 legs of 5), avoid sets asked %v, plain matrices %d", km, roads.asked(), roads.calls)
	}
	fs := data["optimized_routes"].([]any)[0].(map[string]any)["route_optimization_details"].(map[string]any)["optimization_factors"].([]any)
	if last := fs[len(fs)-1].(map[string]any); last["factor"] != "traffic_restrictions" || last["impact"] != "road network without highways+ferries" {
		t.Errorf("factors %v", fs)
	}
}

// avoidRoads is flatRoads that can leave roads out: every trip then
// takes 5 km and 6 minutes. It records the avoid sets asked.
type avoidRoads struct {
	flatRoads
	mu   sync.Mutex // the handler appends to sets, the test reads them
	sets []routing.Avoid
}

func (f *avoidRoads) MatrixAvoiding(sources, targets [][2]float64, _ routing.Costing, a routing.Avoid) [][]routing.Cost {
	f.mu.Lock()
	f.sets = append(f.sets, a)
	f.mu.Unlock()
	out := make([][]routing.Cost, len(sources))
	for i := range sources {
		out[i] = make([]routing.Cost, len(targets))
		for j := range targets {
			out[i][j] = routing.Cost{Meters: 5000, Seconds: 360, OK: true}
		}
	}
	return out
}

// asked are the avoid sets asked so far.
func (f *avoidRoads) asked() []routing.Avoid {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]routing.Avoid(nil), f.sets...)
}
