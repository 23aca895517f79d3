package health

import "time"

// Report is the GET /v1/trips/health answer.
type Report struct {
	Status        string            `json:"status" enum:"healthy,degraded,unhealthy"`
	Timestamp     time.Time         `json:"timestamp"`
	Version       string            `json:"version" source:"constant"`
	UptimeSeconds int64             `json:"uptime_seconds" source:"measured"`
	Service       string            `json:"service" source:"constant"`
	Database      DatabaseView      `json:"database"`
	ActiveTrips   TripsView         `json:"active_trips"`
	Performance   PerformanceView   `json:"performance"`
	Dependencies  map[string]string `json:"dependencies" source:"measured"`
}

// DatabaseView is the store part of the report.
type DatabaseView struct {
	Status            string  `json:"status" enum:"healthy,degraded,unhealthy"`
	Provider          string  `json:"provider"`
	ResponseTimeMS    float64 `json:"response_time_ms" source:"measured"`
	ActiveConnections int     `json:"active_connections" source:"measured"`
	OpenConnections   int     `json:"open_connections" source:"measured"`
}

// TripsView counts active trips; its fields are null when they could not
// be counted (no trip service, or the store failed before any count).
type TripsView struct {
	TotalCount         *int     `json:"total_count" source:"measured" doc:"null when the trips could not be counted"`
	OrganizationCount  *int     `json:"organization_count" source:"measured" doc:"null when the trips could not be counted"`
	AvgDurationMinutes *float64 `json:"avg_duration_minutes" source:"measured" doc:"the mean time since the open trips started; null when there is none to average (total_count 0) or the trips could not be counted"`
}

// PerformanceView is the last minute of requests.
type PerformanceView struct {
	RequestsPerMinute int64    `json:"requests_per_minute" source:"measured"`
	AvgResponseTimeMS *float64 `json:"avg_response_time_ms" source:"measured" doc:"the mean latency of the last minute's requests; null when none was answered in the last minute"`
	ErrorRatePercent  *float64 `json:"error_rate_percent" source:"measured" doc:"the share of the last minute's requests answered 5xx (501 aside); null when none was answered in the last minute"`
}

func rank(s string) int {
	switch s {
	case Unhealthy:
		return 2
	case Degraded:
		return 1
	}
	return 0
}

func worst(a, b string) string {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

func band(v, degradedAt, unhealthyAbove float64) string {
	switch {
	case v > unhealthyAbove:
		return Unhealthy
	case v >= degradedAt:
		return Degraded
	}
	return Healthy
}

func round(v float64) float64 { return float64(int64(v*100+0.5)) / 100 }
