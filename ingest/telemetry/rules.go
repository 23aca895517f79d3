package telemetry

import (
	"slices"
	"time"

	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/internal/apitime"
)

// Event types raised by the hub itself.
const (
	TypeDiagnosticAlert   = "diagnostic_alert"
	TypeEngineOverheating = "engine_overheating"
	TypeDeviceOffline     = "device_offline"
	TypeDeviceOnline      = "device_online"
)

// Source systems of the events the hub raises.
const (
	SourceSystemRules    = "fleethub.rules"
	SourceSystemWatchdog = "fleethub.watchdog"
)

// vehicle is what the rules and the watchdog remember of one vehicle. It
// is a plain value so that a request can snapshot and restore it.
type vehicle struct {
	org, env, id string
	gen          uint64 // s.gen when last changed

	lastSeen     time.Time // server time of the last message or event
	offline      bool      // device_offline raised and not yet cleared
	offlineSince time.Time // lastSeen when it went offline

	diagAt  time.Time // timestamp of the newest engine_diagnostics message
	hasDTC  bool
	dtc     int64
	codes   []any // pending_codes of the previous message; never mutated
	milOn   bool
	hot     bool // engine_overheating raised, not yet cooled below the hysteresis
	hasDiag bool
}

// change is a vehicle's state before a request changed it, for rollback.
type change struct {
	key     vehicleKey
	v       *vehicle
	prev    vehicle
	existed bool
	gen     uint64
}

// txn records the vehicles one request changed. Lock held while used.
type txn struct {
	idx     map[vehicleKey]int // built once changes outgrow txnScan
	changes []change
}

// txnScan is how many changes a txn looks through one by one before it
// indexes them: most requests touch one vehicle, and a map for it cost
// a third of a single-event request's allocations in the ingest path.
const txnScan = 8

// vehicleKey names a vehicle in a tenant.
type vehicleKey struct{ org, env, id string }

// touch returns the vehicle's state for changing, remembering its
// previous value once per request; heard marks the vehicle recently used
// in the LRU (the watchdog's changes do not). Lock must be held.
func (s *Service) touch(tx *txn, org, env, id string, heard bool) *vehicle {
	k := vehicleKey{org, env, id}
	if i, ok := tx.find(k); ok {
		return tx.changes[i].v
	}
	var v *vehicle
	var existed bool
	if heard {
		v, existed = s.vehicles.Get(k)
	} else {
		v, existed = s.vehicles.Peek(k)
	}
	c := change{key: k, existed: existed}
	if existed {
		c.prev = *v
	} else {
		v = &vehicle{org: org, env: env, id: id}
		s.vehicles.Add(k, v)
	}
	c.v = v
	tx.changes = append(tx.changes, c)
	switch n := len(tx.changes); {
	case n > txnScan && tx.idx == nil:
		tx.idx = make(map[vehicleKey]int, 2*n)
		for i := range tx.changes {
			tx.idx[tx.changes[i].key] = i
		}
	case tx.idx != nil:
		tx.idx[k] = n - 1
	}
	return v
}

// find returns the index of k's change.
func (tx *txn) find(k vehicleKey) (int, bool) {
	if tx.idx != nil {
		i, ok := tx.idx[k]
		return i, ok
	}
	for i := range tx.changes {
		if tx.changes[i].key == k {
			return i, true
		}
	}
	return 0, false
}

// commit stamps the changed vehicles with a new generation. Lock must be
// held.
func (s *Service) commit(tx *txn) {
	for i := range tx.changes {
		s.gen++
		tx.changes[i].v.gen = s.gen
		tx.changes[i].gen = s.gen
	}
}

// rollback restores the vehicles a failed request changed, unless a later
// request changed them since.
func (s *Service) rollback(tx *txn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, c := range tx.changes {
		cur, ok := s.vehicles.Peek(c.key)
		if !ok || cur != c.v || cur.gen != c.gen {
			continue
		}
		if c.existed {
			*cur = c.prev
		} else {
			s.vehicles.Remove(c.key)
		}
	}
}

// seen records that a vehicle spoke at now; it returns device_online
// when the vehicle was offline. Lock must be held.
func (s *Service) seen(v *vehicle, now time.Time) *event.Event {
	var ev *event.Event
	if v.offline {
		ev = s.newEvent(v.id, event.CategorySystem, TypeDeviceOnline, "low", "normal", apitime.Of(now), now, SourceSystemWatchdog, map[string]any{
			"last_seen":       apitime.Format(v.offlineSince),
			"offline_seconds": now.Sub(v.offlineSince).Seconds(),
		})
		v.offline = false
		v.offlineSince = time.Time{}
	}
	v.lastSeen = now
	return ev
}

// reading is what the rules and the watchdog need of one valid
// telemetry message.
type reading struct {
	vehicleID string
	timestamp time.Time
	sequence  int64
	diag      bool // engine_diagnostics: the fields below are read

	dtc, coolant                         float64 // status_codes.dtc_count, engine.coolant_temp
	mil                                  bool    // status_codes.mil_status
	codes                                []any   // status_codes.pending_codes
	hasDTC, hasCoolant, hasMil, hasCodes bool

	// codesJSON, when set, holds the pending codes instead of codes: the
	// JSON array as the body has it (plain strings, checked by the
	// reader). It is the request body's, read by the rules before the
	// request returns; most messages repeat their vehicle's codes, and
	// then the vehicle's slice is used again instead of a new one.
	codesJSON []byte
}

// pendingCodesOf returns the codes of m: codes, or those of codesJSON,
// which are prev when they are the same.
func (m *reading) pendingCodesOf(prev []any) []any {
	if m.codesJSON == nil {
		return m.codes
	}
	same, n := true, 0
	forCodes(m.codesJSON, func(c []byte) {
		if n >= len(prev) || prev[n] != any(string(c)) {
			same = false
		}
		n++
	})
	if same && n == len(prev) && prev != nil {
		return prev
	}
	codes := make([]any, 0, n)
	forCodes(m.codesJSON, func(c []byte) { codes = append(codes, string(c)) })
	return codes
}

// forCodes calls fn with each string of a JSON array of strings without
// escapes.
func forCodes(arr []byte, fn func([]byte)) {
	for i := 0; i < len(arr); i++ {
		if arr[i] != '"' {
			continue
		}
		j := i + 1
		for arr[j] != '"' {
			j++
		}
		fn(arr[i+1 : j])
		i = j
	}
}

// readingOf takes what the rules read of a validated message (its
// numbers normalized to float64 and its codes to []any).
func readingOf(t *event.Telemetry) reading {
	r := reading{vehicleID: t.VehicleID, timestamp: t.Timestamp, sequence: t.Sequence, diag: t.DataType == EngineDiagnostics}
	if !r.diag {
		return r
	}
	status, _ := t.Data["status_codes"].(map[string]any)
	r.codes, r.hasCodes = status["pending_codes"].([]any)
	r.dtc, r.hasDTC = status["dtc_count"].(float64)
	r.mil, r.hasMil = status["mil_status"].(bool)
	engine, _ := t.Data["engine"].(map[string]any)
	r.coolant, r.hasCoolant = engine["coolant_temp"].(float64)
	return r
}

// diagnostics runs the maintenance rules over the engine_diagnostics
// messages of one request, per vehicle in timestamp order; messages older
// than the vehicle's newest one are late and skipped. Lock must be held.
func (s *Service) diagnostics(tx *txn, org, env string, msgs []reading, now time.Time, out []*event.Event) []*event.Event {
	var small [8]int // most requests carry a few diagnostics: no allocation for them
	idx := small[:0]
	for i := range msgs {
		if msgs[i].diag {
			idx = append(idx, i)
		}
	}
	slices.SortStableFunc(idx, func(a, b int) int { return msgs[a].timestamp.Compare(msgs[b].timestamp) })
	for _, i := range idx {
		m := &msgs[i]
		v := s.touch(tx, org, env, m.vehicleID, true)
		if v.hasDiag && m.timestamp.Before(v.diagAt) {
			continue
		}
		v.hasDiag, v.diagAt = true, m.timestamp
		out = s.rules(v, m, now, out)
	}
	return out
}

// rules compares one engine_diagnostics message with the vehicle's
// previous one. Lock must be held.
func (s *Service) rules(v *vehicle, m *reading, now time.Time, out []*event.Event) []*event.Event {
	codes := m.pendingCodesOf(v.codes)
	if m.hasDTC {
		cur := int64(m.dtc)
		if v.hasDTC && cur > v.dtc {
			data := map[string]any{
				"rule": "dtc_count_increase", "previous_dtc_count": v.dtc, "current_dtc_count": cur,
				"pending_codes": pendingCodes(codes), "new_codes": newCodes(codes, v.codes),
				"telemetry_timestamp": m.timestamp.Format(time.RFC3339Nano), "telemetry_sequence": m.sequence,
			}
			ev := s.newEvent(v.id, event.CategoryMaintenance, TypeDiagnosticAlert, "high", "normal", m.timestamp, now, SourceSystemRules, data)
			ev.Recommendations = []any{"Read the new diagnostic trouble codes", "Schedule a diagnostic inspection"}
			ev.PredictiveIndicators = map[string]any{"dtc_trend": "rising", "dtc_increase": cur - v.dtc}
			out = append(out, ev)
		}
		v.hasDTC, v.dtc = true, cur
	}
	if m.hasCodes {
		v.codes = codes
	}
	if m.hasMil {
		if mil := m.mil; mil && !v.milOn {
			data := map[string]any{
				"rule": "mil_on", "message": "check engine light", "mil_status": true,
				"pending_codes": pendingCodes(codes), "telemetry_timestamp": m.timestamp.Format(time.RFC3339Nano), "telemetry_sequence": m.sequence,
			}
			// the indicators: the light turned on, and the trouble codes
			// stored with it (null when the message does not say)
			indicators := map[string]any{"mil_on": true, "dtc_count": nil}
			if m.hasDTC {
				data["dtc_count"] = int64(m.dtc)
				indicators["dtc_count"] = int64(m.dtc)
			}
			ev := s.newEvent(v.id, event.CategoryMaintenance, TypeDiagnosticAlert, "high", "normal", m.timestamp, now, SourceSystemRules, data)
			ev.Recommendations = []any{"Check engine light is on: read the diagnostic trouble codes", "Schedule a diagnostic inspection"}
			ev.PredictiveIndicators = indicators
			out = append(out, ev)
		}
		v.milOn = m.mil
	}
	if m.hasCoolant {
		temp, limit := m.coolant, s.cfg.CoolantLimit
		switch {
		case temp > limit && !v.hot:
			v.hot = true
			data := map[string]any{"rule": "coolant_over_limit", "coolant_temp": temp, "threshold": limit,
				"telemetry_timestamp": m.timestamp.Format(time.RFC3339Nano), "telemetry_sequence": m.sequence}
			ev := s.newEvent(v.id, event.CategoryMaintenance, TypeEngineOverheating, "critical", "urgent", m.timestamp, now, SourceSystemRules, data)
			ev.Recommendations = []any{"Stop the vehicle safely and let the engine cool", "Check the coolant level and the cooling system"}
			ev.PredictiveIndicators = map[string]any{"coolant_excess": temp - limit}
			out = append(out, ev)
		case temp < limit-s.cfg.CoolantHysteresis:
			v.hot = false
		}
	}
	return out
}

func pendingCodes(codes []any) []any {
	if codes == nil {
		return []any{}
	}
	return codes
}

// newCodes lists the codes of cur not in prev.
func newCodes(cur, prev []any) []any {
	out := []any{}
	for _, c := range cur {
		found := false
		for _, p := range prev {
			if p == c {
				found = true
				break
			}
		}
		if !found {
			out = append(out, c)
		}
	}
	return out
}

// newEvent makes an event the hub raises about a vehicle.
func (s *Service) newEvent(vehicleID, category, typ, severity, priority string, at, now time.Time, system string, data map[string]any) *event.Event {
	return &event.Event{
		EventID: newEventID(), EventType: typ, Category: category, Timestamp: at, Severity: severity, Priority: priority,
		Source:    event.Source{VehicleID: vehicleID},
		EventData: data,
		Metadata:  event.Metadata{CorrelationID: vehicleID, ProcessingTime: apitime.Format(now), SourceSystem: system},
	}
}
