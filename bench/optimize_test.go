package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/optimization"
	"github.com/fleethub/fleethub/internal/vrp"
)

func TestReadInstances(t *testing.T) {
	s, err := readInstance("../internal/vrp/testdata/fh12.txt")
	if err != nil {
		t.Fatal(err)
	}
	if s.name != "FH12" || s.nodes() != 13 || s.fleet != 4 || s.capacity != 60 || s.cvrp || s.due[0] != 400 || s.dist(0, 1) != s.dist(1, 0) {
		t.Fatalf("%+v", s)
	}
	c, err := readInstance("../internal/vrp/testdata/x7.vrp")
	if err != nil {
		t.Fatal(err)
	}
	// X7 has no "-kN": a fleet of 10; hypot(3, 4) = 5.
	if c.name != "x7" || c.nodes() != 7 || c.fleet != 10 || !c.cvrp || c.dist(0, 1) != 5 || c.demand[6] != 7 {
		t.Fatalf("%+v", c)
	}
	// A fleet of twice the name's routes, within what the API takes:
	// X-n916-k207 needs 207 routes.
	f, err := os.Open("../internal/vrp/testdata/x7.vrp")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	x, err := vrp.ParseCVRPLIB(f)
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int{"X-n101-k25": 50, "X-n916-k207": optimization.MaxVehicles} {
		if got := fromCVRP(x, name).fleet; got != want {
			t.Errorf("%s: a fleet of %d, want %d", name, got, want)
		}
	}
}

func TestRequest(t *testing.T) {
	s, _ := readInstance("../internal/vrp/testdata/fh12.txt")
	body, err := s.request(VRPConfig{TimeLimit: 2, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	m := body["matrix"].(map[string]any)
	dur, dist := m["durations"].([][]float64), m["distances"].([][]float64)
	if len(dur) != 13 || len(dist[12]) != 13 || dur[1][2] != dist[1][2] || dist[1][2] != s.dist(1, 2) {
		t.Fatalf("matrix %v", m)
	}
	v := body["vehicles"].([]map[string]any)[3]
	d := body["destinations"].([]map[string]any)[11]
	tw := d["time_window"].(map[string]any)
	if v["shift_start"] != "00:00:00" || v["shift_end"] != "00:06:40" || tw["earliest"] != "00:04:10" || tw["latest"] != "00:05:30" ||
		tw["service_duration"] != 10.0/60 || d["location_index"] != 12 {
		t.Errorf("vehicle %v destination %v", v, d)
	}
	c, _ := readInstance("../internal/vrp/testdata/x7.vrp")
	body, _ = c.request(VRPConfig{TimeLimit: 5})
	d = body["destinations"].([]map[string]any)[0]
	if d["time_window"].(map[string]any)["service_duration"] != 0 || body["matrix"].(map[string]any)["durations"].([][]float64)[0][1] != 0 {
		t.Errorf("cvrp destination %v", d)
	}
	if _, err := hms(86400); err == nil {
		t.Error("a time past the day accepted")
	}
	if _, err := hms(1.5); err == nil {
		t.Error("a fraction of a second accepted")
	}
}

// TestCheck: the bench's own checker accepts a feasible plan of FH12 and
// refuses broken ones, each for its reason.
func TestCheck(t *testing.T) {
	s, _ := readInstance("../internal/vrp/testdata/fh12.txt")
	for _, tc := range []struct {
		name       string
		routes     [][]int
		unassigned int
		want       string
	}{
		{"feasible", [][]int{{10, 11, 12}, {1, 2, 3}, {4, 5, 6}, {7, 8, 9}}, 0, ""},
		{"twice", [][]int{{1, 2}, {2, 3}}, 9, "served twice"},
		{"unknown", [][]int{{13}}, 11, "unknown"},
		{"over capacity", [][]int{{4, 1, 2, 3, 7}}, 7, "over capacity"},
		{"late", [][]int{{3, 2, 1}}, 9, "customer 1 begins"},
		{"too many routes", [][]int{{1}, {2}, {3}, {4}, {5}}, 7, "5 routes"},
		{"missing", [][]int{{1}}, 0, "1 served and 0 unassigned"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			used, dist, err := s.check(tc.routes, tc.unassigned)
			if tc.want == "" {
				if err != nil || used != 4 || dist <= 0 {
					t.Fatalf("%d routes, %v: %v", used, dist, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	// The depot's horizon.
	s.due[0] = 140
	if _, _, err := s.check([][]int{{3}}, 11); err == nil || !strings.Contains(err.Error(), "due time") {
		t.Errorf("horizon: %v", err)
	}
}

func TestReadBKS(t *testing.T) {
	dir := t.TempDir()
	vrptw := filepath.Join(dir, "a.csv")
	cvrp := filepath.Join(dir, "b.csv")
	os.WriteFile(vrptw, []byte("instance,vehicles,distance,source\nC101,10,828.94,SINTEF\n"), 0o600)
	os.WriteFile(cvrp, []byte("instance,dimension,capacity,bks_cost,routes\nX-n101-k25,101,206,27591,26\n"), 0o600)
	a, err := readBKS(vrptw)
	if err != nil || a["C101"] != (best{10, 828.94}) {
		t.Errorf("%v %v", a, err)
	}
	b, err := readBKS(cvrp)
	if err != nil || b["X-n101-k25"] != (best{26, 27591}) {
		t.Errorf("%v %v", b, err)
	}
	os.WriteFile(vrptw, []byte("instance,vehicles,distance\nC101,ten,1\n"), 0o600)
	if _, err := readBKS(vrptw); err == nil {
		t.Error("a bad row accepted")
	}
}
