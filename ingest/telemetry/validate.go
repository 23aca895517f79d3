package telemetry

import (
	"sort"
	"strconv"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// telemetryFields are the top-level fields of a telemetry message.
var telemetryFields = map[string]bool{"timestamp": true, "vehicle_id": true, "data_type": true, "sequence": true,
	"data": true, "quality_indicators": true}

// validateTelemetry checks one message and builds it; ok is false when it
// added errors. now is the server clock.
func (s *Service) validateTelemetry(m map[string]any, a at, now time.Time, errs *fieldErrors) (t event.Telemetry, ok bool) {
	before := errs.count()
	if m == nil {
		errs.add(a.path(""), "must be an object")
		return t, false
	}
	for k := range m {
		if !telemetryFields[k] {
			errs.add(a.path(key(k)), jsonpath.UnknownRefusal)
		}
	}
	var msg string
	v, has := m["vehicle_id"]
	if t.VehicleID, msg = id(v, has); msg != "" {
		errs.add(a.path("vehicle_id"), msg)
	}
	v, has = m["timestamp"]
	if t.Timestamp, msg = timestamp(v, has, now.Add(s.cfg.MaxFuture), s.cfg.MaxFuture); msg != "" {
		errs.add(a.path("timestamp"), msg)
	}
	if v, has = m["data_type"]; !has || v == nil {
		errs.add(a.path("data_type"), "is required")
	} else if t.DataType, msg = oneOf(v, event.DataTypes); msg != "" {
		errs.add(a.path("data_type"), msg)
	}
	if v, has = m["sequence"]; has {
		if t.Sequence, msg = integer(v); msg != "" {
			errs.add(a.path("sequence"), msg)
		}
	}
	t.Data = s.validateData(t.DataType, m["data"], a, errs)
	if v, has = m["quality_indicators"]; has {
		t.QualityIndicators = validateQuality(v, a, errs)
	}
	return t, errs.count() == before
}

// validateData checks data against the groups of dataType ("" when the
// data type itself is invalid: then only the shape is checked).
func (s *Service) validateData(dataType string, v any, a at, errs *fieldErrors) map[string]any {
	data, ok := v.(map[string]any)
	switch {
	case v == nil:
		errs.add(a.path("data"), "is required")
		return nil
	case !ok:
		errs.add(a.path("data"), "must be an object")
		return nil
	case len(data) == 0:
		errs.add(a.path("data"), "must carry at least one group")
		return data
	case dataType == "":
		return data
	}
	groups, structured := s.schema[dataType]
	if !structured && len(data) > MaxGroups {
		errs.add(a.path("data"), "must carry at most "+strconv.Itoa(MaxGroups)+" groups")
		return data
	}
	for gname, gv := range data {
		g, ok := gv.(map[string]any)
		if structured {
			if _, known := groups[gname]; !known {
				errs.add(a.path("data."+key(gname)), "unknown group for data type "+dataType+"; allowed: "+list(sortedKeys(groups)))
				continue
			}
		} else if !name(gname) {
			errs.add(a.path("data."+key(gname)), "group names must be letters, digits and _ (at most 64), starting with a letter")
			continue
		}
		if !ok {
			errs.add(a.path("data."+key(gname)), "must be an object")
			continue
		}
		if structured {
			checkGroup(g, groups[gname], gname, a, errs)
		} else {
			checkFreeGroup(g, gname, a, errs)
		}
	}
	return data
}

// checkGroup checks the fields of a documented group and normalizes its
// numbers in place.
func checkGroup(g map[string]any, fields group, gname string, a at, errs *fieldErrors) {
	for f, v := range g {
		k, known := fields[f]
		if !known {
			errs.add(a.path("data."+gname+"."+key(f)), jsonpath.UnknownRefusal+" of group "+gname+"; allowed: "+list(sortedKeys(fields)))
			continue
		}
		n, msg := checkKind(k, v)
		if msg != "" {
			errs.add(a.path("data."+gname+"."+f), msg)
			continue
		}
		if n != nil {
			g[f] = n
		}
	}
}

// checkKind checks one value; n is the normalized value to store, or nil
// to keep v.
func checkKind(k kind, v any) (n any, msg string) {
	switch k {
	case kNumber, kPercent:
		f, ok := number(v)
		if !ok {
			return nil, "must be " + kNumber.String()
		}
		if k == kPercent && (f < 0 || f > 100) {
			return nil, "must be from 0 to 100"
		}
		return f, ""
	case kCount:
		i, msg := integer(v)
		if msg != "" {
			return nil, "must be " + kCount.String()
		}
		return float64(i), ""
	case kBool:
		if _, ok := v.(bool); !ok {
			return nil, "must be " + k.String()
		}
	case kText:
		if _, msg := text(v, MaxTextLen); msg != "" {
			return nil, msg
		}
	case kCodes:
		codes, ok := v.([]any)
		if !ok {
			if ss, isStrings := v.([]string); isStrings {
				codes = make([]any, len(ss))
				for i, s := range ss {
					codes[i] = s
				}
				n = codes
			} else {
				return nil, "must be " + k.String()
			}
		}
		if len(codes) > MaxCodes {
			return nil, "must carry at most " + strconv.Itoa(MaxCodes) + " codes"
		}
		for i, c := range codes {
			s, ok := c.(string)
			if !ok || s == "" || len(s) > MaxCodeLen {
				return nil, "element " + strconv.Itoa(i) + " must be a code of 1 to " + strconv.Itoa(MaxCodeLen) + " characters"
			}
		}
	}
	return n, ""
}

// checkFreeGroup checks a free-form numeric group.
func checkFreeGroup(g map[string]any, gname string, a at, errs *fieldErrors) {
	if len(g) > MaxFields {
		errs.add(a.path("data."+gname), "must carry at most "+strconv.Itoa(MaxFields)+" fields")
		return
	}
	for f, v := range g {
		if !name(f) {
			errs.add(a.path("data."+gname+"."+key(f)), "field names must be letters, digits and _ (at most 64), starting with a letter")
			continue
		}
		n, ok := number(v)
		if !ok {
			errs.add(a.path("data."+gname+"."+f), "must be a number (groups of this data type are numeric)")
			continue
		}
		g[f] = n
	}
}

func validateQuality(v any, a at, errs *fieldErrors) *event.QualityIndicators {
	m, ok := v.(map[string]any)
	if !ok {
		errs.add(a.path("quality_indicators"), "must be an object")
		return nil
	}
	q := &event.QualityIndicators{}
	for k, e := range m {
		switch k {
		case "signal_strength", "data_completeness":
			f, ok := number(e)
			if !ok || f < 0 || f > 100 {
				errs.add(a.path("quality_indicators."+k), "must be a number from 0 to 100")
				continue
			}
			if k == "signal_strength" {
				q.SignalStrength = &f
			} else {
				q.DataCompleteness = &f
			}
		case "sensor_health":
			s, msg := text(e, MaxTextLen)
			if msg != "" {
				errs.add(a.path("quality_indicators.sensor_health"), msg)
				continue
			}
			q.SensorHealth = s
		default:
			errs.add(a.path("quality_indicators."+key(k)), jsonpath.UnknownRefusal+"; allowed: data_completeness, sensor_health or signal_strength")
		}
	}
	return q
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
