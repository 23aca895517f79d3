package trips

import "time"

// Location is a place in requests and responses.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Address   string  `json:"address,omitempty"`
}

// HarshEvents counts harsh events by type.
type HarshEvents struct {
	HarshAcceleration int `json:"harsh_acceleration"`
	HarshBraking      int `json:"harsh_braking"`
	HarshCornering    int `json:"harsh_cornering"`
	Speeding          int `json:"speeding"`
}

// FuelEfficiency of a trip.
type FuelEfficiency struct {
	FuelConsumedLiters float64 `json:"fuel_consumed_liters"`
	FuelEfficiencyKmpl float64 `json:"fuel_efficiency_kmpl"`
}

// Analytics is the full Trip analytics object.
type Analytics struct {
	DistanceKm      float64        `json:"distance_km"`
	DurationMinutes float64        `json:"duration_minutes"`
	MaxSpeedKmh     float64        `json:"max_speed_kmh"`
	AvgSpeedKmh     float64        `json:"avg_speed_kmh"`
	IdleTimeMinutes float64        `json:"idle_time_minutes"`
	LocationsCount  int            `json:"locations_count"`
	EventsCount     int            `json:"events_count"`
	SafetyScore     float64        `json:"safety_score"`
	EcoScore        float64        `json:"eco_score"`
	HarshEvents     HarshEvents    `json:"harsh_events"`
	FuelEfficiency  FuelEfficiency `json:"fuel_efficiency"`
}

// ListAnalytics is the subset of analytics in list items.
type ListAnalytics struct {
	DistanceKm      float64 `json:"distance_km"`
	DurationMinutes float64 `json:"duration_minutes"`
	AvgSpeedKmh     float64 `json:"avg_speed_kmh"`
	MaxSpeedKmh     float64 `json:"max_speed_kmh"`
	SafetyScore     float64 `json:"safety_score"`
	EcoScore        float64 `json:"eco_score"`
	EventsCount     int     `json:"events_count"`
}

// Trip is the full trip resource.
type Trip struct {
	TripID             string         `json:"trip_id"`
	OrganizationID     string         `json:"organization_id"`
	VehicleID          string         `json:"vehicle_id"`
	DriverID           string         `json:"driver_id"`
	Status             string         `json:"status" enum:"active,paused,completed,cancelled,interrupted"`
	StartTime          time.Time      `json:"start_time"`
	EndTime            *time.Time     `json:"end_time"`
	StartLocation      *Location      `json:"start_location"`
	EndLocation        *Location      `json:"end_location"`
	Metadata           map[string]any `json:"metadata"`
	Analytics          Analytics      `json:"analytics"`
	PausedAt           *time.Time     `json:"paused_at,omitempty"`
	PauseCount         int            `json:"pause_count"`
	TotalPauseDuration float64        `json:"total_pause_duration" doc:"seconds"`
	DeviceInfo         *DeviceRecord  `json:"device_info,omitempty" doc:"the latest model, OS and app versions the uploading device reported"`
	OdometerReading    *int64         `json:"odometer_reading,omitempty" doc:"as the stop gave it (kilometers or miles by the organization's use); recorded, not used in the GPS distance"`
	FuelLevelPercent   *float64       `json:"fuel_level_percent,omitempty" doc:"as the stop gave it; recorded, not used in the fuel estimate"`
	CreatedAt          time.Time      `json:"created_at"`
	UpdatedAt          time.Time      `json:"updated_at"`
}

// ListItem is a trip in GET /v1/trips.
type ListItem struct {
	TripID         string         `json:"trip_id"`
	OrganizationID string         `json:"organization_id"`
	VehicleID      string         `json:"vehicle_id"`
	DriverID       string         `json:"driver_id"`
	Status         string         `json:"status" enum:"active,paused,completed,cancelled,interrupted"`
	StartTime      time.Time      `json:"start_time"`
	EndTime        *time.Time     `json:"end_time"`
	StartLocation  *Location      `json:"start_location"`
	EndLocation    *Location      `json:"end_location"`
	Metadata       map[string]any `json:"metadata"`
	Analytics      *ListAnalytics `json:"analytics,omitempty"`
	CreatedAt      time.Time      `json:"created_at"`
	UpdatedAt      time.Time      `json:"updated_at"`
}

// StopResult is the answer of stop.
type StopResult struct {
	TripID         string     `json:"trip_id"`
	OrganizationID string     `json:"organization_id"`
	VehicleID      string     `json:"vehicle_id"`
	DriverID       string     `json:"driver_id"`
	Status         string     `json:"status" enum:"completed,cancelled,interrupted"`
	StartTime      time.Time  `json:"start_time"`
	EndTime        time.Time  `json:"end_time"`
	StartLocation  *Location  `json:"start_location"`
	EndLocation    *Location  `json:"end_location"`
	Analytics      Analytics  `json:"analytics"`
	OdometerKm     *int64     `json:"odometer_reading,omitempty"`
	FuelLevel      *float64   `json:"fuel_level_percent,omitempty"`
	UpdatedAt      time.Time  `json:"updated_at"`
	PausedAt       *time.Time `json:"-"`
}

// PauseResult is the answer of pause.
type PauseResult struct {
	Success    bool      `json:"success"`
	TripID     string    `json:"trip_id"`
	Status     string    `json:"status" enum:"paused"`
	PausedAt   time.Time `json:"paused_at"`
	PauseCount int       `json:"pause_count"`
	Reason     string    `json:"reason,omitempty"`
	Location   *Location `json:"pause_location,omitempty"`
	Message    string    `json:"message"`
}

// ResumeResult is the answer of resume.
type ResumeResult struct {
	Success            bool      `json:"success"`
	TripID             string    `json:"trip_id"`
	Status             string    `json:"status" enum:"active"`
	ResumedAt          time.Time `json:"resumed_at"`
	TotalPauseDuration float64   `json:"total_pause_duration" doc:"seconds"`
	PauseCount         int       `json:"pause_count"`
	ResumeLocation     *Location `json:"resume_location"`
	DistanceFromPause  float64   `json:"distance_from_pause" doc:"kilometers"`
	Message            string    `json:"message"`
}

// DetectedEvent is an event in upload responses.
type DetectedEvent struct {
	EventID    string         `json:"event_id"`
	EventType  string         `json:"event_type" enum:"harsh_acceleration,harsh_braking,harsh_cornering,speeding,idle"`
	Timestamp  *time.Time     `json:"timestamp,omitempty"`
	Severity   string         `json:"severity" enum:"moderate,high,critical"`
	Confidence *float64       `json:"confidence,omitempty"`
	Location   *Location      `json:"location,omitempty"`
	Metrics    map[string]any `json:"metrics"`
}

// LastLocation is the last accepted point.
type LastLocation struct {
	Latitude  float64   `json:"latitude"`
	Longitude float64   `json:"longitude"`
	Timestamp time.Time `json:"timestamp"`
	SpeedKmh  *float64  `json:"speed_kmh"`
	// the device's state the point reported, when it did
	BatteryLevel *float64 `json:"battery_level,omitempty"`
	NetworkType  string   `json:"network_type,omitempty" enum:"wifi,cellular,offline"`
}

// BatchAnalytics is the snapshot in batch responses.
type BatchAnalytics struct {
	CurrentDistanceKm      float64       `json:"current_distance_km"`
	CurrentDurationMinutes float64       `json:"current_duration_minutes"`
	CurrentSafetyScore     float64       `json:"current_safety_score"`
	LocationsCount         int           `json:"locations_count"`
	LastLocation           *LastLocation `json:"last_location"`
	AvgSpeedKmh            float64       `json:"avg_speed_kmh"`
}

// SingleAnalytics is the snapshot in single responses.
type SingleAnalytics struct {
	DistanceKm         float64 `json:"distance_km"`
	DurationMinutes    float64 `json:"duration_minutes"`
	AvgSpeedKmh        float64 `json:"avg_speed_kmh"`
	CurrentSafetyScore float64 `json:"current_safety_score"`
	LocationsCount     int     `json:"locations_count"`
	MaxSpeedKmh        float64 `json:"max_speed_kmh"`
	IdleTimeMinutes    float64 `json:"idle_time_minutes"`
}

// Rejection says why a point was skipped.
type Rejection struct {
	Index  int    `json:"index"`
	Reason string `json:"reason" enum:"duplicate_timestamp,before_trip_start,future_timestamp,too_late"`
}

// BatchResult is the answer of a batch upload.
type BatchResult struct {
	TripID           string          `json:"trip_id"`
	ProcessedCount   int             `json:"processed_count"`
	RejectedCount    int             `json:"rejected_count"`
	Rejections       []Rejection     `json:"rejections,omitempty"`
	EventsDetected   []DetectedEvent `json:"events_detected"`
	TripAnalytics    BatchAnalytics  `json:"trip_analytics"`
	ProcessingTimeMS float64         `json:"processing_time_ms"`
}

// Quality is the quality assessment of a single point.
type Quality struct {
	AccuracyRating     string  `json:"accuracy_rating" enum:"excellent,good,fair,poor,unknown"`
	SignalQuality      string  `json:"signal_quality" enum:"excellent,good,fair,poor,unknown"`
	DeviationFromRoute float64 `json:"deviation_from_route" doc:"meters from the line through the previous two points"`
	GPSFixType         string  `json:"gps_fix_type" enum:"3d,2d,none"`
	HDOP               float64 `json:"hdop"`
}

// SingleResult is the answer of a single upload.
type SingleResult struct {
	TripID            string          `json:"trip_id"`
	LocationID        string          `json:"location_id"`
	ProcessedAt       time.Time       `json:"processed_at"`
	Accepted          bool            `json:"accepted"`
	RejectionReason   string          `json:"rejection_reason,omitempty"`
	EventsDetected    []DetectedEvent `json:"events_detected"`
	TripAnalytics     SingleAnalytics `json:"trip_analytics"`
	QualityAssessment Quality         `json:"quality_assessment"`
	ProcessingTimeMS  float64         `json:"processing_time_ms"`
}
