package vrp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrSolomon is wrapped by every error of ParseSolomon.
var ErrSolomon = errors.New("vrp: bad solomon instance")

// MaxSolomonVehicles bounds the fleet of a parsed instance, so that a
// hostile file cannot make Problem allocate without limit (the largest
// published instances, Gehring and Homberger's, have 250 vehicles).
const MaxSolomonVehicles = 10000

// Customer is one row of a Solomon instance.
type Customer struct {
	ID         int
	X, Y       float64
	Demand     float64
	Ready, Due float64
	Service    float64
}

// Instance is a Solomon VRPTW benchmark instance: a homogeneous fleet at
// one depot, customers with a demand, a time window and a service time,
// travel time equal to the Euclidean distance.
type Instance struct {
	Name      string
	Vehicles  int
	Capacity  float64
	Depot     Customer // the row numbered 0; Due is the horizon
	Customers []Customer
}

// ParseSolomon reads an instance in the text layout of Solomon's files:
// the name, a VEHICLE section (a NUMBER CAPACITY header and one row), a
// CUSTOMER section (a header and one row of seven integers or decimals
// per customer, the depot numbered 0 first, then 1, 2, … in order). Blank
// lines are ignored; anything else is an error wrapping ErrSolomon.
func ParseSolomon(r io.Reader) (*Instance, error) {
	sc := bufio.NewScanner(r)
	line := 0
	next := func() (string, bool) {
		for sc.Scan() {
			line++
			if s := strings.TrimSpace(sc.Text()); s != "" {
				return s, true
			}
		}
		return "", false
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrSolomon, line, fmt.Sprintf(format, args...))
	}
	expect := func(what, prefix string) error {
		s, ok := next()
		if !ok {
			return bad("%s missing", what)
		}
		if !strings.HasPrefix(strings.ToUpper(s), prefix) {
			return bad("%s expected, not %q", what, s)
		}
		return nil
	}
	var in Instance
	name, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrSolomon, err)
		}
		return nil, bad("empty")
	}
	in.Name = name
	if err := expect("VEHICLE", "VEHICLE"); err != nil {
		return nil, err
	}
	if err := expect("NUMBER CAPACITY header", "NUMBER"); err != nil {
		return nil, err
	}
	s, ok := next()
	if !ok {
		return nil, bad("vehicle row missing")
	}
	f := strings.Fields(s)
	if len(f) != 2 {
		return nil, bad("vehicle row has %d fields, not 2", len(f))
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n < 1 || n > MaxSolomonVehicles {
		return nil, bad("vehicle number %q is not an integer in 1..%d", f[0], MaxSolomonVehicles)
	}
	in.Vehicles = n
	if in.Capacity, err = number(f[1]); err != nil {
		return nil, bad("capacity: %v", err)
	}
	if err := expect("CUSTOMER", "CUSTOMER"); err != nil {
		return nil, err
	}
	if err := expect("CUST NO. header", "CUST"); err != nil {
		return nil, err
	}
	for id := 0; ; id++ {
		s, ok := next()
		if !ok {
			break
		}
		c, err := customer(s, id)
		if err != nil {
			return nil, bad("%v", err)
		}
		if id == 0 {
			in.Depot = c
		} else {
			in.Customers = append(in.Customers, c)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %w", ErrSolomon, line, err)
	}
	if len(in.Customers) == 0 {
		return nil, bad("no customers")
	}
	return &in, nil
}

// customer parses the row of customer id.
func customer(s string, id int) (Customer, error) {
	f := strings.Fields(s)
	if len(f) != 7 {
		return Customer{}, fmt.Errorf("customer row has %d fields, not 7", len(f))
	}
	if n, err := strconv.Atoi(f[0]); err != nil || n != id {
		return Customer{}, fmt.Errorf("customer number %q, expected %d", f[0], id)
	}
	var v [6]float64
	for i := range v {
		parse := number
		if i < 2 { // coordinates may be negative
			parse = finite
		}
		var err error
		if v[i], err = parse(f[i+1]); err != nil {
			return Customer{}, fmt.Errorf("customer %d: %v", id, err)
		}
	}
	c := Customer{ID: id, X: v[0], Y: v[1], Demand: v[2], Ready: v[3], Due: v[4], Service: v[5]}
	if c.Due < c.Ready {
		return Customer{}, fmt.Errorf("customer %d: due %v before ready %v", id, c.Due, c.Ready)
	}
	return c, nil
}

// finite parses a finite decimal.
func finite(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return v, nil
}

// number parses a finite, non-negative decimal.
func number(s string) (float64, error) {
	v, err := finite(s)
	if err == nil && v < 0 {
		err = fmt.Errorf("%q is negative", s)
	}
	return v, err
}

// Problem is the instance as the solver takes it: planar, one vehicle per
// fleet member leaving the depot at its ready time and back by its due
// time, capacity on weight only.
func (in *Instance) Problem() *Problem {
	p := &Problem{Planar: true, Stops: make([]Stop, 0, len(in.Customers)), Vehicles: make([]Vehicle, 0, in.Vehicles)}
	d := in.Depot
	for i := 0; i < in.Vehicles; i++ {
		p.Vehicles = append(p.Vehicles, Vehicle{StartLat: d.X, StartLon: d.Y, EndLat: d.X, EndLon: d.Y, CapWeight: in.Capacity,
			CapVolume: math.Inf(1), CapPackages: math.Inf(1), ShiftStart: d.Ready, ShiftEnd: d.Due, MaxMinutes: math.Inf(1), MaxKm: math.Inf(1)})
	}
	for _, c := range in.Customers {
		p.Stops = append(p.Stops, Stop{Lat: c.X, Lon: c.Y, Weight: c.Demand, Early: c.Ready, Late: c.Due, Service: c.Service, Priority: 1})
	}
	return p
}
