package detect

import (
	"math"
	"time"
)

// Point is one GPS fix of a trip.
type Point struct {
	Time       time.Time
	Lat, Lon   float64 // degrees
	Speed      float64 // km/h; valid only if HasSpeed
	HasSpeed   bool
	Heading    float64 // degrees 0-360, 0 = North; valid only if HasHeading
	HasHeading bool
	Accuracy   float64 // meters, horizontal; 0 = unknown
	// RoadLimitKmh is the speed limit of the road the point was matched
	// to, and RoadType that road's class; 0 and "" when it was not
	// matched, and then Thresholds.SpeedLimitKmh applies.
	RoadLimitKmh float64
	RoadType     string
}

// Event types.
const (
	TypeHarshAcceleration = "harsh_acceleration"
	TypeHarshBraking      = "harsh_braking"
	TypeHarshCornering    = "harsh_cornering"
	TypeSpeeding          = "speeding"
	TypeIdle              = "idle"
)

// Severities, mildest first.
const (
	SeverityModerate = "moderate"
	SeverityHigh     = "high"
	SeverityCritical = "critical"
)

// Event is one detected episode.
type Event struct {
	Type       string    `json:"event_type"`
	Start      time.Time `json:"start"`
	End        time.Time `json:"end"`
	Lat        float64   `json:"latitude"` // where the episode started
	Lon        float64   `json:"longitude"`
	Severity   string    `json:"severity"`
	Confidence float64   `json:"confidence"` // 0-1, two decimals
	Metrics    Metrics   `json:"metrics"`
	// RoadType and RoadLimitKmh are the matched road where the episode
	// started ("" and 0 when that point was not matched).
	RoadType     string  `json:"road_type,omitempty"`
	RoadLimitKmh float64 `json:"road_limit_kmh,omitempty"`
}

// Metrics are the measurements of an Event; fields that do not apply to the
// event's type are zero.
type Metrics struct {
	// Harsh events: peak acceleration in g, negative for braking, the
	// lateral magnitude for cornering; the speed at the end of the episode
	// minus the speed at its start (negative for braking).
	AccelerationG  float64 `json:"acceleration_g,omitempty"`
	SpeedChangeKmh float64 `json:"speed_change_kmh,omitempty"`
	// Speeding: the limit, the highest speed of the episode and its excess
	// over the limit.
	SpeedLimitKmh  float64 `json:"speed_limit_kmh,omitempty"`
	ActualSpeedKmh float64 `json:"actual_speed_kmh,omitempty"`
	ExcessSpeedKmh float64 `json:"excess_speed_kmh,omitempty"`
	// Every type: End minus Start.
	DurationSeconds float64 `json:"duration_seconds"`
}

// Defaults that New applies to zero fields of Thresholds.
const (
	DefaultAccelerationG       = 0.35 // g, forward
	DefaultBrakingG            = 0.40 // g, magnitude of the deceleration
	DefaultCorneringG          = 0.40 // g, lateral
	DefaultMinHarshDuration    = time.Second
	DefaultOverLimitKmh        = 8.0 // about 5 mph
	DefaultMinSpeedingDuration = 10 * time.Second
	DefaultIdleSpeedKmh        = 3.0
	DefaultMinIdle             = 3 * time.Minute
	DefaultMaxAccuracyM        = 30.0
	DefaultMinSampleGap        = 200 * time.Millisecond
	DefaultMaxSampleGap        = 10 * time.Second
	DefaultMaxEpisodeGap       = 60 * time.Second
)

// Thresholds configure a Detector. The zero value is the documented default
// for every field (see the Default constants): harsh, speeding and idle
// detection enabled, no speed limit known (so no speeding events).
type Thresholds struct {
	HarshDisabled bool
	AccelerationG float64 // forward, g
	// BrakingG is the deceleration magnitude in g. Device settings give it
	// negative (-1.0 to -0.1); New takes the magnitude, so either sign works.
	BrakingG         float64
	CorneringG       float64 // lateral, g
	MinHarshDuration time.Duration

	SpeedingDisabled bool
	// SpeedLimitKmh is the limit that applies to the trip's points (the
	// device's or the organization's); 0 means none, so no speeding.
	SpeedLimitKmh float64
	// OverLimitKmh is the tolerance above the limit before speeding counts.
	// Device settings give it in mph (threshold_over_limit): the caller
	// converts. Zero takes the default; a negative value means no tolerance
	// (and reads back as -1).
	OverLimitKmh        float64
	MinSpeedingDuration time.Duration
	// SpeedingEvery throttles speeding events (the device's
	// alert_frequency): 0 reports every episode, a positive value at most
	// one episode starting within that time of the last one reported
	// (once_per_minute: a minute), and a negative value only the trip's
	// first (once_per_trip).
	SpeedingEvery time.Duration
	// SpeedingSummary: the device's speeding goes into a daily summary
	// (alert_frequency daily_summary). Every episode is judged as with
	// SpeedingEvery 0, but none is appended to Feed's or Flush's events:
	// the Detector holds them for Summarized.
	SpeedingSummary bool

	IdleDisabled bool
	IdleSpeedKmh float64 // at or below this speed the vehicle idles
	MinIdle      time.Duration

	// MaxAccuracyM: points with a worse reported accuracy are ignored.
	MaxAccuracyM float64
	// MinSampleGap: points closer than this to the previous admitted point
	// are ignored (decimation of high-rate data).
	MinSampleGap time.Duration
	// MaxSampleGap: the longest time between two samples that may drive a
	// harsh event.
	MaxSampleGap time.Duration
	// MaxEpisodeGap: a longer gap between points closes every episode.
	MaxEpisodeGap time.Duration
}

// Internal limits. Each is explained in doc.go.
const (
	gravity           = 9.80665 // m/s² per g
	kmh               = 1 / 3.6 // m/s per km/h
	ringSize          = 32      // samples kept; ≥ chordSpan at 1/MinSampleGap = 5 Hz
	kinSpan           = 900 * time.Millisecond
	chordSpan         = 2500 * time.Millisecond
	unknownAccuracyM  = 5.0
	reportedSpeedSD   = 0.5 * kmh         // m/s
	reportedHeadingSD = 1 * math.Pi / 180 // rad
	minHeadingSpeed   = 10 * kmh          // m/s
	maxPlausibleSpeed = 250 * kmh         // m/s, jump filter and derived speeds
	maxReportedSpeed  = 300.0             // km/h
	maxJumps          = 3
	harshHysteresis   = 0.75
	speedingHystKmh   = 3.0
)

// Severity bands: the lower bound of high and of critical.
const (
	accelHighG, accelCriticalG     = 0.50, 0.65
	brakeHighG, brakeCriticalG     = 0.60, 0.80
	cornerHighG, cornerCriticalG   = 0.55, 0.70
	speedHighKmh, speedCriticalKmh = 16.0, 32.0 // excess over the limit: 10 and 20 mph
	idleHigh, idleCritical         = 10 * time.Minute, 30 * time.Minute
)

// New returns a Detector for one trip. Zero, negative or NaN fields of t
// take their defaults; see doc.go for why there is no error.
func New(t Thresholds) *Detector {
	d := &Detector{}
	d.init(t)
	return d
}

// SetThresholds makes the points fed from now on judged by t; what the
// detector has seen (its samples and the episodes under way) stays.
func (d *Detector) SetThresholds(t Thresholds) {
	d.init(t)
}

func (d *Detector) init(t Thresholds) {
	t.AccelerationG = positiveOr(t.AccelerationG, DefaultAccelerationG)
	t.BrakingG = positiveOr(math.Abs(t.BrakingG), DefaultBrakingG)
	t.CorneringG = positiveOr(t.CorneringG, DefaultCorneringG)
	t.MinHarshDuration = durationOr(t.MinHarshDuration, DefaultMinHarshDuration)
	if !(t.SpeedLimitKmh > 0) || math.IsInf(t.SpeedLimitKmh, 0) {
		t.SpeedLimitKmh = 0
	}
	switch {
	case t.OverLimitKmh < 0:
		t.OverLimitKmh = -1 // no tolerance
	case t.OverLimitKmh == 0 || math.IsNaN(t.OverLimitKmh) || math.IsInf(t.OverLimitKmh, 0):
		t.OverLimitKmh = DefaultOverLimitKmh
	}
	t.MinSpeedingDuration = durationOr(t.MinSpeedingDuration, DefaultMinSpeedingDuration)
	t.IdleSpeedKmh = positiveOr(t.IdleSpeedKmh, DefaultIdleSpeedKmh)
	t.MinIdle = durationOr(t.MinIdle, DefaultMinIdle)
	t.MaxAccuracyM = positiveOr(t.MaxAccuracyM, DefaultMaxAccuracyM)
	t.MinSampleGap = durationOr(t.MinSampleGap, DefaultMinSampleGap)
	t.MaxSampleGap = durationOr(t.MaxSampleGap, DefaultMaxSampleGap)
	t.MaxEpisodeGap = durationOr(t.MaxEpisodeGap, DefaultMaxEpisodeGap)
	if t.MaxEpisodeGap < t.MaxSampleGap {
		t.MaxEpisodeGap = t.MaxSampleGap
	}

	d.t = t
	d.accThr = t.AccelerationG * gravity
	d.brkThr = t.BrakingG * gravity
	d.corThr = t.CorneringG * gravity
	d.idleV = t.IdleSpeedKmh * kmh
}

// speedBounds are the speeds (m/s) at which a speeding episode starts
// and goes on under a limit (km/h): the limit plus the tolerance, and
// that less the hysteresis but not under the limit.
func (d *Detector) speedBounds(limit float64) (start, cont float64) {
	s := limit + math.Max(d.t.OverLimitKmh, 0)
	return s * kmh, math.Max(limit, s-speedingHystKmh) * kmh
}

func positiveOr(v, def float64) float64 {
	if v > 0 && !math.IsInf(v, 0) {
		return v
	}
	return def
}

func durationOr(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}

// severityOf grades a harsh event by its peak magnitude in g, a speeding
// event by its excess in km/h and an idle event by its duration in seconds.
// SpeedingSeverity is the severity of a speeding episode over the limit
// by excessKmh, as its event would have.
func SpeedingSeverity(excessKmh float64) string { return severityOf(TypeSpeeding, excessKmh) }

func severityOf(typ string, magnitude float64) string {
	var high, critical float64
	switch typ {
	case TypeHarshAcceleration:
		high, critical = accelHighG, accelCriticalG
	case TypeHarshBraking:
		high, critical = brakeHighG, brakeCriticalG
	case TypeHarshCornering:
		high, critical = cornerHighG, cornerCriticalG
	case TypeSpeeding:
		high, critical = speedHighKmh, speedCriticalKmh
	case TypeIdle:
		high, critical = idleHigh.Seconds(), idleCritical.Seconds()
	}
	switch {
	case magnitude >= critical:
		return SeverityCritical
	case magnitude >= high:
		return SeverityHigh
	}
	return SeverityModerate
}
