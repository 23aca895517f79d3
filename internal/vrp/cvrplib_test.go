package vrp_test

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/vrp"
)

func readCVRPLIB(tb testing.TB, path string) *vrp.CVRP {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	c, err := vrp.ParseCVRPLIB(f)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestParseCVRPLIBFixture(t *testing.T) {
	c := readCVRPLIB(t, "testdata/x7.vrp")
	if c.Name != "X7" || c.Capacity != 10 || len(c.Nodes) != 7 || c.Depot != 0 {
		t.Fatalf("%+v", c)
	}
	if want := (vrp.Node{X: 0.5, Y: -10.4, Demand: 7}); c.Nodes[6] != want {
		t.Errorf("node 7 %+v", c.Nodes[6])
	}
	// hypot(3, 4) = 5; hypot(0.5, 10.4) = 10.41… rounds to 10.
	if c.Dist(0, 1) != 5 || c.Dist(1, 0) != 5 || c.Dist(0, 6) != 10 || c.Dist(1, 4) != 10 {
		t.Errorf("distances %v %v %v", c.Dist(0, 1), c.Dist(0, 6), c.Dist(1, 4))
	}
}

func TestParseCVRPLIBErrors(t *testing.T) {
	src, err := os.ReadFile("testdata/x7.vrp")
	if err != nil {
		t.Fatal(err)
	}
	fixture := string(src)
	for _, tc := range []struct{ name, old, new, want string }{
		{"empty", fixture, "", "DIMENSION missing"},
		{"no capacity", "CAPACITY : \t10\t\n", "", "CAPACITY missing"},
		{"zero capacity", "CAPACITY : \t10", "CAPACITY : 0", "CAPACITY"},
		{"explicit weights", "EUC_2D", "EXPLICIT", "not EUC_2D"},
		{"other type", "TYPE : \tCVRP", "TYPE : TSP", "not CVRP"},
		{"dimension word", "DIMENSION : \t7", "DIMENSION : seven", "DIMENSION"},
		{"dimension one", "DIMENSION : \t7", "DIMENSION : 1", "DIMENSION"},
		{"huge dimension", "DIMENSION : \t7", "DIMENSION : 100001", "DIMENSION"},
		{"short coordinates", "7\t0.5\t-10.4\n", "", "NODE_COORD_SECTION has 6 rows"},
		{"coordinate NaN", "7\t0.5\t-10.4", "7\tNaN\t-10.4", "NaN"},
		{"ids out of order", "3\t6\t8", "4\t6\t8", "node id"},
		{"negative demand", "7\t7\t\n", "7\t-7\n", "negative"},
		{"extra demand", "7\t7\t\n", "7\t7\n8\t1\n", "more than DIMENSION"},
		{"depot not a node", "\t1\t\n\t-1", "\t8\n\t-1", "not a node"},
		{"no depot end", "\t-1\t\n", "", "not ended by -1"},
		{"section before dimension", "DIMENSION : \t7\t\n", "", "before DIMENSION"},
		{"text after EOF", "EOF\n", "EOF\nmore\n", "after EOF"},
		{"no demands", "DEMAND_SECTION", "DEPOT_SECTION", "not an integer"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(fixture, tc.old) {
				t.Fatalf("fixture lacks %q", tc.old)
			}
			_, err := vrp.ParseCVRPLIB(strings.NewReader(strings.Replace(fixture, tc.old, tc.new, 1)))
			if !errors.Is(err, vrp.ErrCVRPLIB) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// FuzzParseCVRPLIB: the parser never panics, fails only with ErrCVRPLIB,
// and what it accepts has a depot among its nodes, a positive capacity,
// finite coordinates and demands that are not negative. Seeds are in
// testdata/fuzz/FuzzParseCVRPLIB.
func FuzzParseCVRPLIB(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := vrp.ParseCVRPLIB(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, vrp.ErrCVRPLIB) {
				t.Fatalf("error %v does not wrap ErrCVRPLIB", err)
			}
			return
		}
		if c.Capacity <= 0 || len(c.Nodes) < 2 || c.Depot < 0 || c.Depot >= len(c.Nodes) {
			t.Fatalf("accepted %+v", c)
		}
		for i, n := range c.Nodes {
			if n.Demand < 0 || n.X != n.X || n.Y != n.Y || c.Dist(i, c.Depot) < 0 {
				t.Fatalf("node %d: %+v", i, n)
			}
		}
	})
}

// TestCVRPLIBShared parses every X instance of the real data set and
// prices its best-known solution with Dist: the cost must be bks.csv's,
// which checks the distance convention against the published one.
func TestCVRPLIBShared(t *testing.T) {
	dir := sharedData(t, "vrp/cvrp/uchoa-x")
	for _, r := range bksRows(t, dir) {
		name := r[0]
		dim, _ := strconv.Atoi(r[1])
		capacity, _ := strconv.ParseFloat(r[2], 64)
		cost, _ := strconv.ParseFloat(r[3], 64)
		c := readCVRPLIB(t, filepath.Join(dir, name+".vrp"))
		if len(c.Nodes) != dim || c.Capacity != capacity {
			t.Errorf("%s: %d nodes of capacity %v, bks.csv says %d and %v", name, len(c.Nodes), c.Capacity, dim, capacity)
			continue
		}
		got, err := solutionCost(c, filepath.Join(dir, name+".sol"))
		if err != nil || got != cost {
			t.Errorf("%s: best-known solution costs %v (%v), bks.csv says %v", name, got, err, cost)
		}
	}
}

// solutionCost prices a CVRPLIB solution file ("Route #k: c1 c2 …",
// customers numbered from 1 after the depot) and checks capacities.
func solutionCost(c *vrp.CVRP, path string) (float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	var total float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		head, list, ok := strings.Cut(sc.Text(), ":")
		if !ok || !strings.HasPrefix(head, "Route") {
			continue
		}
		prev, load := c.Depot, 0.0
		for _, s := range strings.Fields(list) {
			k, err := strconv.Atoi(s)
			if err != nil || k < 1 || k >= len(c.Nodes) {
				return 0, fmt.Errorf("customer %q", s)
			}
			total += c.Dist(prev, k)
			load += c.Nodes[k].Demand
			prev = k
		}
		if load > c.Capacity {
			return 0, fmt.Errorf("%s: load %v", head, load)
		}
		total += c.Dist(prev, c.Depot)
	}
	return total, sc.Err()
}
