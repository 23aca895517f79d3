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

// ErrCVRPLIB is wrapped by every error of ParseCVRPLIB.
var ErrCVRPLIB = errors.New("vrp: bad cvrplib instance")

// MaxCVRPLIBDimension bounds the nodes of a parsed instance, so that a
// hostile file cannot make it allocate without limit (the largest X
// instance has 1,001).
const MaxCVRPLIBDimension = 100000

// Node is one node of a CVRPLIB instance.
type Node struct {
	X, Y   float64
	Demand float64
}

// CVRP is a capacitated vehicle routing instance in the TSPLIB layout
// of CVRPLIB: one depot, customers with a demand, an unlimited fleet of
// one capacity, EUC_2D distances (Dist).
type CVRP struct {
	Name     string
	Capacity float64
	Nodes    []Node // in file order: node id i+1 is Nodes[i]
	Depot    int    // index into Nodes
}

// Dist is CVRPLIB's distance between nodes i and j: the Euclidean
// distance rounded to the nearest integer.
func (c *CVRP) Dist(i, j int) float64 {
	return math.Round(math.Hypot(c.Nodes[i].X-c.Nodes[j].X, c.Nodes[i].Y-c.Nodes[j].Y))
}

// ParseCVRPLIB reads an instance: "KEY : value" lines (DIMENSION and
// CAPACITY required, EDGE_WEIGHT_TYPE EUC_2D when present, TYPE CVRP when
// present; others ignored), a NODE_COORD_SECTION of DIMENSION rows
// "id x y" with ids 1..DIMENSION in order, a DEMAND_SECTION of rows
// "id demand" likewise, a DEPOT_SECTION of one depot id ended by -1, and
// an optional EOF. Anything else is an error wrapping ErrCVRPLIB.
func ParseCVRPLIB(r io.Reader) (*CVRP, error) {
	sc := bufio.NewScanner(r)
	line := 0
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: line %d: %s", ErrCVRPLIB, line, fmt.Sprintf(format, args...))
	}
	var c CVRP
	dim := 0
	haveCoords, haveDemands, haveDepot := false, false, false
	section := ""
	row := 0
	for sc.Scan() {
		line++
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		f := strings.Fields(s)
		switch {
		case section == "EOF":
			return nil, bad("text after EOF")
		case s == "EOF":
			if err := sectionDone(section, row, dim, bad); err != nil {
				return nil, err
			}
			section = "EOF"
			continue
		case f[0] == "NODE_COORD_SECTION" || f[0] == "DEMAND_SECTION" || f[0] == "DEPOT_SECTION":
			if dim == 0 {
				return nil, bad("%s before DIMENSION", f[0])
			}
			if err := sectionDone(section, row, dim, bad); err != nil {
				return nil, err
			}
			section, row = f[0], 0
			switch section {
			case "NODE_COORD_SECTION":
				haveCoords = true
			case "DEMAND_SECTION":
				haveDemands = true
			default:
				haveDepot = true
			}
			continue
		case section == "" && strings.Contains(s, ":"):
			key, val, _ := strings.Cut(s, ":")
			if err := c.header(strings.TrimSpace(key), strings.TrimSpace(val), &dim); err != nil {
				return nil, bad("%v", err)
			}
			continue
		case section == "":
			return nil, bad("unexpected %q", s)
		}
		if err := c.sectionRow(section, f, &row, dim); err != nil {
			return nil, bad("%v", err)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: line %d: %w", ErrCVRPLIB, line, err)
	}
	if err := sectionDone(section, row, dim, bad); err != nil {
		return nil, err
	}
	switch {
	case dim == 0:
		return nil, bad("DIMENSION missing")
	case c.Capacity == 0:
		return nil, bad("CAPACITY missing or 0")
	case !haveCoords || !haveDemands || !haveDepot:
		return nil, bad("NODE_COORD_SECTION, DEMAND_SECTION and DEPOT_SECTION are required")
	}
	return &c, nil
}

// header reads one "KEY : value" line.
func (c *CVRP) header(key, val string, dim *int) error {
	switch key {
	case "NAME":
		c.Name = val
	case "TYPE":
		if val != "CVRP" {
			return fmt.Errorf("TYPE %q is not CVRP", val)
		}
	case "EDGE_WEIGHT_TYPE":
		if val != "EUC_2D" {
			return fmt.Errorf("EDGE_WEIGHT_TYPE %q is not EUC_2D", val)
		}
	case "DIMENSION":
		n, err := strconv.Atoi(val)
		if err != nil || n < 2 || n > MaxCVRPLIBDimension || *dim != 0 {
			return fmt.Errorf("DIMENSION %q is not one integer in 2..%d", val, MaxCVRPLIBDimension)
		}
		*dim = n
		c.Nodes = make([]Node, n)
		c.Depot = -1
	case "CAPACITY":
		v, err := number(val)
		if err != nil || v == 0 {
			return fmt.Errorf("CAPACITY %q is not a positive number", val)
		}
		c.Capacity = v
	}
	return nil
}

// sectionRow reads row *row of a section.
func (c *CVRP) sectionRow(section string, f []string, row *int, dim int) error {
	if section == "DEPOT_SECTION" {
		id, err := strconv.Atoi(f[0])
		switch {
		case len(f) != 1 || err != nil:
			return fmt.Errorf("depot %q is not an integer", strings.Join(f, " "))
		case id == -1:
			if c.Depot < 0 {
				return errors.New("no depot before -1")
			}
			*row = -1
		case *row != 0:
			return errors.New("one depot, ended by -1, is expected")
		case id < 1 || id > dim:
			return fmt.Errorf("depot %d is not a node", id)
		default:
			c.Depot = id - 1
			*row = 1
		}
		return nil
	}
	if *row >= dim {
		return fmt.Errorf("more than DIMENSION (%d) rows in %s", dim, section)
	}
	want := 3
	if section == "DEMAND_SECTION" {
		want = 2
	}
	if len(f) != want {
		return fmt.Errorf("%s row has %d fields, not %d", section, len(f), want)
	}
	if id, err := strconv.Atoi(f[0]); err != nil || id != *row+1 {
		return fmt.Errorf("node id %q, expected %d", f[0], *row+1)
	}
	n := &c.Nodes[*row]
	var err error
	if want == 2 {
		n.Demand, err = number(f[1])
	} else if n.X, err = finite(f[1]); err == nil {
		n.Y, err = finite(f[2])
	}
	if err != nil {
		return fmt.Errorf("node %d: %v", *row+1, err)
	}
	*row++
	return nil
}

// sectionDone checks that the section just read is complete.
func sectionDone(section string, row, dim int, bad func(string, ...any) error) error {
	switch section {
	case "NODE_COORD_SECTION", "DEMAND_SECTION":
		if row != dim {
			return bad("%s has %d rows, DIMENSION is %d", section, row, dim)
		}
	case "DEPOT_SECTION":
		if row != -1 {
			return bad("DEPOT_SECTION is not ended by -1")
		}
	}
	return nil
}
