package optimization

import (
	"bufio"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// loadSolomon reads a Solomon VRPTW instance into a planar problem.
func loadSolomon(tb testing.TB, name string) (*problem, int, float64) {
	tb.Helper()
	dir, _ := filepath.Abs("../../../shared/data/vrp/solomon")
	f, err := os.Open(filepath.Join(dir, name+".txt"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var nums [][]float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		row := make([]float64, 0, len(fs))
		for _, x := range fs {
			v, err := strconv.ParseFloat(x, 64)
			if err != nil {
				row = nil
				break
			}
			row = append(row, v)
		}
		if row != nil {
			nums = append(nums, row)
		}
	}
	fleet, capacity := int(nums[0][0]), nums[0][1]
	depot := nums[1]
	pr := &problem{planar: true}
	for i := 0; i < fleet; i++ {
		pr.vehicles = append(pr.vehicles, fleetVehicle{idx: i, sLat: depot[1], sLon: depot[2], eLat: depot[1], eLon: depot[2], capW: capacity,
			capV: math.Inf(1), capP: math.Inf(1), shiftStart: 0, shiftEnd: depot[5], maxDur: math.Inf(1), maxKm: math.Inf(1)})
	}
	for i, c := range nums[2:] {
		pr.stops = append(pr.stops, stop{idx: i, lat: c[1], lon: c[2], w: c[3], early: c[4], late: c[5], service: c[6], priority: 1})
	}
	bf, err := os.Open(filepath.Join(dir, "bks.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer bf.Close()
	rows, _ := csv.NewReader(bf).ReadAll()
	for _, r := range rows {
		if r[0] == name {
			v, _ := strconv.Atoi(r[1])
			d, _ := strconv.ParseFloat(r[2], 64)
			return pr, v, d
		}
	}
	tb.Fatalf("no best-known solution for %s", name)
	return nil, 0, 0
}

// TestSolomonFeasible solves real instances and checks every route
// against the instance's constraints (a solver that cheats fails here);
// the gap to the best-known solution is logged, not asserted.
func TestSolomonFeasible(t *testing.T) {
	for _, name := range []string{"C101", "R101", "RC101"} {
		pr, bksV, bksD := loadSolomon(t, name)
		routes, un, _ := pr.solve(300 * time.Millisecond)
		if len(un) != 0 {
			t.Errorf("%s: %d customers unassigned", name, len(un))
		}
		used, total := 0, 0.0
		served := map[int]bool{}
		for vi, r := range routes {
			ev := pr.eval(&pr.vehicles[vi], r)
			if !ev.ok {
				t.Fatalf("%s: route %d infeasible: %s", name, vi, ev.why)
			}
			for _, s := range r {
				if served[s] {
					t.Fatalf("%s: customer %d served twice", name, s)
				}
				served[s] = true
			}
			if len(r) > 0 {
				used++
				total += ev.km
			}
		}
		if len(served) != len(pr.stops) {
			t.Errorf("%s: served %d of %d", name, len(served), len(pr.stops))
		}
		t.Logf("%s: %d vehicles (best known %d), distance %.2f (best known %.2f, gap %+.1f%%)", name, used, bksV, total, bksD, 100*(total-bksD)/bksD)
	}
}
