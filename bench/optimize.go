package bench

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/fleet/optimization"
	"github.com/fleethub/fleethub/internal/vrp"
)

// VRPConfig drives the optimize benchmark: every instance of Dir sent
// through POST /api/v1/fleet/optimization/routes with its own matrix.
type VRPConfig struct {
	URL, Key string
	// Dir holds Solomon or Gehring–Homberger instances (*.txt) or
	// CVRPLIB instances (*.vrp), with their bks.csv.
	Dir       string
	Match     string  // a glob on instance names; "" takes every one
	TimeLimit float64 // seconds per instance (options.time_limit_seconds)
	Seed      int64
}

// VRPRow is one instance's outcome, its figures in the instance's units.
type VRPRow struct {
	Name        string
	Vehicles    int
	Distance    float64
	BKSVehicles int
	BKSDistance float64
	Seconds     float64 // the request, as the client saw it
	Unassigned  int
	Cut         bool   // the answer is not repeatable: the deadline cut the search
	Err         string // refused by the server or by the re-check
}

// Gap is the distance over the best known, in percent.
func (r VRPRow) Gap() float64 { return 100 * (r.Distance - r.BKSDistance) / r.BKSDistance }

// VRPResult is the benchmark's table.
type VRPResult struct {
	Dir       string
	TimeLimit float64
	Rows      []VRPRow
}

// instance is a benchmark instance in the terms of the request: node 0
// is the depot, 1..n the customers.
type instance struct {
	name       string
	capacity   float64
	fleet      int
	demand     []float64
	ready, due []float64 // nil without time windows
	service    []float64 // nil without time windows
	dist       func(i, j int) float64
	cvrp       bool
}

func (in *instance) nodes() int { return len(in.demand) }

// OptimizeVRP runs the benchmark, one instance at a time.
func OptimizeVRP(ctx context.Context, cfg VRPConfig) (*VRPResult, error) {
	if cfg.TimeLimit == 0 {
		cfg.TimeLimit = 2
	}
	bks, err := readBKS(filepath.Join(cfg.Dir, "bks.csv"))
	if err != nil {
		return nil, err
	}
	files, err := instanceFiles(cfg.Dir, cfg.Match)
	if err != nil {
		return nil, err
	}
	res := &VRPResult{Dir: cfg.Dir, TimeLimit: cfg.TimeLimit}
	client := &http.Client{Timeout: time.Duration(cfg.TimeLimit*float64(time.Second)) + 2*time.Minute}
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		in, err := readInstance(f)
		if err != nil {
			return nil, err
		}
		b, ok := bks[in.name]
		if !ok {
			return nil, fmt.Errorf("bench: no best-known solution for %s in bks.csv", in.name)
		}
		row := VRPRow{Name: in.name, BKSVehicles: b.vehicles, BKSDistance: b.distance}
		start := time.Now()
		routes, unassigned, repeatable, err := solveRemote(ctx, client, cfg, in)
		row.Cut = !repeatable
		row.Seconds = time.Since(start).Seconds()
		if err == nil {
			row.Unassigned = unassigned
			row.Vehicles, row.Distance, err = in.check(routes, unassigned)
		}
		if err != nil {
			row.Err = err.Error()
		}
		res.Rows = append(res.Rows, row)
	}
	return res, nil
}

type best struct {
	vehicles int
	distance float64
}

// readBKS reads bks.csv: instance,vehicles,distance,… (Solomon,
// Gehring–Homberger) or instance,dimension,capacity,bks_cost,routes
// (CVRPLIB).
func readBKS(path string) (map[string]best, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	defer f.Close()
	rd := csv.NewReader(f)
	rd.FieldsPerRecord = -1
	rows, err := rd.ReadAll()
	if err != nil || len(rows) < 2 {
		return nil, fmt.Errorf("bench: %s: %v", path, err)
	}
	vi, di := 1, 2
	if len(rows[0]) >= 5 && rows[0][3] == "bks_cost" {
		vi, di = 4, 3
	}
	out := map[string]best{}
	for _, r := range rows[1:] {
		if len(r) <= max(vi, di) {
			return nil, fmt.Errorf("bench: %s: short row %v", path, r)
		}
		v, err1 := strconv.Atoi(r[vi])
		d, err2 := strconv.ParseFloat(r[di], 64)
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("bench: %s: row %v", path, r)
		}
		out[r[0]] = best{v, d}
	}
	return out, nil
}

// instanceFiles lists the instances of dir whose names match.
func instanceFiles(dir, match string) ([]string, error) {
	var out []string
	for _, ext := range []string{".txt", ".vrp"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*"+ext))
		if err != nil {
			return nil, err
		}
		for _, f := range fs {
			name := strings.TrimSuffix(filepath.Base(f), ext)
			if ok, err := filepath.Match(match, name); match == "" || (ok && err == nil) {
				out = append(out, f)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no instances matching %q in %s", match, dir)
	}
	sort.Strings(out)
	return out, nil
}

// readInstance reads a Solomon-layout or a CVRPLIB file.
func readInstance(path string) (*instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if strings.HasSuffix(path, ".vrp") {
		c, err := vrp.ParseCVRPLIB(f)
		if err != nil {
			return nil, fmt.Errorf("bench: %s: %w", path, err)
		}
		return fromCVRP(c, strings.TrimSuffix(filepath.Base(path), ".vrp")), nil
	}
	s, err := vrp.ParseSolomon(f)
	if err != nil {
		return nil, fmt.Errorf("bench: %s: %w", path, err)
	}
	return fromSolomon(s), nil
}

func fromSolomon(s *vrp.Instance) *instance {
	all := append([]vrp.Customer{s.Depot}, s.Customers...)
	in := &instance{name: s.Name, capacity: s.Capacity, fleet: s.Vehicles}
	for _, c := range all {
		in.demand = append(in.demand, c.Demand)
		in.ready = append(in.ready, c.Ready)
		in.due = append(in.due, c.Due)
		in.service = append(in.service, c.Service)
	}
	in.dist = func(i, j int) float64 { return math.Hypot(all[i].X-all[j].X, all[i].Y-all[j].Y) }
	return in
}

// fromCVRP puts the depot first. The fleet is unlimited in CVRPLIB; the
// request offers twice the routes the instance's name promises (its
// "-kN"), at most the API's limit (optimization.MaxVehicles).
func fromCVRP(c *vrp.CVRP, name string) *instance {
	order := []int{c.Depot}
	for i := range c.Nodes {
		if i != c.Depot {
			order = append(order, i)
		}
	}
	in := &instance{name: name, capacity: c.Capacity, cvrp: true}
	for _, i := range order {
		in.demand = append(in.demand, c.Nodes[i].Demand)
	}
	in.dist = func(i, j int) float64 { return c.Dist(order[i], order[j]) }
	k := 0
	if at := strings.LastIndex(name, "-k"); at >= 0 {
		var err error
		if k, err = strconv.Atoi(name[at+2:]); err != nil {
			k = 0 // no vehicle count in the name
		}
	}
	in.fleet = min(optimization.MaxVehicles, max(2*k, 10))
	return in
}

// hms writes whole seconds as HH:MM:SS.
func hms(s float64) (string, error) {
	if s != math.Trunc(s) || s < 0 || s >= 86400 {
		return "", fmt.Errorf("time %v is not a whole second of one day", s)
	}
	n := int(s)
	return fmt.Sprintf("%02d:%02d:%02d", n/3600, n/60%60, n%60), nil
}

// request is the instance as the API takes it: one time unit is one
// second and one distance unit one kilometre, so the plan comes back in
// the instance's units. Without windows every travel time is 0 and the
// day is the shift.
func (in *instance) request(cfg VRPConfig) (map[string]any, error) {
	n := in.nodes()
	dur, dist := make([][]float64, n), make([][]float64, n)
	for i := range dist {
		dur[i], dist[i] = make([]float64, n), make([]float64, n)
		for j := range dist[i] {
			dist[i][j] = in.dist(i, j)
			if !in.cvrp {
				dur[i][j] = dist[i][j]
			}
		}
	}
	start, end := "00:00:00", "23:59:59"
	goals := []string{"minimize_distance"}
	if !in.cvrp {
		var err error
		if start, err = hms(in.ready[0]); err != nil {
			return nil, err
		}
		if end, err = hms(in.due[0]); err != nil {
			return nil, err
		}
		goals = []string{"minimize_vehicles", "minimize_distance"}
	}
	var vs, ds []map[string]any
	for v := 0; v < in.fleet; v++ {
		vs = append(vs, map[string]any{"vehicle_id": fmt.Sprintf("v%d", v), "start_index": 0, "capacity": map[string]any{"weight": in.capacity},
			"shift_start": start, "shift_end": end})
	}
	for i := 1; i < n; i++ {
		tw := map[string]any{"service_duration": 0}
		if !in.cvrp {
			e, err1 := hms(in.ready[i])
			l, err2 := hms(in.due[i])
			if err := errors.Join(err1, err2); err != nil {
				return nil, err
			}
			tw = map[string]any{"earliest": e, "latest": l, "service_duration": in.service[i] / 60}
		}
		ds = append(ds, map[string]any{"destination_id": strconv.Itoa(i), "location_index": i,
			"delivery_requirements": map[string]any{"weight": in.demand[i]}, "time_window": tw})
	}
	return map[string]any{"fleet_id": in.name, "vehicles": vs, "destinations": ds, "optimization_goals": goals,
		"matrix":  map[string]any{"durations": dur, "distances": dist},
		"options": map[string]any{"time_limit_seconds": cfg.TimeLimit, "seed": cfg.Seed}}, nil
}

// solveRemote sends the instance and returns its routes (customer node
// numbers), how many customers are unassigned and whether the answer is
// repeatable.
func solveRemote(ctx context.Context, client *http.Client, cfg VRPConfig, in *instance) ([][]int, int, bool, error) {
	body, err := in.request(cfg)
	if err != nil {
		return nil, 0, false, err
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, 0, false, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", cfg.URL+"/api/v1/fleet/optimization/routes", bytes.NewReader(b))
	if err != nil {
		return nil, 0, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-Key", cfg.Key)
	res, err := client.Do(req)
	if err != nil {
		return nil, 0, false, err
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return nil, 0, false, err
	}
	if res.StatusCode != 200 {
		return nil, 0, false, fmt.Errorf("status %d: %.300s", res.StatusCode, raw)
	}
	var ans struct {
		Data struct {
			OptimizedRoutes []struct {
				RouteSequence []struct {
					DestinationID string `json:"destination_id"`
					ActivityType  string `json:"activity_type"`
				} `json:"route_sequence"`
			} `json:"optimized_routes"`
			UnassignedDestinations []json.RawMessage `json:"unassigned_destinations"`
			OptimizationSummary    struct {
				Repeatable bool `json:"repeatable"`
			} `json:"optimization_summary"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &ans); err != nil {
		return nil, 0, false, err
	}
	var routes [][]int
	for _, r := range ans.Data.OptimizedRoutes {
		var route []int
		for _, s := range r.RouteSequence {
			if s.ActivityType != "delivery" {
				continue
			}
			k, err := strconv.Atoi(s.DestinationID)
			if err != nil {
				return nil, 0, false, fmt.Errorf("destination %q", s.DestinationID)
			}
			route = append(route, k)
		}
		routes = append(routes, route)
	}
	return routes, len(ans.Data.UnassignedDestinations), ans.Data.OptimizationSummary.Repeatable, nil
}

// eps absorbs the rounding of minutes and seconds between the server's
// arithmetic and the instance's.
const eps = 1e-6

// check re-checks routes against the instance alone: at most the fleet,
// every customer exactly once (or unassigned), each load within the
// capacity and, with windows, each service begun by its due time after
// any wait and every vehicle back by the depot's due time. It returns
// the routes used and their distance in the instance's units.
func (in *instance) check(routes [][]int, unassigned int) (int, float64, error) {
	n := in.nodes()
	seen := make([]bool, n)
	served, used, total := 0, 0, 0.0
	for ri, r := range routes {
		if len(r) == 0 {
			continue
		}
		used++
		prev, load, t := 0, 0.0, 0.0
		if in.ready != nil {
			t = in.ready[0]
		}
		for _, c := range r {
			if c < 1 || c >= n || seen[c] {
				return 0, 0, fmt.Errorf("route %d: customer %d unknown or served twice", ri, c)
			}
			seen[c] = true
			served++
			d := in.dist(prev, c)
			total += d
			load += in.demand[c]
			if in.ready != nil {
				t = math.Max(t+d, in.ready[c])
				if t > in.due[c]+eps {
					return 0, 0, fmt.Errorf("route %d: customer %d begins at %.4f, due %v", ri, c, t, in.due[c])
				}
				t += in.service[c]
			}
			prev = c
		}
		if load > in.capacity+eps {
			return 0, 0, fmt.Errorf("route %d: load %v over capacity %v", ri, load, in.capacity)
		}
		total += in.dist(prev, 0)
		if in.ready != nil && t+in.dist(prev, 0) > in.due[0]+eps {
			return 0, 0, fmt.Errorf("route %d: back at %.4f after the depot's due time %v", ri, t+in.dist(prev, 0), in.due[0])
		}
	}
	if used > in.fleet {
		return 0, 0, fmt.Errorf("%d routes for %d vehicles", used, in.fleet)
	}
	if served+unassigned != n-1 {
		return 0, 0, fmt.Errorf("%d served and %d unassigned of %d customers", served, unassigned, n-1)
	}
	return used, total, nil
}

// Print writes the table and its summary: feasibility, the instances at
// the best-known vehicle count and their mean distance gap, the mean
// vehicles over the best known and the time per instance.
func (r *VRPResult) Print(w io.Writer) {
	fmt.Fprintf(w, "optimize: %s, %v s per instance\n", r.Dir, r.TimeLimit)
	fmt.Fprintf(w, "%-14s %9s %9s %12s %12s %8s %7s  %s\n", "instance", "vehicles", "bks", "distance", "bks", "gap %", "s", "")
	var ok, atBKS, unassigned, cut int
	var gapAll, gapAt, extra, secs, worst float64
	for _, row := range r.Rows {
		secs += row.Seconds
		worst = math.Max(worst, row.Seconds)
		if row.Err != "" {
			fmt.Fprintf(w, "%-14s %9s %9d %12s %12.2f %8s %7.2f  %s\n", row.Name, "-", row.BKSVehicles, "-", row.BKSDistance, "-", row.Seconds, row.Err)
			continue
		}
		ok++
		unassigned += row.Unassigned
		gapAll += row.Gap()
		extra += float64(row.Vehicles - row.BKSVehicles)
		note := ""
		if row.Vehicles <= row.BKSVehicles {
			atBKS++
			gapAt += row.Gap()
		}
		if row.Unassigned > 0 {
			note = fmt.Sprintf("%d unassigned", row.Unassigned)
		}
		if row.Cut {
			cut++
			note = strings.TrimSpace(note + " cut")
		}
		fmt.Fprintf(w, "%-14s %9d %9d %12.2f %12.2f %+8.2f %7.2f  %s\n", row.Name, row.Vehicles, row.BKSVehicles, row.Distance, row.BKSDistance, row.Gap(), row.Seconds, note)
	}
	n := len(r.Rows)
	fmt.Fprintf(w, "%d instances, %d feasible when re-checked, %d customers unassigned, %d answers cut short by the deadline (not repeatable)\n", n, ok, unassigned, cut)
	if ok > 0 {
		fmt.Fprintf(w, "best-known vehicle count on %d of %d, mean distance gap on those %+.2f%%\n", atBKS, ok, gapAt/float64(max(atBKS, 1)))
		fmt.Fprintf(w, "mean vehicles over best known %+.2f, mean distance gap over all %+.2f%%\n", extra/float64(ok), gapAll/float64(ok))
	}
	if n > 0 {
		fmt.Fprintf(w, "time per instance: mean %.2f s, max %.2f s\n", secs/float64(n), worst)
	}
}
