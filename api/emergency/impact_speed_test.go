package emergency_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// TestImpactSpeedFromAFreshPointOnly: a crash's estimated_speed_at_impact
// is the speed of its trip's last point only when that point lies within
// a minute of the report; a speed reported ten minutes before (a trip
// whose device stopped uploading, a trip stopped since) says nothing of
// the crash, and is null, as the occupant risk it would have set is
// unknown.
func TestImpactSpeedFromAFreshPointOnly(t *testing.T) {
	f := start(t, testdb.SQLite)
	now := time.Now().UTC()
	for _, c := range []struct {
		trip  string
		age   time.Duration
		speed any
		risk  string
	}{
		{"trp_fresh", 10 * time.Second, 72.0, "high"},
		{"trp_stale", 10 * time.Minute, nil, "unknown"},
	} {
		state, _ := json.Marshal(map[string]any{"last": map[string]any{"ts": now.Add(-c.age).UnixMilli(), "lat": 40.0, "lon": -83.0, "speed": 72.0}})
		if err := f.st.CreateTrip(t.Context(), store.Trip{ID: c.trip, Org: "org-a", Env: "test", VehicleID: "veh_" + c.trip, Status: store.TripActive,
			StartTime: now.Add(-time.Hour), StartLocation: &store.Place{Latitude: 40, Longitude: -83}, Metadata: []byte(`{}`), MetadataHistory: []byte(`[]`), State: state,
			CreatedAt: now, UpdatedAt: now}); err != nil {
			t.Fatal(err)
		}
		code, in := f.do("POST", "/v1/emergency/incidents", map[string]any{"event_type": "crash", "severity_level": "high",
			"location": map[string]any{"latitude": 40.0, "longitude": -83.0}, "trip_id": c.trip})
		ca, _ := in["crash_analysis"].(map[string]any)
		if v, ok := ca["estimated_speed_at_impact"]; code != 201 || !ok || v != c.speed || ca["occupant_risk_level"] != c.risk {
			t.Errorf("a crash on a trip whose last point (72 km/h) is %v old: %d %v, want estimated_speed_at_impact %v and risk %s", c.age, code, ca, c.speed, c.risk)
		}
	}
}
