package optimization_test

import (
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/api/optimization"
	domain "github.com/fleethub/fleethub/fleet/optimization"
)

// TestOpenAPINamesCostFields: the OpenAPI document describes the
// request's cost models, capacity rule, refused flags and priority
// weights, and the answer's cost and overload, each with its meaning.
func TestOpenAPINamesCostFields(t *testing.T) {
	doc := openAPISchemas(t)
	want := map[string][]string{
		"Vehicle":      {"fuel_consumption_l_per_100km", "cost_per_hour", "cost_per_km", "break_windows"},
		"Constraints":  {"vehicle_capacity_strict", "fuel_efficiency_priority", "delivery_time_priority", "cost_priority"},
		"Request":      {"real_time_traffic", "driver_preferences", "optimization_goals"},
		"RouteSummary": {"estimated_cost", "capacity_overload", "total_distance", "total_time"},
		"Performance":  {"capacity_overload", "cost_estimate"},
		"Improvement":  {"distance_saved", "time_saved", "fuel_saved", "cost_saved", "improvement_percentage"},
	}
	for name, fields := range want {
		var props map[string]json.RawMessage
		for k, s := range doc.Components.Schemas {
			if k == name || strings.HasSuffix(k, "."+name) || strings.HasSuffix(k, "_"+name) {
				props = s.Properties
			}
		}
		if props == nil {
			t.Errorf("no schema %s among %d", name, len(doc.Components.Schemas))
			continue
		}
		for _, f := range fields {
			if p, ok := props[f]; !ok || !strings.Contains(string(p), "description") {
				t.Errorf("%s.%s: %s", name, f, p)
			}
		}
	}
}

// TestOpenAPIDriverIDNullable: the OpenAPI document says a route's
// driver_id, in optimized_routes and in the runner-up plans, may be
// null, as it is for a vehicle without a driver.
func TestOpenAPIDriverIDNullable(t *testing.T) {
	doc := openAPISchemas(t)
	for _, name := range []string{"RouteView", "PlanRoute"} {
		found := false
		for k, s := range doc.Components.Schemas {
			if k == name || strings.HasSuffix(k, "."+name) {
				found = true
				if p := string(s.Properties["driver_id"]); !strings.Contains(p, `"null"`) {
					t.Errorf("%s.driver_id: %s", name, p)
				}
			}
		}
		if !found {
			t.Errorf("no schema %s", name)
		}
	}
}

// openAPISchemas is the OpenAPI document of the optimization routes,
// read as far as its schemas' properties.
func openAPISchemas(t *testing.T) (doc struct {
	Components struct {
		Schemas map[string]struct {
			Properties map[string]json.RawMessage `json:"properties"`
		} `json:"schemas"`
	} `json:"components"`
}) {
	t.Helper()
	srv := api.New(api.Config{Addr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler), prometheus.NewRegistry(), auth{}, nil)
	srv.Handle(optimization.New(domain.New(domain.Config{}, nil, nil, nil)).Routes()...)
	raw, err := json.Marshal(srv.OpenAPI())
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
