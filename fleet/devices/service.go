package devices

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/store"
)

// Store is what the service needs.
type Store interface {
	PutDeviceSettings(ctx context.Context, d store.DeviceSettings, prev int64) error
	GetDeviceSettings(ctx context.Context, s store.Scope, deviceID string) (store.DeviceSettings, error)
}

// Service applies and reads device settings.
type Service struct {
	store Store
	now   func() time.Time
}

// New makes the service.
func New(st Store) *Service { return &Service{store: st, now: time.Now} }

// ErrNotFound is a device with no applied settings; api/devices maps it
// to not_found.
var ErrNotFound = errors.New("devices: device has no applied settings")

// ValidationError is bad settings; Fields maps a field path to a message.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "devices: invalid settings" }

// merge deep-merges JSON objects.
func merge(base, patch map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range base {
		out[k] = v
	}
	for k, v := range patch {
		if pm, ok := v.(map[string]any); ok {
			if bm, ok := out[k].(map[string]any); ok {
				out[k] = merge(bm, pm)
				continue
			}
		}
		out[k] = v
	}
	return out
}

// Get reads the applied-settings record of a device, as stored (JSON of
// Applied); ErrNotFound when it has none.
func (s *Service) Get(ctx context.Context, sc store.Scope, deviceID string) ([]byte, error) {
	cur, err := s.store.GetDeviceSettings(ctx, sc, deviceID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return cur.Record, nil
}

// clearPaths removes the dotted paths (power_management.sleep_mode_enabled,
// or a whole group) from settings, then the groups left empty: a group
// sent empty or emptied holds no setting, and is not kept.
func clearPaths(settings map[string]any, paths []string) {
	for _, p := range paths {
		del(settings, strings.Split(p, "."))
	}
	prune(settings)
}

// del removes path from m.
func del(m map[string]any, path []string) {
	if len(path) == 1 {
		delete(m, path[0])
	} else if sub, ok := m[path[0]].(map[string]any); ok {
		del(sub, path[1:])
	}
}

// prune removes the empty objects of m, at any depth, and reports whether
// m is left empty.
func prune(m map[string]any) bool {
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok && prune(sub) {
			delete(m, k)
		}
	}
	return len(m) == 0
}

// Apply merges body into the device's settings and stores a new version.
// Each of cleared, a setting or a group by its dotted path (a field the
// request sent as null), is removed from the settings first: the device
// is back to the default there, as if it had never been set.
func (s *Service) Apply(ctx context.Context, sc store.Scope, deviceID string, body Settings, cleared ...string) (Applied, error) {
	if bad := body.Validate(); len(bad) > 0 {
		return Applied{}, &ValidationError{Fields: bad}
	}
	body.normalize()
	for attempt := 0; ; attempt++ {
		cur, err := s.store.GetDeviceSettings(ctx, sc, deviceID)
		prev := cur.Version
		if errors.Is(err, store.ErrNotFound) {
			prev, err = 0, nil
		}
		if err != nil {
			return Applied{}, err
		}
		var base, patch map[string]any
		if len(cur.Settings) > 0 {
			if err := json.Unmarshal(cur.Settings, &base); err != nil {
				return Applied{}, fmt.Errorf("devices: stored settings of %s: %w", deviceID, err)
			}
		}
		pb, err := json.Marshal(body)
		if err != nil {
			return Applied{}, err
		}
		if err := json.Unmarshal(pb, &patch); err != nil {
			return Applied{}, err
		}
		merged := merge(base, patch)
		clearPaths(merged, cleared)
		mb, err := json.Marshal(merged)
		if err != nil {
			return Applied{}, err
		}
		if prev > 0 && bytes.Equal(mb, cur.Settings) {
			// nothing changes: no new version, the record as it stands
			var rec Applied
			if err := json.Unmarshal(cur.Record, &rec); err == nil {
				return rec, nil
			}
		}
		var applied Settings
		if err := json.Unmarshal(mb, &applied); err != nil {
			return Applied{}, err
		}
		now := apitime.Of(s.now())
		rec := assess(deviceID, applied, now, prev+1)
		device, err := deviceSideChanged(cur.Settings, mb)
		if err != nil {
			return Applied{}, fmt.Errorf("devices: compare settings of %s: %w", deviceID, err)
		}
		rec.EffectiveImmediately = !device
		rb, err := json.Marshal(rec)
		if err != nil {
			return Applied{}, err
		}
		err = s.store.PutDeviceSettings(ctx, store.DeviceSettings{Org: sc.Org, Env: sc.Env, DeviceID: deviceID, Settings: mb, Record: rb, AppliedAt: now}, prev)
		if errors.Is(err, store.ErrConflict) && attempt < 3 {
			continue
		}
		if err != nil {
			return Applied{}, err
		}
		return rec, nil
	}
}

// deviceGroups are the settings only the device itself applies: the hub
// uses none of them and pushes nothing, so a change of them takes effect
// when the device reads its settings.
var deviceGroups = []string{"telemetry_settings", "power_management", "connectivity"}

// deviceSideChanged reports whether a group of deviceGroups differs
// between the stored settings before (nil for none) and after, as JSON;
// a change of safety_features alone is applied by the hub itself, to
// the trips in progress on the device.
func deviceSideChanged(before, after []byte) (bool, error) {
	var b, a map[string]json.RawMessage
	if len(before) > 0 {
		if err := json.Unmarshal(before, &b); err != nil {
			return false, err
		}
	}
	if err := json.Unmarshal(after, &a); err != nil {
		return false, err
	}
	for _, g := range deviceGroups {
		var bv, av any
		if raw, ok := b[g]; ok {
			if err := json.Unmarshal(raw, &bv); err != nil {
				return false, err
			}
		}
		if raw, ok := a[g]; ok {
			if err := json.Unmarshal(raw, &av); err != nil {
				return false, err
			}
		}
		if !reflect.DeepEqual(bv, av) {
			return true, nil
		}
	}
	return false, nil
}

func assess(id string, s Settings, now time.Time, version int64) Applied {
	a := Applied{DeviceID: id, SettingsApplied: s, SettingsVersion: fmt.Sprintf("v%d", version), AppliedAt: now,
		ValidationResults: ValidationResults{ValidSettings: true, Warnings: []string{}, OptimizationsApplied: []string{}}}
	interval := 60.0
	usage := 0.0
	battery := "low"
	if t := s.TelemetrySettings; t != nil {
		if t.CollectionIntervalSeconds != nil {
			interval = *t.CollectionIntervalSeconds
		}
		for _, d := range t.DataTypes {
			switch d {
			case "camera":
				usage += 200
				a.ValidationResults.Warnings = append(a.ValidationResults.Warnings, "camera data greatly increases data usage")
			case "audio":
				usage += 50
			}
		}
		if t.HighFrequencyEvents != nil && *t.HighFrequencyEvents && interval < 30 {
			a.ValidationResults.Warnings = append(a.ValidationResults.Warnings, "high-frequency events with a collection interval under 30 s shorten battery life")
		}
	}
	usage += (60/interval - 1) * 100
	switch {
	case interval < 30:
		battery = "high"
	case interval < 60:
		battery = "moderate"
	}
	if p := s.PowerManagement; p != nil && p.SleepModeEnabled != nil && *p.SleepModeEnabled {
		a.ValidationResults.OptimizationsApplied = append(a.ValidationResults.OptimizationsApplied, "sleep mode reduces battery use while parked")
		// one step lower: high to moderate, moderate to low
		switch battery {
		case "high":
			battery = "moderate"
		case "moderate":
			battery = "low"
		}
	}
	if p := s.PowerManagement; p != nil && p.ChargingOptimization != nil && *p.ChargingOptimization {
		a.ValidationResults.OptimizationsApplied = append(a.ValidationResults.OptimizationsApplied, "charging optimization protects the battery while charging")
	}
	a.EstimatedImpact = EstimatedImpact{DataUsageIncreasePercent: math.Round(usage*10) / 10, BatteryLifeImpact: battery, AlertFrequencyChange: alertChange(s.SafetyFeatures)}
	return a
}

// defaultOverLimitMph is the detector's default speeding tolerance in
// whole mph, as threshold_over_limit states it.
var defaultOverLimitMph = math.Round(detect.DefaultOverLimitKmh / 1.609344)

// alertChange says how the safety settings move the number of safety
// events against the detector's defaults: each harsh event threshold
// below its default raises it and above lowers it (a threshold at its
// default changes nothing), a detection turned off lowers it, as do a
// speeding tolerance above the default and a throttled alert_frequency
// (once_per_minute, once_per_trip, daily_summary);
// mixed when some settings raise it and others lower it.
func alertChange(sf *SafetyFeatures) string {
	up, down := false, false
	cmp := func(v *float64, def float64) {
		switch {
		case v == nil || *v == def:
		case *v < def:
			up = true
		default:
			down = true
		}
	}
	if sf != nil && sf.HarshEventDetection != nil {
		h := sf.HarshEventDetection
		if h.Enabled != nil && !*h.Enabled {
			down = true
		} else {
			cmp(h.AccelerationThreshold, detect.DefaultAccelerationG)
			if h.BrakingThreshold != nil {
				b := math.Abs(*h.BrakingThreshold)
				cmp(&b, detect.DefaultBrakingG)
			}
			cmp(h.CorneringThreshold, detect.DefaultCorneringG)
		}
	}
	if sf != nil && sf.SpeedingAlerts != nil {
		sp := sf.SpeedingAlerts
		if sp.Enabled != nil && !*sp.Enabled {
			down = true
		} else {
			cmp(sp.ThresholdOverLimit, defaultOverLimitMph)
			if sp.AlertFrequency != nil && *sp.AlertFrequency != "immediate" {
				// every value but immediate throttles the speeding
				// events, daily_summary down to none
				down = true
			}
		}
	}
	switch {
	case up && down:
		return "mixed"
	case up:
		return "increased"
	case down:
		return "decreased"
	}
	return "unchanged"
}

// speedingEvery is the throttle of speeding events per alert_frequency
// (detect.Thresholds.SpeedingEvery): every episode, at most one a minute,
// or the trip's first only; daily_summary is SpeedingSummary instead.
var speedingEvery = map[string]time.Duration{"immediate": 0, "once_per_minute": time.Minute, "once_per_trip": -1}

// DetectThresholds turns a device's safety settings into detection
// thresholds (trips.Thresholds).
func (s *Service) DetectThresholds(ctx context.Context, sc store.Scope, deviceID string) (detect.Thresholds, bool, error) {
	cur, err := s.store.GetDeviceSettings(ctx, sc, deviceID)
	if errors.Is(err, store.ErrNotFound) {
		return detect.Thresholds{}, false, nil
	}
	if err != nil {
		return detect.Thresholds{}, false, err
	}
	var st Settings
	if err := json.Unmarshal(cur.Settings, &st); err != nil {
		return detect.Thresholds{}, false, err
	}
	var t detect.Thresholds
	if sf := st.SafetyFeatures; sf != nil {
		if h := sf.HarshEventDetection; h != nil {
			if h.Enabled != nil && !*h.Enabled {
				t.HarshDisabled = true
			}
			if h.AccelerationThreshold != nil {
				t.AccelerationG = *h.AccelerationThreshold
			}
			if h.BrakingThreshold != nil {
				t.BrakingG = math.Abs(*h.BrakingThreshold)
			}
			if h.CorneringThreshold != nil {
				t.CorneringG = *h.CorneringThreshold
			}
		}
		if sp := sf.SpeedingAlerts; sp != nil {
			if sp.Enabled != nil && !*sp.Enabled {
				t.SpeedingDisabled = true
			}
			if sp.AlertFrequency != nil {
				t.SpeedingEvery = speedingEvery[*sp.AlertFrequency]
				t.SpeedingSummary = *sp.AlertFrequency == "daily_summary"
			}
			if sp.ThresholdOverLimit != nil {
				t.OverLimitKmh = *sp.ThresholdOverLimit * 1.609344
				if t.OverLimitKmh == 0 {
					t.OverLimitKmh = -1 // zero tolerance (the detector reads 0 as its default)
				}
			}
		}
	}
	return t, true, nil
}
