package vrp_test

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// writeSolomon writes in back in the Solomon layout, numbers exactly.
func writeSolomon(in *vrp.Instance) string {
	var b strings.Builder
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	fmt.Fprintf(&b, "%s\n\nVEHICLE\nNUMBER     CAPACITY\n  %d  %s\n\nCUSTOMER\nCUST NO.  XCOORD.   YCOORD.    DEMAND   READY TIME  DUE DATE   SERVICE   TIME\n\n", in.Name, in.Vehicles, g(in.Capacity))
	for _, c := range append([]vrp.Customer{in.Depot}, in.Customers...) {
		fmt.Fprintf(&b, "%5d %s %s %s %s %s %s\n", c.ID, g(c.X), g(c.Y), g(c.Demand), g(c.Ready), g(c.Due), g(c.Service))
	}
	return b.String()
}

// FuzzParseSolomon: the parser never panics, fails only with ErrSolomon,
// and what it accepts is a valid instance that reads back the same once
// written; small instances are solved too, and the plan must pass
// checkSolomon. Seeds are in testdata/fuzz/FuzzParseSolomon.
func FuzzParseSolomon(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		in, err := vrp.ParseSolomon(bytes.NewReader(data))
		if err != nil {
			if !errors.Is(err, vrp.ErrSolomon) {
				t.Fatalf("error %v does not wrap ErrSolomon", err)
			}
			return
		}
		if in.Vehicles < 1 || in.Vehicles > vrp.MaxSolomonVehicles || len(in.Customers) == 0 || in.Depot.ID != 0 {
			t.Fatalf("accepted %+v", in)
		}
		for i, c := range append([]vrp.Customer{in.Depot}, in.Customers...) {
			for _, v := range []float64{c.X, c.Y, c.Demand, c.Ready, c.Due, c.Service} {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("customer %d: %v", i, v)
				}
			}
			if c.ID != i || c.Demand < 0 || c.Ready < 0 || c.Due < c.Ready || c.Service < 0 {
				t.Fatalf("accepted customer %+v at %d", c, i)
			}
		}
		again, err := vrp.ParseSolomon(strings.NewReader(writeSolomon(in)))
		if err != nil || !reflect.DeepEqual(in, again) {
			t.Fatalf("round trip: %v\n%+v\n%+v", err, in, again)
		}
		if len(in.Customers) > 8 || in.Vehicles > 4 {
			return
		}
		pr := in.Problem()
		sol := pr.Solve(vrp.Options{TimeLimit: time.Millisecond})
		if _, _, err := checkSolomon(in, sol.Routes, len(sol.Unassigned)); err != nil {
			t.Fatalf("infeasible plan %v: %v", sol.Routes, err)
		}
	})
}
