package vrp_test

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/vrp"
)

func TestParseSolomonFixture(t *testing.T) {
	in := readSolomon(t, "testdata/fh12.txt")
	if in.Name != "FH12" || in.Vehicles != 4 || in.Capacity != 60 || len(in.Customers) != 12 {
		t.Fatalf("%s: %d vehicles of %v, %d customers", in.Name, in.Vehicles, in.Capacity, len(in.Customers))
	}
	if want := (vrp.Customer{ID: 0, X: 50, Y: 50, Due: 400}); in.Depot != want {
		t.Errorf("depot %+v", in.Depot)
	}
	if want := (vrp.Customer{ID: 12, X: 35, Y: 15, Demand: 10, Ready: 250, Due: 330, Service: 10}); in.Customers[11] != want {
		t.Errorf("customer 12 %+v", in.Customers[11])
	}
	pr := in.Problem()
	if !pr.Planar || len(pr.Vehicles) != 4 || len(pr.Stops) != 12 {
		t.Fatalf("problem %+v", pr)
	}
	inf := math.Inf(1)
	if want := (vrp.Vehicle{StartLat: 50, StartLon: 50, EndLat: 50, EndLon: 50, CapWeight: 60, CapVolume: inf, CapPackages: inf,
		ShiftEnd: 400, MaxMinutes: inf, MaxKm: inf}); !reflect.DeepEqual(pr.Vehicles[3], want) {
		t.Errorf("vehicle %+v", pr.Vehicles[3])
	}
	if want := (vrp.Stop{Lat: 35, Lon: 15, Weight: 10, Early: 250, Late: 330, Service: 10, Priority: 1}); pr.Stops[11] != want {
		t.Errorf("stop %+v", pr.Stops[11])
	}
}

const tiny = `T1
VEHICLE
NUMBER CAPACITY
2 50
CUSTOMER
CUST NO. XCOORD. YCOORD. DEMAND READY TIME DUE DATE SERVICE TIME
0 0 0 0 0 100 0
1 -3 4.5 10 0 50 5
`

func TestParseSolomon(t *testing.T) {
	in, err := vrp.ParseSolomon(strings.NewReader(tiny))
	if err != nil {
		t.Fatal(err)
	}
	want := &vrp.Instance{Name: "T1", Vehicles: 2, Capacity: 50, Depot: vrp.Customer{Due: 100},
		Customers: []vrp.Customer{{ID: 1, X: -3, Y: 4.5, Demand: 10, Due: 50, Service: 5}}}
	if !reflect.DeepEqual(in, want) {
		t.Errorf("got %+v", in)
	}
	for _, tc := range []struct{ name, old, new, want string }{
		{"empty", tiny, "", "empty"},
		{"blank", tiny, " \n\n", "empty"},
		{"no vehicle section", "VEHICLE\n", "", "VEHICLE expected"},
		{"no vehicle row", "2 50\n", "", "vehicle row has 1 fields"},
		{"vehicle row fields", "2 50", "2 50 1", "vehicle row has 3 fields"},
		{"no vehicles", "2 50", "0 50", "vehicle number"},
		{"too many vehicles", "2 50", "10001 50", "vehicle number"},
		{"fractional vehicles", "2 50", "2.5 50", "vehicle number"},
		{"negative capacity", "2 50", "2 -1", "capacity"},
		{"infinite capacity", "2 50", "2 Inf", "capacity"},
		{"no customer section", "CUSTOMER\n", "", "CUSTOMER expected"},
		{"no customer header", "CUST NO.", "NO.", "CUST NO. header"},
		{"no customers", "1 -3 4.5 10 0 50 5\n", "", "no customers"},
		{"no depot", "0 0 0 0 0 100 0\n", "", "customer number"},
		{"out of order", "1 -3", "2 -3", "customer number \"2\", expected 1"},
		{"short row", "1 -3 4.5 10 0 50 5", "1 -3 4.5 10 0 50", "6 fields"},
		{"bad number", "1 -3 4.5 10 0 50 5", "1 -3 4.5 ten 0 50 5", "\"ten\""},
		{"NaN coordinate", "1 -3 4.5", "1 NaN 4.5", "\"NaN\""},
		{"negative demand", "1 -3 4.5 10", "1 -3 4.5 -10", "negative"},
		{"due before ready", "1 -3 4.5 10 0 50 5", "1 -3 4.5 10 60 50 5", "due 50 before ready 60"},
		{"trailing text", tiny, tiny + "END\n", "1 fields, not 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(tiny, tc.old, tc.new, 1)
			_, err := vrp.ParseSolomon(strings.NewReader(src))
			if !errors.Is(err, vrp.ErrSolomon) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}
