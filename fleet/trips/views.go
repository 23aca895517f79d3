package trips

import "time"

// optional is s, or nil when s is empty: an identifier the trip was
// started without is rendered null, never "".
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Location is a place in requests and responses.
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Address   *string `json:"address" doc:"as the request or the trip's start gave it; null when none was given: places are not reverse geocoded"`
}

// addressOf is l's address, "" when it has none.
func (l *Location) addressOf() string {
	if l.Address == nil {
		return ""
	}
	return *l.Address
}

// HarshEvents counts harsh events by type.
type HarshEvents struct {
	HarshAcceleration int `json:"harsh_acceleration" source:"computed"`
	HarshBraking      int `json:"harsh_braking" source:"computed"`
	HarshCornering    int `json:"harsh_cornering" source:"computed"`
	Speeding          int `json:"speeding" source:"computed"`
}

// FuelEfficiency of a trip: fuel_model and fuel_source say what the
// figures rest on, so that none passes for a measurement.
type FuelEfficiency struct {
	FuelConsumedLiters float64  `json:"fuel_consumed_liters" source:"computed" doc:"from the fuel level's drop (fuel_source fuel_level) or estimated by fuel_model; 0 for an electric vehicle"`
	FuelEfficiencyKmpl *float64 `json:"fuel_efficiency_kmpl" source:"computed" doc:"distance_km / fuel_consumed_liters; null while the trip has burnt no fuel (no distance or idling yet, or an electric vehicle): kilometers per no liter are no efficiency"`
	FuelModel          string   `json:"fuel_model" enum:"vehicle_profile,default" doc:"vehicle_profile: the consumption (or the electric fuel type) of the vehicle's profile; default: 8 L/100 km for every vehicle"`
	FuelSource         string   `json:"fuel_source" enum:"fuel_level,model" doc:"fuel_level: the drop between the start's and the stop's fuel_level_percent times the profile's tank_capacity_liters (an electric vehicle's: battery_capacity_kwh, into energy_consumed_kwh); model: estimated by fuel_model"`
	FuelType           string   `json:"fuel_type,omitempty" enum:"gasoline,diesel,hybrid,lpg,electric" doc:"the vehicle profile's"`
	EnergyConsumedKWh  *float64 `json:"energy_consumed_kwh,omitempty" source:"computed" doc:"an electric vehicle's: from the drop of its state of charge times battery_capacity_kwh (fuel_source fuel_level), else estimated from its profile's energy_consumption_kwh_per_100km"`
}

// Analytics is the full Trip analytics object.
type Analytics struct {
	DistanceKm         float64        `json:"distance_km" source:"computed" doc:"the odometer's difference when distance_source is odometer, else the GPS distance"`
	GPSDistanceKm      float64        `json:"gps_distance_km" source:"computed" doc:"the length of the uploaded track"`
	OdometerDistanceKm *float64       `json:"odometer_distance_km,omitempty" source:"computed" doc:"the stop's odometer_reading less the start's, in km, when both are known, used or not"`
	DistanceSource     string         `json:"distance_source" enum:"odometer,gps" doc:"odometer when the odometer's difference agrees with the track (docs/trips.md), else gps"`
	DurationMinutes    float64        `json:"duration_minutes" source:"computed"`
	MaxSpeedKmh        *float64       `json:"max_speed_kmh" source:"computed" doc:"null while the trip has no accepted location: nothing was measured"`
	AvgSpeedKmh        *float64       `json:"avg_speed_kmh" source:"computed" doc:"distance over duration; null while the trip's accepted locations span no time (none, or a single point)"`
	IdleTimeMinutes    float64        `json:"idle_time_minutes" source:"computed"`
	LocationsCount     int            `json:"locations_count" source:"computed"`
	EventsCount        int            `json:"events_count" source:"computed"`
	SafetyScore        *float64       `json:"safety_score" source:"computed" doc:"0-100 (docs/analytics.md); null while the trip has no accepted location: it has driven nothing to score"`
	EcoScore           *float64       `json:"eco_score" source:"computed" doc:"0-100 (docs/analytics.md); null while the trip has no accepted location"`
	HarshEvents        HarshEvents    `json:"harsh_events"`
	FuelEfficiency     FuelEfficiency `json:"fuel_efficiency"`

	stored storedScores // the scores of the trip's store row (totalsOf)
}

// storedScores are a trip's safety and eco scores as its summary holds
// them, 100 for a trip without locations, which the answers show as null.
type storedScores struct{ safety, eco float64 }

// ListAnalytics is the subset of analytics in list items.
type ListAnalytics struct {
	DistanceKm      float64  `json:"distance_km" source:"computed"`
	DurationMinutes float64  `json:"duration_minutes" source:"computed"`
	AvgSpeedKmh     *float64 `json:"avg_speed_kmh" source:"computed" doc:"distance over duration; null while the trip's accepted locations span no time (none, or a single point)"`
	MaxSpeedKmh     *float64 `json:"max_speed_kmh" source:"computed" doc:"null while the trip has no accepted location"`
	SafetyScore     *float64 `json:"safety_score" source:"computed" doc:"null while the trip has no accepted location"`
	EcoScore        *float64 `json:"eco_score" source:"computed" doc:"null while the trip has no accepted location"`
	EventsCount     int      `json:"events_count" source:"computed"`
}

// Trip is the full trip resource.
type Trip struct {
	TripID             string         `json:"trip_id"`
	OrganizationID     string         `json:"organization_id"`
	VehicleID          string         `json:"vehicle_id"`
	DriverID           *string        `json:"driver_id" doc:"null when the trip was started without a driver"`
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
	OdometerReading    *int64         `json:"odometer_reading,omitempty" doc:"as the stop gave it, in the vehicle profile's odometer_unit (km without a profile)"`
	FuelLevelPercent   *float64       `json:"fuel_level_percent,omitempty" doc:"as the stop gave it"`
	// the readings the trip started with: the vehicle's previous trip's
	// stop readings
	StartOdometerReading  *int64    `json:"start_odometer_reading,omitempty" doc:"the odometer_reading the vehicle's previous trip was stopped with, when it ended before this one started"`
	StartFuelLevelPercent *float64  `json:"start_fuel_level_percent,omitempty" doc:"the fuel_level_percent the vehicle's previous trip was stopped with, when it ended before this one started"`
	CreatedAt             time.Time `json:"created_at"`
	UpdatedAt             time.Time `json:"updated_at"`
}

// ListItem is a trip in GET /v1/trips.
type ListItem struct {
	TripID         string         `json:"trip_id"`
	OrganizationID string         `json:"organization_id"`
	VehicleID      string         `json:"vehicle_id"`
	DriverID       *string        `json:"driver_id" doc:"null when the trip was started without a driver"`
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
	TripID         string    `json:"trip_id"`
	OrganizationID string    `json:"organization_id"`
	VehicleID      string    `json:"vehicle_id"`
	DriverID       *string   `json:"driver_id" doc:"null when the trip was started without a driver"`
	Status         string    `json:"status" enum:"completed,cancelled,interrupted"`
	StartTime      time.Time `json:"start_time"`
	EndTime        time.Time `json:"end_time"`
	StartLocation  *Location `json:"start_location"`
	EndLocation    *Location `json:"end_location"`
	Analytics      Analytics `json:"analytics"`
	OdometerKm     *int64    `json:"odometer_reading,omitempty"`
	FuelLevel      *float64  `json:"fuel_level_percent,omitempty"`
	// the readings the trip started with (Trip's)
	StartOdometerReading  *int64     `json:"start_odometer_reading,omitempty"`
	StartFuelLevelPercent *float64   `json:"start_fuel_level_percent,omitempty"`
	UpdatedAt             time.Time  `json:"updated_at"`
	PausedAt              *time.Time `json:"-"`
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
	ResumeLocation     *Location `json:"resume_location" doc:"the request's location, else the pause location; null when neither is known"`
	DistanceFromPause  *float64  `json:"distance_from_pause" doc:"kilometers between the pause location and resume_location; null when either is unknown (a trip paused without a location before its first point)" source:"computed"`
	Message            string    `json:"message"`
}

// DetectedEvent is an event in upload responses.
type DetectedEvent struct {
	EventID    string         `json:"event_id"`
	EventType  string         `json:"event_type" enum:"harsh_acceleration,harsh_braking,harsh_cornering,speeding,idle"`
	Timestamp  *time.Time     `json:"timestamp,omitempty"`
	Severity   string         `json:"severity" enum:"moderate,high,critical" source:"computed"`
	Confidence *float64       `json:"confidence,omitempty" source:"computed"`
	Location   *Location      `json:"location,omitempty"`
	Metrics    map[string]any `json:"metrics" source:"computed" doc:"the episode's measurements; speeding's speed_limit_kmh is the limit it was judged by, the device's or --speed-limit-kmh (match: none). With --osm speeding is judged against the matched roads by the road matcher after the upload's answer, and published on the events stream rather than listed here"`
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
	CurrentDistanceKm      float64       `json:"current_distance_km" source:"computed"`
	CurrentDurationMinutes float64       `json:"current_duration_minutes" source:"computed"`
	CurrentSafetyScore     *float64      `json:"current_safety_score" source:"computed" doc:"null while the trip has no accepted location"`
	LocationsCount         int           `json:"locations_count" source:"computed"`
	LastLocation           *LastLocation `json:"last_location"`
	AvgSpeedKmh            *float64      `json:"avg_speed_kmh" source:"computed" doc:"distance over duration; null while the trip's accepted locations span no time (none, or a single point)"`
}

// SingleAnalytics is the snapshot in single responses.
type SingleAnalytics struct {
	DistanceKm         float64  `json:"distance_km" source:"computed"`
	DurationMinutes    float64  `json:"duration_minutes" source:"computed"`
	AvgSpeedKmh        *float64 `json:"avg_speed_kmh" source:"computed" doc:"distance over duration; null while the trip's accepted locations span no time (none, or a single point)"`
	CurrentSafetyScore *float64 `json:"current_safety_score" source:"computed" doc:"null while the trip has no accepted location"`
	LocationsCount     int      `json:"locations_count" source:"computed"`
	MaxSpeedKmh        *float64 `json:"max_speed_kmh" source:"computed" doc:"null while the trip has no accepted location"`
	IdleTimeMinutes    float64  `json:"idle_time_minutes" source:"computed"`
}

// Rejection says why a point was skipped.
type Rejection struct {
	Index  int    `json:"index"`
	Reason string `json:"reason" enum:"duplicate_timestamp,before_trip_start,future_timestamp,too_late,during_pause"`
}

// BatchResult is the answer of a batch upload.
type BatchResult struct {
	TripID           string          `json:"trip_id"`
	ProcessedCount   int             `json:"processed_count"`
	RejectedCount    int             `json:"rejected_count"`
	Rejections       []Rejection     `json:"rejections,omitempty"`
	EventsDetected   []DetectedEvent `json:"events_detected"`
	TripAnalytics    BatchAnalytics  `json:"trip_analytics"`
	ProcessingTimeMS float64         `json:"processing_time_ms" source:"measured"`
}

// Quality is the quality assessment of a single point.
type Quality struct {
	AccuracyRating     string   `json:"accuracy_rating" enum:"excellent,good,fair,poor,unknown" source:"computed" doc:"from accuracy_meters; unknown without it"`
	SignalQuality      string   `json:"signal_quality" enum:"excellent,good,fair,poor,unknown" source:"computed" doc:"from device_info.signal_strength, else satellites_count; unknown without either"`
	DeviationFromRoute *float64 `json:"deviation_from_route" source:"computed" doc:"meters of the point from the path the previous point was heading along; null without a previous point that had a heading"`
	GPSFixType         string   `json:"gps_fix_type" enum:"3d,2d,none,unknown" source:"computed" doc:"from device_info.satellites_count (4 or more 3d, 3 2d, fewer none); unknown without it"`
	HDOP               *float64 `json:"hdop" source:"computed" doc:"estimated as accuracy_meters / 5 (a user range error of about 5 m); null without accuracy_meters"`
}

// SingleResult is the answer of a single upload.
type SingleResult struct {
	TripID            string          `json:"trip_id"`
	LocationID        *string         `json:"location_id" doc:"the stored point's id; null when the point was not stored (accepted false)"`
	ProcessedAt       time.Time       `json:"processed_at" doc:"when the service processed the point; UTC, to the millisecond"`
	Accepted          bool            `json:"accepted"`
	RejectionReason   string          `json:"rejection_reason,omitempty" enum:"duplicate_timestamp,before_trip_start,future_timestamp,too_late,during_pause" doc:"why the point was skipped, when accepted is false"`
	EventsDetected    []DetectedEvent `json:"events_detected"`
	TripAnalytics     SingleAnalytics `json:"trip_analytics"`
	QualityAssessment Quality         `json:"quality_assessment"`
	ProcessingTimeMS  float64         `json:"processing_time_ms" source:"measured"`
}
