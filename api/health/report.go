package health

import "time"

// Report is the GET /v1/trips/health answer.
type Report struct {
	Status        string            `json:"status" enum:"healthy,degraded,unhealthy"`
	Timestamp     time.Time         `json:"timestamp"`
	Version       string            `json:"version"`
	UptimeSeconds int64             `json:"uptime_seconds"`
	Service       string            `json:"service"`
	Database      DatabaseView      `json:"database"`
	ActiveTrips   TripsView         `json:"active_trips"`
	Performance   PerformanceView   `json:"performance"`
	Dependencies  map[string]string `json:"dependencies"`
}

// DatabaseView is the store part of the report.
type DatabaseView struct {
	Status            string  `json:"status" enum:"healthy,degraded,unhealthy"`
	Provider          string  `json:"provider"`
	ResponseTimeMS    float64 `json:"response_time_ms"`
	ActiveConnections int     `json:"active_connections"`
	OpenConnections   int     `json:"open_connections"`
}

// TripsView counts active trips.
type TripsView struct {
	TotalCount         int     `json:"total_count"`
	OrganizationCount  int     `json:"organization_count"`
	AvgDurationMinutes float64 `json:"avg_duration_minutes"`
}

// PerformanceView is the last minute of requests.
type PerformanceView struct {
	RequestsPerMinute int64   `json:"requests_per_minute"`
	AvgResponseTimeMS float64 `json:"avg_response_time_ms"`
	ErrorRatePercent  float64 `json:"error_rate_percent"`
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
