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
	known  []uint64 // bit i: the vehicle's side of areas[i] is known
	at     time.Time
}

func newVehicle(areas int) *vehicle {
	n := (areas + 63) / 64
	return &vehicle{inside: make([]uint64, n), known: make([]uint64, n)}
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

// Carry takes over from prev, the tracker of the same tenant before its
// areas changed, each vehicle's side of every area both trackers have
// (by id) and the time of its last point: an area that is kept, or
// changed in shape, goes on from where the vehicle was (its next point is
// judged against the area as it is now, so a vehicle that an area no
// longer holds leaves it), while an area that is new to the vehicle
// reports no transition at its next point. Carry is called before t is
// used.
func (t *Tracker) Carry(prev *Tracker) {
	if prev == nil {
		return
	}
	index := make(map[string]int, len(t.areas))
	for i, a := range t.areas {
		index[a.ID] = i
	}
	// from[j] is the index in t of prev's area j, or -1
	from := make([]int, len(prev.areas))
	for j, a := range prev.areas {
		from[j] = -1
		if i, ok := index[a.ID]; ok {
			from[j] = i
		}
	}
	prev.mu.Lock()
	defer prev.mu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	for id, pv := range prev.vehicles {
		v := newVehicle(len(t.areas))
		v.at = pv.at
		for j, i := range from {
			if i < 0 || pv.known[j/64]&(1<<(j%64)) == 0 {
				continue
			}
			v.known[i/64] |= 1 << (i % 64)
			if pv.inside[j/64]&(1<<(j%64)) != 0 {
				v.inside[i/64] |= 1 << (i % 64)
			}
		}
		t.vehicles[id] = v
	}
}

// Update records the vehicle's point at time at and returns the
// transitions since its previous point: exits, then entries, each in the
// order of the areas. The first point of a vehicle returns none, and so
// does the first point it has for an area (one added by Carry's
// tracker); a point older than the previous one, or out of range, is
// ignored.
func (t *Tracker) Update(vehicleID string, p Point, at time.Time) []Transition {
	if !p.Valid() {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	v, ok := t.vehicles[vehicleID]
	if !ok {
		v = newVehicle(len(t.areas))
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
		known := v.known[word]&bit != 0
		v.known[word] |= bit
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
