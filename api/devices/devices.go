// Package devices serves device settings: PUT merges and validates a
// device's telemetry, power, connectivity and safety settings and stores
// the applied record with a new version; GET reads it back. The safety
// settings drive trip detection (DetectThresholds).
package devices

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/store"
)

// TelemetrySettings group.
type TelemetrySettings struct {
	CollectionIntervalSeconds *float64 `json:"collection_interval_seconds,omitempty" doc:"10-3600"`
	DataTypes                 []string `json:"data_types,omitempty" doc:"location, obd_data, accelerometer, gyroscope, camera, audio"`
	HighFrequencyEvents       *bool    `json:"high_frequency_events,omitempty"`
	BatchUploadSize           *float64 `json:"batch_upload_size,omitempty" doc:"1-500"`
}

// PowerManagement group.
type PowerManagement struct {
	SleepModeEnabled     *bool    `json:"sleep_mode_enabled,omitempty"`
	SleepDelayMinutes    *float64 `json:"sleep_delay_minutes,omitempty" doc:"1-60"`
	LowPowerThreshold    *float64 `json:"low_power_threshold,omitempty" doc:"battery percent 10-50"`
	ChargingOptimization *bool    `json:"charging_optimization,omitempty"`
}

// Connectivity group.
type Connectivity struct {
	PreferredNetwork   *string  `json:"preferred_network,omitempty" enum:"4g_lte,5g,3g,wifi,auto"`
	RoamingEnabled     *bool    `json:"roaming_enabled,omitempty"`
	DataUsageLimitMB   *float64 `json:"data_usage_limit_mb,omitempty"`
	OfflineStorageDays *float64 `json:"offline_storage_days,omitempty" doc:"0-365"`
}

// HarshEventDetection settings (g-force).
type HarshEventDetection struct {
	Enabled               *bool    `json:"enabled,omitempty"`
	AccelerationThreshold *float64 `json:"acceleration_threshold,omitempty" doc:"0.1 to 1.0"`
	BrakingThreshold      *float64 `json:"braking_threshold,omitempty" doc:"-1.0 to -0.1"`
	CorneringThreshold    *float64 `json:"cornering_threshold,omitempty" doc:"0.1 to 1.0"`
}

// SpeedingAlerts settings.
type SpeedingAlerts struct {
	Enabled            *bool    `json:"enabled,omitempty"`
	ThresholdOverLimit *float64 `json:"threshold_over_limit,omitempty" doc:"mph over the limit, 0-50"`
	AlertFrequency     *string  `json:"alert_frequency,omitempty" enum:"immediate,once_per_minute,once_per_trip,daily_summary"`
}

// SafetyFeatures group.
type SafetyFeatures struct {
	HarshEventDetection *HarshEventDetection `json:"harsh_event_detection,omitempty"`
	SpeedingAlerts      *SpeedingAlerts      `json:"speeding_alerts,omitempty"`
}

// Settings is the PUT body; every group is optional and merged into the
// device's current settings.
type Settings struct {
	TelemetrySettings *TelemetrySettings `json:"telemetry_settings,omitempty"`
	PowerManagement   *PowerManagement   `json:"power_management,omitempty"`
	Connectivity      *Connectivity      `json:"connectivity,omitempty"`
	SafetyFeatures    *SafetyFeatures    `json:"safety_features,omitempty"`
}

// ValidationResults of an apply.
type ValidationResults struct {
	ValidSettings        bool     `json:"valid_settings"`
	Warnings             []string `json:"warnings"`
	OptimizationsApplied []string `json:"optimizations_applied"`
}

// EstimatedImpact of the settings against the defaults.
type EstimatedImpact struct {
	DataUsageIncreasePercent float64 `json:"data_usage_increase_percent"`
	BatteryLifeImpact        string  `json:"battery_life_impact" enum:"low,moderate,high"`
	AlertFrequencyChange     string  `json:"alert_frequency_change" enum:"increased,decreased,unchanged"`
}

// Applied is the applied-settings record.
type Applied struct {
	DeviceID             string            `json:"device_id"`
	SettingsApplied      Settings          `json:"settings_applied"`
	ValidationResults    ValidationResults `json:"validation_results"`
	EstimatedImpact      EstimatedImpact   `json:"estimated_impact"`
	SettingsVersion      string            `json:"settings_version"`
	AppliedAt            time.Time         `json:"applied_at"`
	EffectiveImmediately bool              `json:"effective_immediately"`
	NextSyncScheduled    time.Time         `json:"next_sync_scheduled"`
}

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

var dataTypes = []string{"location", "obd_data", "accelerometer", "gyroscope", "camera", "audio"}

func rng(bad map[string]string, field string, v *float64, lo, hi float64) {
	if v != nil && (math.IsNaN(*v) || *v < lo || *v > hi) {
		bad[field] = fmt.Sprintf("must be between %g and %g", lo, hi)
	}
}

// Validate checks every field; the map is keyed by field path.
func (s *Settings) Validate() map[string]string {
	bad := map[string]string{}
	if t := s.TelemetrySettings; t != nil {
		rng(bad, "telemetry_settings.collection_interval_seconds", t.CollectionIntervalSeconds, 10, 3600)
		rng(bad, "telemetry_settings.batch_upload_size", t.BatchUploadSize, 1, 500)
		for i, d := range t.DataTypes {
			if !slices.Contains(dataTypes, d) {
				bad[fmt.Sprintf("telemetry_settings.data_types[%d]", i)] = "must be one of " + strings.Join(dataTypes, ", ")
			}
		}
	}
	if p := s.PowerManagement; p != nil {
		rng(bad, "power_management.sleep_delay_minutes", p.SleepDelayMinutes, 1, 60)
		rng(bad, "power_management.low_power_threshold", p.LowPowerThreshold, 10, 50)
	}
	if c := s.Connectivity; c != nil {
		if c.PreferredNetwork != nil && !slices.Contains([]string{"4g_lte", "5g", "3g", "wifi", "auto"}, *c.PreferredNetwork) {
			bad["connectivity.preferred_network"] = "must be 4g_lte, 5g, 3g, wifi or auto"
		}
		rng(bad, "connectivity.data_usage_limit_mb", c.DataUsageLimitMB, 0, 1e7)
		rng(bad, "connectivity.offline_storage_days", c.OfflineStorageDays, 0, 365)
	}
	if sf := s.SafetyFeatures; sf != nil {
		if h := sf.HarshEventDetection; h != nil {
			rng(bad, "safety_features.harsh_event_detection.acceleration_threshold", h.AccelerationThreshold, 0.1, 1.0)
			rng(bad, "safety_features.harsh_event_detection.braking_threshold", h.BrakingThreshold, -1.0, -0.1)
			rng(bad, "safety_features.harsh_event_detection.cornering_threshold", h.CorneringThreshold, 0.1, 1.0)
		}
		if sp := sf.SpeedingAlerts; sp != nil {
			rng(bad, "safety_features.speeding_alerts.threshold_over_limit", sp.ThresholdOverLimit, 0, 50)
			if sp.AlertFrequency != nil && !slices.Contains([]string{"immediate", "once_per_minute", "once_per_trip", "daily_summary"}, *sp.AlertFrequency) {
				bad["safety_features.speeding_alerts.alert_frequency"] = "must be immediate, once_per_minute, once_per_trip or daily_summary"
			}
		}
	}
	return bad
}

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

// Apply merges body into the device's settings and stores a new version.
func (s *Service) Apply(ctx context.Context, sc store.Scope, deviceID string, body Settings) (Applied, error) {
	if bad := body.Validate(); len(bad) > 0 {
		return Applied{}, api.Validation("validation_failed", bad)
	}
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
			_ = json.Unmarshal(cur.Settings, &base)
		}
		pb, _ := json.Marshal(body)
		_ = json.Unmarshal(pb, &patch)
		mb, _ := json.Marshal(merge(base, patch))
		var merged Settings
		if err := json.Unmarshal(mb, &merged); err != nil {
			return Applied{}, err
		}
		now := s.now().UTC().Truncate(time.Millisecond)
		rec := assess(deviceID, merged, now, prev+1)
		rb, _ := json.Marshal(rec)
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

func assess(id string, s Settings, now time.Time, version int64) Applied {
	a := Applied{DeviceID: id, SettingsApplied: s, SettingsVersion: fmt.Sprintf("v%d", version), AppliedAt: now, EffectiveImmediately: true,
		ValidationResults: ValidationResults{ValidSettings: true, Warnings: []string{}, OptimizationsApplied: []string{}}}
	interval := 60.0
	sync := 5 * time.Minute
	usage := 0.0
	battery := "low"
	if t := s.TelemetrySettings; t != nil {
		if t.CollectionIntervalSeconds != nil {
			interval = *t.CollectionIntervalSeconds
			sync = time.Duration(interval * float64(time.Second))
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
		if battery == "high" {
			battery = "moderate"
		}
	}
	a.EstimatedImpact = EstimatedImpact{DataUsageIncreasePercent: math.Round(usage*10) / 10, BatteryLifeImpact: battery, AlertFrequencyChange: "unchanged"}
	if sf := s.SafetyFeatures; sf != nil && sf.HarshEventDetection != nil {
		h := sf.HarshEventDetection
		if h.Enabled != nil && !*h.Enabled {
			a.EstimatedImpact.AlertFrequencyChange = "decreased"
		} else if h.AccelerationThreshold != nil && *h.AccelerationThreshold < detect.DefaultAccelerationG ||
			h.BrakingThreshold != nil && -*h.BrakingThreshold < detect.DefaultBrakingG {
			a.EstimatedImpact.AlertFrequencyChange = "increased"
		} else if h.AccelerationThreshold != nil || h.BrakingThreshold != nil {
			a.EstimatedImpact.AlertFrequencyChange = "decreased"
		}
	}
	a.NextSyncScheduled = now.Add(sync)
	return a
}

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

// Routes returns the device routes.
func (s *Service) Routes() []*api.Route {
	p := []api.Param{{Name: "device_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "PUT", Path: "/v1/devices/{device_id}/settings", Tag: "devices", Summary: "Apply device settings (merged into the current ones)", Permission: "devices:manage",
			Params: p, Request: Settings{}, Response: Applied{}, Handler: s.put},
		{Method: "GET", Path: "/v1/devices/{device_id}/settings", Tag: "devices", Summary: "The applied settings record, current version", Permission: "devices:manage",
			Params: p, Response: Applied{}, Handler: s.get},
	}
}

func deviceID(c *api.Ctx) (string, error) {
	id := c.PathParam("device_id")
	if id == "" || len(id) > 200 {
		return "", api.Validation("validation_failed", map[string]string{"device_id": "must be 1 to 200 characters"})
	}
	return id, nil
}

func (s *Service) put(c *api.Ctx) error {
	id, err := deviceID(c)
	if err != nil {
		return err
	}
	if !api.IsJSON(c.Request.Header.ContentType()) {
		return api.Errf("unsupported_media_type", "Content-Type must be application/json")
	}
	var body Settings
	dec := json.NewDecoder(strings.NewReader(string(c.PostBody())))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&body); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return api.Validation("validation_failed", map[string]string{te.Field: "must be " + te.Type.String()})
		}
		if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return api.Validation("validation_failed", map[string]string{strings.Trim(f, `"`): "is not a known setting"})
		}
		return api.Errf("invalid_request", "malformed JSON: %v", err)
	}
	org, env := c.Scope()
	a, err := s.Apply(c.Context(), store.Scope{Org: org, Env: env}, id, body)
	if err != nil {
		return err
	}
	return c.JSON(200, a)
}

func (s *Service) get(c *api.Ctx) error {
	id, err := deviceID(c)
	if err != nil {
		return err
	}
	org, env := c.Scope()
	cur, err := s.store.GetDeviceSettings(c.Context(), store.Scope{Org: org, Env: env}, id)
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("not_found", "device %s has no applied settings", id)
	}
	if err != nil {
		return err
	}
	c.SetContentType("application/json")
	c.SetStatusCode(200)
	c.SetBody(cur.Record)
	return nil
}
