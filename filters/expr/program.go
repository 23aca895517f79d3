package expr

import (
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

// Program is a compiled stream filter. It is immutable and safe for
// concurrent use.
type Program struct {
	kind uint8 // kindEvent or kindTelemetry; 0 never matches

	// Allowed values; an empty set allows everything.
	categories, severities, priorities strset
	vehicles, drivers, geofences       strset
	fleets                             strset
	dataTypes                          strset

	loc             *time.Location
	businessHours   bool
	excludeWeekends bool

	conds []cond

	hasMinEngineTemp, hasMaxFuelLevel bool
	minEngineTemp, maxFuelLevel       float64
	hasRPMAlert, hasCoolantAlert      bool
	rpmAlert, coolantAlert            float64

	keys  IndexKeys
	never bool // the conditions contradict the selective fields: nothing matches
}

const (
	kindEvent uint8 = 1 + iota
	kindTelemetry
)

// Business hours, local time of the stream's timezone: [08:00, 18:00)
// Monday to Friday.
const (
	BusinessHoursStart = 8
	BusinessHoursEnd   = 18
)

// IndexKeys are a Program's selective fields: every message it matches
// has its vehicle id in VehicleIDs, its category in Categories (events)
// and its data type in DataTypes (telemetry), unless the list is empty,
// which means any. The lists are sorted and free of duplicates.
type IndexKeys struct {
	Kind       string
	VehicleIDs []string
	Categories []string
	DataTypes  []string
}

// Keys returns the program's selective fields for indexing. They come from
// the Spec's lists, narrowed by custom conditions that pin them with = or
// in (e.g. source.vehicle_id in [...]).
func (p *Program) Keys() IndexKeys {
	return IndexKeys{
		Kind:       p.keys.Kind,
		VehicleIDs: append([]string(nil), p.keys.VehicleIDs...),
		Categories: append([]string(nil), p.keys.Categories...),
		DataTypes:  append([]string(nil), p.keys.DataTypes...),
	}
}

// Match reports whether the message in env passes the filter. An event
// program matches only envelopes carrying an Event, a telemetry program
// only envelopes carrying a Telemetry. Match does not allocate, except
// when a time condition parses a string with a non-UTC offset.
func (p *Program) Match(env *event.Envelope) bool {
	if p == nil || env == nil || p.never {
		return false
	}
	switch p.kind {
	case kindEvent:
		if env.Event == nil {
			return false
		}
		return p.matchEvent(env, env.Event)
	case kindTelemetry:
		if env.Telemetry == nil {
			return false
		}
		return p.matchTelemetry(env, env.Telemetry)
	}
	return false
}

func (p *Program) matchEvent(env *event.Envelope, ev *event.Event) bool {
	if !p.categories.allows(ev.Category) || !p.severities.allows(ev.Severity) ||
		!p.priorities.allows(ev.Priority) || !p.vehicles.allows(ev.Source.VehicleID) ||
		!p.drivers.allows(ev.Source.DriverID) || !p.fleets.allows(ev.Source.FleetID) {
		return false
	}
	if !p.geofences.empty() && !p.inGeofence(ev) {
		return false
	}
	if p.businessHours || p.excludeWeekends {
		ts := ev.Timestamp
		if ts.IsZero() {
			ts = env.IngestedAt
		}
		if !p.inTime(ts) {
			return false
		}
	}
	return p.matchConds(env)
}

// inGeofence reports whether the event names one of the geofences, as
// location.geofence or as event_data.geofence_id (geofence events).
func (p *Program) inGeofence(ev *event.Event) bool {
	if l := ev.Location; l != nil && l.Geofence != "" && p.geofences.has(l.Geofence) {
		return true
	}
	id, ok := ev.EventData["geofence_id"].(string)
	return ok && p.geofences.has(id)
}

// inTime applies the time filters to ts in the stream's timezone. It
// looks the zone offset up once and does the calendar arithmetic itself:
// Weekday and Clock would each look it up again (a third of Match's time
// with a timezone, measured).
func (p *Program) inTime(ts time.Time) bool {
	_, offset := ts.In(p.loc).Zone()
	sec := ts.Unix() + int64(offset)
	days, secOfDay := sec/86400, sec%86400
	if secOfDay < 0 {
		days, secOfDay = days-1, secOfDay+86400
	}
	wd := time.Weekday((days%7 + 7 + 4) % 7) // 1970-01-01 was a Thursday
	weekend := wd == time.Saturday || wd == time.Sunday
	if weekend && (p.excludeWeekends || p.businessHours) {
		return false
	}
	if p.businessHours {
		h := secOfDay / 3600
		return h >= BusinessHoursStart && h < BusinessHoursEnd
	}
	return true
}

func (p *Program) matchTelemetry(env *event.Envelope, t *event.Telemetry) bool {
	if !p.vehicles.allows(t.VehicleID) || !p.dataTypes.allows(t.DataType) {
		return false
	}
	switch t.DataType {
	case "engine_diagnostics":
		if p.hasMinEngineTemp || p.hasCoolantAlert || p.hasRPMAlert {
			temp, tempOK := groupNumber(t.Data, "engine", "coolant_temp")
			if p.hasMinEngineTemp && (!tempOK || temp < p.minEngineTemp) {
				return false
			}
			if p.hasRPMAlert || p.hasCoolantAlert {
				rpm, rpmOK := groupNumber(t.Data, "engine", "rpm")
				reached := p.hasRPMAlert && rpmOK && rpm >= p.rpmAlert ||
					p.hasCoolantAlert && tempOK && temp >= p.coolantAlert
				if !reached {
					return false
				}
			}
		}
	case "fuel_system":
		if p.hasMaxFuelLevel {
			level, ok := groupNumber(t.Data, "fuel_level", "percentage")
			if !ok || level > p.maxFuelLevel {
				return false
			}
		}
	}
	return p.matchConds(env)
}

// groupNumber reads data.group.name as a number.
func groupNumber(data map[string]any, group, name string) (float64, bool) {
	g, ok := data[group].(map[string]any)
	if !ok {
		return 0, false
	}
	v := fromAny(g[name])
	return v.n, v.k == kNumber
}

func (p *Program) matchConds(env *event.Envelope) bool {
	for i := range p.conds {
		if !p.conds[i].match(env) {
			return false
		}
	}
	return true
}

// op is a condition operator.
type op uint8

const (
	opEq op = iota
	opNe
	opGt
	opGe
	opLt
	opLe
	opIn
	opContains
)

var operators = map[string]op{
	"=": opEq, "==": opEq, "!=": opNe, ">": opGt, ">=": opGe, "<": opLt, "<=": opLe,
	"in": opIn, "contains": opContains,
}

// cond is a compiled custom condition.
type cond struct {
	acc accessor
	op  op
	c   constant
	// in: string constants by exact value, and every constant that needs
	// equal (numbers, booleans, null, times).
	inStrings strset
	inOther   []constant
}

func (c *cond) match(env *event.Envelope) bool {
	v := c.acc.get(env)
	switch c.op {
	case opEq:
		return equal(v, &c.c)
	case opNe:
		return !equal(v, &c.c)
	case opGt, opGe, opLt, opLe:
		cmp, ok := compare(v, &c.c)
		if !ok {
			return false
		}
		switch c.op {
		case opGt:
			return cmp > 0
		case opGe:
			return cmp >= 0
		case opLt:
			return cmp < 0
		default:
			return cmp <= 0
		}
	case opIn:
		if v.k == kString && c.inStrings.has(v.s) {
			return true
		}
		for i := range c.inOther {
			if equal(v, &c.inOther[i]) {
				return true
			}
		}
		return false
	case opContains:
		return contains(v, &c.c)
	}
	return false
}

// strset is a set of strings: a slice while small (a scan of a few short
// strings beats hashing), a map beyond smallSet.
type strset struct {
	list []string
	m    map[string]struct{}
}

const smallSet = 8

func newStrset(list []string) strset {
	s := strset{list: sortedUnique(list)}
	if len(s.list) > smallSet {
		s.m = make(map[string]struct{}, len(s.list))
		for _, x := range s.list {
			s.m[x] = struct{}{}
		}
	}
	return s
}

func (s *strset) empty() bool { return len(s.list) == 0 }

func (s *strset) has(x string) bool {
	if s.m != nil {
		_, ok := s.m[x]
		return ok
	}
	for _, y := range s.list {
		if x == y {
			return true
		}
	}
	return false
}

// allows reports whether x passes a filter list: an empty list allows
// everything.
func (s *strset) allows(x string) bool { return s.empty() || s.has(x) }
