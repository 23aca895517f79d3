package expr

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // stream timezones must not depend on the host's zoneinfo

	"github.com/fleethub/fleethub/hub/event"
)

// Compile validates a Spec and compiles it into a Program. Every error is
// a *FieldError naming the offending body field; the first one found is
// returned.
func Compile(s Spec) (*Program, error) {
	c := compiler{s: s}
	p, msg := c.compile()
	if msg != "" {
		return nil, &FieldError{Field: c.field, Message: msg}
	}
	return p, nil
}

// compiler carries the path of the field under validation.
type compiler struct {
	s     Spec
	paths paths
	field string
}

// fail records the failing field and returns its message.
func (c *compiler) fail(field, msg string) string {
	c.field = field
	return msg
}

func (c *compiler) compile() (*Program, string) {
	s := &c.s
	p := &Program{}
	var fields map[string]field
	switch s.Kind {
	case KindEvent:
		p.kind, c.paths, fields = kindEvent, eventPaths, eventFields
		if msg := c.noTelemetryFields(); msg != "" {
			return nil, msg
		}
	case KindTelemetry:
		p.kind, c.paths, fields = kindTelemetry, telemetryPaths, telemetryFields
		if msg := c.noEventFields(); msg != "" {
			return nil, msg
		}
	default:
		return nil, c.fail("kind", "unknown stream kind "+strconv.Quote(s.Kind)+" (one of event, telemetry)")
	}
	lists := []struct {
		dst   *strset
		list  []string
		path  string
		enum  []string
		label string
	}{
		{&p.categories, s.Categories, c.paths.categories, event.Categories, "category"},
		{&p.severities, s.Severities, c.paths.severities, event.Severities, "severity"},
		{&p.priorities, s.Priorities, c.paths.priorities, event.Priorities, "priority"},
		{&p.vehicles, s.VehicleIDs, c.paths.vehicles, nil, "vehicle id"},
		{&p.drivers, s.DriverIDs, c.paths.drivers, nil, "driver id"},
		{&p.geofences, s.Geofences, c.paths.geofences, nil, "geofence"},
		{&p.fleets, s.FleetIDs, c.paths.fleets, nil, "fleet id"},
		{&p.dataTypes, s.DataTypes, c.paths.dataTypes, event.DataTypes, "data type"},
	}
	for _, l := range lists {
		for i, x := range l.list {
			if l.enum != nil && !slices.Contains(l.enum, x) {
				return nil, c.fail(index(l.path, i), refusal(l.enum, l.label, x))
			}
			if x == "" {
				return nil, c.fail(index(l.path, i), "must not be empty")
			}
		}
		*l.dst = newStrset(l.list)
	}

	p.loc = time.UTC
	if s.Timezone != "" {
		if s.Timezone == "Local" {
			return nil, c.fail(c.paths.timezone, `must be an IANA time zone name such as "Europe/Berlin", not "Local"`)
		}
		loc, err := time.LoadLocation(s.Timezone)
		if err != nil {
			return nil, c.fail(c.paths.timezone, "unknown time zone "+strconv.Quote(s.Timezone))
		}
		p.loc = loc
	}
	p.businessHours, p.excludeWeekends = s.BusinessHoursOnly, s.ExcludeWeekends

	if msg := c.telemetryFilters(p); msg != "" {
		return nil, msg
	}

	if len(s.Conditions) > MaxConditions {
		return nil, c.fail(c.paths.conditions, "at most "+strconv.Itoa(MaxConditions)+" conditions")
	}
	kindName := s.Kind
	for i := range s.Conditions {
		cd, msg := c.condition(fields, kindName, i)
		if msg != "" {
			return nil, msg
		}
		p.conds = append(p.conds, cd)
	}
	c.indexKeys(p)
	return p, ""
}

func (c *compiler) noTelemetryFields() string {
	s := &c.s
	switch {
	case len(s.DataTypes) > 0:
		return c.fail(c.paths.dataTypes, "only for telemetry streams")
	case s.MinEngineTemp != nil:
		return c.fail(c.paths.minEngineTemp, "only for telemetry streams")
	case s.MaxFuelLevel != nil:
		return c.fail(c.paths.maxFuelLevel, "only for telemetry streams")
	case len(s.AlertThresholds) > 0:
		return c.fail(c.paths.alertThresholds, "only for telemetry streams")
	}
	return ""
}

func (c *compiler) noEventFields() string {
	s := &c.s
	p := &c.paths
	for _, f := range []struct {
		set  bool
		path string
	}{
		{len(s.Categories) > 0, p.categories},
		{len(s.Severities) > 0, p.severities},
		{len(s.Priorities) > 0, p.priorities},
		{len(s.DriverIDs) > 0, p.drivers},
		{len(s.Geofences) > 0, p.geofences},
		{len(s.FleetIDs) > 0, p.fleets},
		{s.BusinessHoursOnly, p.businessHours},
		{s.ExcludeWeekends, p.excludeWeekends},
		{s.Timezone != "", p.timezone},
	} {
		if f.set {
			return c.fail(f.path, "only for event streams")
		}
	}
	return ""
}

func (c *compiler) telemetryFilters(p *Program) string {
	s := &c.s
	if v := s.MinEngineTemp; v != nil {
		if !finite(*v) {
			return c.fail(c.paths.minEngineTemp, "must be a finite number")
		}
		p.hasMinEngineTemp, p.minEngineTemp = true, *v
	}
	if v := s.MaxFuelLevel; v != nil {
		if !finite(*v) || *v < 0 || *v > 100 {
			return c.fail(c.paths.maxFuelLevel, "must be a percentage from 0 to 100")
		}
		p.hasMaxFuelLevel, p.maxFuelLevel = true, *v
	}
	names := make([]string, 0, len(s.AlertThresholds))
	for k := range s.AlertThresholds {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		v := s.AlertThresholds[k]
		path := c.paths.alertThresholds + "." + k
		if !finite(v) {
			return c.fail(path, "must be a finite number")
		}
		switch k {
		case ThresholdEngineRPM:
			if v < 0 {
				return c.fail(path, "must not be negative")
			}
			p.hasRPMAlert, p.rpmAlert = true, v
		case ThresholdCoolantTemp:
			p.hasCoolantAlert, p.coolantAlert = true, v
		default:
			return c.fail(path, "unknown alert threshold "+strconv.Quote(k)+oneOf([]string{ThresholdEngineRPM, ThresholdCoolantTemp}))
		}
	}
	return ""
}

// condition compiles custom condition i.
func (c *compiler) condition(fields map[string]field, kindName string, i int) (cond, string) {
	in := c.s.Conditions[i]
	path := index(c.paths.conditions, i)
	acc, msg := resolve(fields, kindName, in.Field)
	if msg != "" {
		return cond{}, c.fail(path+".field", msg)
	}
	o, ok := operators[in.Operator]
	if !ok {
		return cond{}, c.fail(path+".operator", refusal([]string{"=", "==", "!=", ">", ">=", "<", "<=", "in", "contains"}, "operator", in.Operator))
	}
	cd := cond{acc: acc, op: o}
	vpath := path + ".value"
	switch o {
	case opEq, opNe:
		k, ok := constOf(in.Value)
		if !ok {
			return cond{}, c.fail(vpath, "must be a string, number, boolean or null")
		}
		if msg := checkEqual(acc.f, &k); msg != "" {
			return cond{}, c.fail(vpath, msg)
		}
		cd.c = k
	case opGt, opGe, opLt, opLe:
		if acc.f.typ == ftString && acc.f.enum != nil {
			return cond{}, c.fail(path+".operator", "ordering operators (> >= < <=) do not apply to "+in.Field+", one of a set of values: use =, != or in")
		}
		k, ok := constOf(in.Value)
		if acc.f.typ == ftString && (!ok || !k.isTime) {
			return cond{}, c.fail(path+".operator", "ordering operators (> >= < <=) do not apply to "+in.Field+", a string, except to compare an RFC3339 time it holds with a time value: use =, !=, in or contains")
		}
		if !ok || k.k != kNumber && !k.isTime {
			return cond{}, c.fail(vpath, "ordering operators need a number or an RFC3339 time")
		}
		switch {
		case acc.f.typ == ftNumber && k.k != kNumber:
			return cond{}, c.fail(vpath, "must be a number: "+in.Field+" is a number")
		case acc.f.typ == ftTime && !k.isTime:
			return cond{}, c.fail(vpath, "must be an RFC3339 time: "+in.Field+" is a time")
		}
		cd.c = k
	case opIn:
		list, ok := toSlice(in.Value)
		if !ok {
			return cond{}, c.fail(vpath, "in needs an array")
		}
		if len(list) > MaxValues {
			return cond{}, c.fail(vpath, "at most "+strconv.Itoa(MaxValues)+" values")
		}
		var strs []string
		for j, x := range list {
			k, ok := constOf(x)
			if !ok {
				return cond{}, c.fail(index(vpath, j), "must be a string, number, boolean or null")
			}
			if msg := checkEqual(acc.f, &k); msg != "" {
				return cond{}, c.fail(index(vpath, j), msg)
			}
			if k.k == kString {
				strs = append(strs, k.s)
			}
			if k.k != kString || k.isTime {
				cd.inOther = append(cd.inOther, k)
			}
		}
		cd.inStrings = newStrset(strs)
	case opContains:
		k, ok := constOf(in.Value)
		if !ok || k.k == kNull {
			return cond{}, c.fail(vpath, "contains needs a string, number or boolean")
		}
		switch acc.f.typ {
		case ftNumber, ftTime:
			return cond{}, c.fail(path+".operator", "contains needs a string or array field: "+in.Field+" is not")
		case ftString:
			if k.k != kString {
				return cond{}, c.fail(vpath, "must be a string: "+in.Field+" is a string")
			}
		}
		cd.c = k
	}
	return cd, ""
}

// checkEqual checks an equality constant against a field's static type.
func checkEqual(f field, k *constant) string {
	if k.k == kNull {
		return ""
	}
	switch f.typ {
	case ftString:
		if k.k != kString {
			return "must be a string"
		}
		if f.enum != nil && !slices.Contains(f.enum, k.s) {
			return refusal(f.enum, "value", k.s)
		}
	case ftNumber:
		if k.k != kNumber {
			return "must be a number"
		}
	case ftTime:
		if !k.isTime {
			return "must be an RFC3339 time"
		}
	}
	return ""
}

// toSlice accepts the array types a decoder or a Go caller produces.
func toSlice(v any) ([]any, bool) {
	switch v := v.(type) {
	case []any:
		return v, true
	case []string:
		return anySlice(v), true
	case []float64:
		return anySlice(v), true
	case []int:
		return anySlice(v), true
	case []int64:
		return anySlice(v), true
	case []bool:
		return anySlice(v), true
	}
	return nil, false
}

func anySlice[T any](s []T) []any {
	out := make([]any, len(s))
	for i, x := range s {
		out[i] = x
	}
	return out
}

// indexKeys sets p.keys: the Spec's lists, narrowed by conditions that
// pin the same fields with = or in.
func (c *compiler) indexKeys(p *Program) {
	var vehicleField, secondField string
	vehicles, second := p.vehicles.list, p.categories.list
	switch p.kind {
	case kindEvent:
		p.keys.Kind = KindEvent
		vehicleField, secondField = "source.vehicle_id", "category"
	case kindTelemetry:
		p.keys.Kind = KindTelemetry
		vehicleField, secondField = "vehicle_id", "data_type"
		second = p.dataTypes.list
	}
	for i, in := range c.s.Conditions {
		var dst *[]string
		switch in.Field {
		case vehicleField:
			dst = &vehicles
		case secondField:
			dst = &second
		default:
			continue
		}
		vals, ok := pinned(&p.conds[i])
		if !ok {
			continue
		}
		if *dst == nil {
			*dst = vals
		} else {
			*dst = intersect(*dst, vals)
		}
		if len(*dst) == 0 {
			p.never = true
		}
	}
	p.keys.VehicleIDs = sortedUnique(vehicles)
	if p.kind == kindEvent {
		p.keys.Categories = sortedUnique(second)
	} else {
		p.keys.DataTypes = sortedUnique(second)
	}
}

// pinned returns the exact strings a = or in condition allows, if they are
// all plain strings (a null or a time would match values the list misses).
func pinned(cd *cond) ([]string, bool) {
	switch cd.op {
	case opEq:
		if cd.c.k == kString && !cd.c.isTime {
			return []string{cd.c.s}, true
		}
	case opIn:
		if len(cd.inOther) == 0 {
			return append([]string{}, cd.inStrings.list...), true
		}
	}
	return nil, false
}

func intersect(a, b []string) []string {
	out := []string{}
	for _, x := range a {
		if slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

func sortedUnique(list []string) []string {
	if len(list) == 0 {
		return nil
	}
	out := slices.Clone(list)
	slices.Sort(out)
	return slices.Compact(out)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func oneOf(enum []string) string { return " (one of " + strings.Join(enum, ", ") + ")" }

// refusal refuses x, a value outside the fixed set enum, in the words of
// internal/enum ("must be one of a, b"; this package may not import it):
// the API answers invalid_request for such refusals by those words.
func refusal(enum []string, what, x string) string {
	return "must be one of " + strings.Join(enum, ", ") + " (unknown " + what + " " + strconv.Quote(x) + ")"
}
