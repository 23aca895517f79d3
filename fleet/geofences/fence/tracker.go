package fence

import (
	"errors"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/internal/geo"
)

// Change is a transition's direction.
type Change uint8

const (
	Enter Change = iota + 1
	Exit
)

func (c Change) String() string {
	switch c {
	case Enter:
		return "enter"
	case Exit:
		return "exit"
	}
	return "Change(" + strconv.Itoa(int(c)) + ")"
}

// Transition is a vehicle entering or leaving an area between two
// consecutive points.
type Transition struct {
	VehicleID string
	AreaID    string
	Change    Change
	At        time.Time // time of the point that crossed
	Point     Point     // the point that crossed
}

// Tracker reports the areas vehicles enter and leave. It is safe for
// concurrent use.
type Tracker struct {
	areas []tracked // immutable

	mu       sync.Mutex
	vehicles map[string]*vehicle // mu must be held
}

type tracked struct {
	Area
	ring   []Point
	minLat float64 // no point below it is inside
	maxLat float64 // no point above it is inside
}

type vehicle struct {
	inside []uint64 // bit i: in areas[i]
	at     time.Time
}

// NewTracker returns a tracker of the areas, which must be valid and have
// distinct non-empty ids. A *FieldError names the area as
// "areas[i].field".
func NewTracker(areas []Area) (*Tracker, error) {
	t := &Tracker{vehicles: make(map[string]*vehicle)}
	ids := make(map[string]int, len(areas))
	for i, a := range areas {
		prefix := "areas[" + strconv.Itoa(i) + "]."
		if err := a.Validate(); err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				return nil, err
			}
			return nil, &FieldError{Field: prefix + fe.Field, Message: fe.Message}
		}
		if a.ID == "" {
			return nil, &FieldError{Field: prefix + "id", Message: "must not be empty"}
		}
		if j, dup := ids[a.ID]; dup {
			return nil, &FieldError{Field: prefix + "id", Message: "duplicate: same as areas[" + strconv.Itoa(j) + "].id"}
		}
		ids[a.ID] = i
		ta := tracked{Area: a, ring: a.ring(), minLat: -90, maxLat: 90}
		if len(a.Polygon) > 0 {
			ta.minLat, ta.maxLat = 90, -90
			for _, p := range ta.ring {
				ta.minLat, ta.maxLat = min(ta.minLat, p.Lat), max(ta.maxLat, p.Lat)
			}
		} else {
			// A point d meters away along a meridian is d/R radians of
			// latitude away; great-circle distance is never shorter.
			d := a.Radius / geo.EarthRadius * 180 / math.Pi * (1 + 1e-9)
			ta.minLat, ta.maxLat = a.Center.Lat-d, a.Center.Lat+d
		}
		t.areas = append(t.areas, ta)
	}
	return t, nil
}

// Update records the vehicle's point at time at and returns the
// transitions since its previous point: exits, then entries, each in the
// order of the areas. The first point of a vehicle returns none; a point
// older than the previous one, or out of range, is ignored.
func (t *Tracker) Update(vehicleID string, p Point, at time.Time) []Transition {
	if !p.Valid() {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v, known := t.vehicles[vehicleID]
	if !known {
		v = &vehicle{inside: make([]uint64, (len(t.areas)+63)/64)}
		t.vehicles[vehicleID] = v
	} else if at.Before(v.at) {
		return nil
	}
	v.at = at
	var out []Transition
	var enters []int
	for i := range t.areas {
		a := &t.areas[i]
		in := p.Lat >= a.minLat && p.Lat <= a.maxLat && a.contains(p)
		word, bit := i/64, uint64(1)<<(i%64)
		was := v.inside[word]&bit != 0
		if in == was {
			continue
		}
		v.inside[word] ^= bit
		if !known {
			continue
		}
		if in {
			enters = append(enters, i)
		} else {
			out = append(out, Transition{VehicleID: vehicleID, AreaID: a.ID, Change: Exit, At: at, Point: p})
		}
	}
	for _, i := range enters {
		out = append(out, Transition{VehicleID: vehicleID, AreaID: t.areas[i].ID, Change: Enter, At: at, Point: p})
	}
	return out
}

func (a *tracked) contains(p Point) bool {
	if len(a.ring) == 0 {
		return geo.Distance(a.Center, p) <= a.Radius
	}
	return geo.InRing(a.ring, p)
}
