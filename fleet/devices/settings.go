package devices

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/internal/enum"
)

// TelemetrySettings group.
type TelemetrySettings struct {
	CollectionIntervalSeconds *float64 `json:"collection_interval_seconds,omitempty" doc:"10-3600"`
	DataTypes                 []string `json:"data_types,omitempty" enum:"location,obd_data,accelerometer,gyroscope,camera,audio" doc:"location, obd_data, accelerometer, gyroscope, camera, audio: at least one; replaces the current list whole, each type stored once in first-seen order"`
	HighFrequencyEvents       *bool    `json:"high_frequency_events,omitempty"`
	BatchUploadSize           *float64 `json:"batch_upload_size,omitempty" schema:"oneOf:integer,null" doc:"points per upload, a whole number 1-500"`
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
	DataUsageLimitMB   *float64 `json:"data_usage_limit_mb,omitempty" doc:"0-10000000"`
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
	AlertFrequency     *string  `json:"alert_frequency,omitempty" enum:"immediate,once_per_minute,once_per_trip,daily_summary" doc:"throttles the trip's speeding events: every episode, at most one a minute, or the first only; daily_summary raises none and sends one speeding_daily_summary event per device and UTC day with speeding, after the day ends"`
}

// SafetyFeatures group.
type SafetyFeatures struct {
	HarshEventDetection *HarshEventDetection `json:"harsh_event_detection,omitempty"`
	SpeedingAlerts      *SpeedingAlerts      `json:"speeding_alerts,omitempty"`
}

// Settings is the PUT body; every group is optional and merged into the
// device's current settings. A field sent as null decodes as one left
// out; api/devices finds the nulls in the body and Apply clears them.
type Settings struct {
	TelemetrySettings *TelemetrySettings `json:"telemetry_settings,omitempty"`
	PowerManagement   *PowerManagement   `json:"power_management,omitempty"`
	Connectivity      *Connectivity      `json:"connectivity,omitempty"`
	SafetyFeatures    *SafetyFeatures    `json:"safety_features,omitempty"`
}

// ValidationResults of an apply.
type ValidationResults struct {
	ValidSettings        bool     `json:"valid_settings" source:"constant" doc:"always true: invalid settings are refused with 400 and nothing is stored"`
	Warnings             []string `json:"warnings" source:"computed" doc:"camera data usage; high-frequency events under a 30 s interval"`
	OptimizationsApplied []string `json:"optimizations_applied" source:"computed" doc:"the power-saving settings the record turns on (sleep mode, charging optimization); the hub changes no setting itself"`
}

// EstimatedImpact of the settings against the defaults.
type EstimatedImpact struct {
	DataUsageIncreasePercent float64 `json:"data_usage_increase_percent" source:"computed" doc:"against the 60 s default interval, camera +200, audio +50: a rule of thumb from the settings, not a measurement"`
	BatteryLifeImpact        string  `json:"battery_life_impact" enum:"low,moderate,high" source:"computed" doc:"from the collection interval, one step lower with sleep mode"`
	AlertFrequencyChange     string  `json:"alert_frequency_change" enum:"increased,decreased,unchanged,mixed" source:"computed" doc:"the safety settings against the detector's defaults (harsh event thresholds 0.35, -0.40 and 0.40 g, speeding 5 mph over the limit, every episode): increased when some make events more frequent (a lower threshold or tolerance) and none less, decreased when some make them less frequent (a higher threshold or tolerance, a detection off, a throttled alert_frequency: once_per_minute, once_per_trip or daily_summary) and none more, mixed when both, unchanged when none differs"`
}

// Applied is the applied-settings record.
type Applied struct {
	DeviceID             string            `json:"device_id"`
	SettingsApplied      Settings          `json:"settings_applied"`
	ValidationResults    ValidationResults `json:"validation_results"`
	EstimatedImpact      EstimatedImpact   `json:"estimated_impact"`
	SettingsVersion      string            `json:"settings_version"`
	AppliedAt            time.Time         `json:"applied_at"`
	EffectiveImmediately bool              `json:"effective_immediately" source:"computed" doc:"true when this version changes safety_features alone, which the hub applies itself: trips in progress on the device take them within a second; false when it changes (sets or clears) a telemetry_settings, power_management or connectivity setting, which only the device applies, when it next reads its settings (GET): the hub pushes nothing"`
	NextSyncScheduled    *time.Time        `json:"next_sync_scheduled" source:"unknown" doc:"null: the hub pushes nothing to devices and schedules no sync; a device reads its settings (GET) when it chooses"`
}

var alertFrequencies = []string{"immediate", "once_per_minute", "once_per_trip", "daily_summary"}

var dataTypes = []string{"location", "obd_data", "accelerometer", "gyroscope", "camera", "audio"}

func rng(bad map[string]string, field string, v *float64, lo, hi float64) {
	if v != nil && (math.IsNaN(*v) || *v < lo || *v > hi) {
		bad[field] = "must be between " + strconv.FormatFloat(lo, 'f', -1, 64) + " and " + strconv.FormatFloat(hi, 'f', -1, 64)
	}
}

// Validate checks every field; the map is keyed by field path.
func (s *Settings) Validate() map[string]string {
	bad := map[string]string{}
	if t := s.TelemetrySettings; t != nil {
		rng(bad, "telemetry_settings.collection_interval_seconds", t.CollectionIntervalSeconds, 10, 3600)
		rng(bad, "telemetry_settings.batch_upload_size", t.BatchUploadSize, 1, 500)
		if v := t.BatchUploadSize; v != nil && bad["telemetry_settings.batch_upload_size"] == "" && *v != math.Trunc(*v) {
			// a count of points: a fraction would be stored and
			// stated as applied, and no device can batch half a point
			bad["telemetry_settings.batch_upload_size"] = "must be a whole number of points, 1 to 500"
		}
		if t.DataTypes != nil && len(t.DataTypes) == 0 {
			// sent as []: the list is replaced whole and never emptied
			bad["telemetry_settings.data_types"] = "must name at least one of " + strings.Join(dataTypes, ", ") + "; leave the field out to keep the current list"
		}
		for i, d := range t.DataTypes {
			if !slices.Contains(dataTypes, d) {
				bad[fmt.Sprintf("telemetry_settings.data_types[%d]", i)] = enum.Refusal(dataTypes...)
			}
		}
	}
	if p := s.PowerManagement; p != nil {
		rng(bad, "power_management.sleep_delay_minutes", p.SleepDelayMinutes, 1, 60)
		rng(bad, "power_management.low_power_threshold", p.LowPowerThreshold, 10, 50)
	}
	if c := s.Connectivity; c != nil {
		if c.PreferredNetwork != nil && !slices.Contains([]string{"4g_lte", "5g", "3g", "wifi", "auto"}, *c.PreferredNetwork) {
			bad["connectivity.preferred_network"] = enum.Refusal("4g_lte", "5g", "3g", "wifi", "auto")
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
			if f := sp.AlertFrequency; f != nil && !slices.Contains(alertFrequencies, *f) {
				bad["safety_features.speeding_alerts.alert_frequency"] = enum.Refusal(alertFrequencies...)
			}
		}
	}
	return bad
}

// normalize stores each data type once, in first-seen order.
func (s *Settings) normalize() {
	t := s.TelemetrySettings
	if t == nil || len(t.DataTypes) < 2 {
		return
	}
	out := make([]string, 0, len(dataTypes))
	for _, d := range t.DataTypes {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	t.DataTypes = out
}
