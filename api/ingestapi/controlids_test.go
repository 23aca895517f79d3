package ingestapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api/ingestapi"
	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// TestIDsWithControlCharactersRefused: a telemetry vehicle_id, an
// event's source ids, location.geofence or metadata.correlation_id
// holding a control character (a newline, a NUL, DEL, a C1 control sent
// as is) is refused naming it, as a trip's vehicle_id is, on the
// service's fast reader and on the handler's general path alike, and
// nothing is published.
func TestIDsWithControlCharactersRefused(t *testing.T) {
	fast := start(t, "all")
	slow := startWith(t, func(s *telemetry.Service) ingestapi.Service { return generalOnly{s} }, "all")
	ids := map[string]string{`a\nb`: "a newline", `a\u0000b`: "a NUL", "a\x7fb": "DEL", "a\u0085b": "a C1 control"}
	for id, what := range ids {
		msg := strings.Replace(telemetryMsg("v", 1), `"vehicle_id":"v"`, `"vehicle_id":"`+id+`"`, 1)
		ev := func(field, value string) string {
			src := `"source":{"vehicle_id":"v"}`
			switch field {
			case "source.vehicle_id", "source.driver_id", "source.trip_id", "source.fleet_id":
				src = fmt.Sprintf(`"source":{"vehicle_id":"v",%q:"%s"}`, strings.TrimPrefix(field, "source."), value)
				if field == "source.vehicle_id" {
					src = `"source":{"vehicle_id":"` + value + `"}`
				}
			case "location.geofence":
				src += `,"location":{"latitude":40,"longitude":-83,"geofence":"` + value + `"}`
			case "metadata.correlation_id":
				src += `,"metadata":{"correlation_id":"` + value + `"}`
			}
			return fmt.Sprintf(`{"events":[{"event_type":"door_open","category":"vehicle_events","severity":"low","timestamp":%q,%s}]}`, now(-time.Second), src)
		}
		for _, s := range []*server{fast, slow} {
			r := s.post(t, "/v1/telemetry", ct, `{"messages":[`+msg+`]}`)
			if r.status != 400 || r.code() != "validation_failed" || r.details()["messages[0].vehicle_id"] != jsonpath.ControlRefusal {
				t.Errorf("telemetry vehicle_id with %s: %d %s", what, r.status, r.raw)
			}
			for _, f := range []string{"source.vehicle_id", "source.driver_id", "source.trip_id", "source.fleet_id", "location.geofence", "metadata.correlation_id"} {
				r := s.post(t, "/v1/events", ct, ev(f, id))
				if r.status != 400 || r.code() != "validation_failed" || r.details()["events[0]."+f] != jsonpath.ControlRefusal {
					t.Errorf("event %s with %s: %d %s", f, what, r.status, r.raw)
				}
			}
			if n := s.bus.count(); n != 0 {
				t.Fatalf("refused requests published %d messages", n)
			}
		}
	}
	if r := fast.post(t, "/v1/events", ct, strings.Replace(fmt.Sprintf(`{"events":[{"event_type":"door_open","category":"vehicle_events","severity":"low","timestamp":%q,"source":{"vehicle_id":"v é\u00a0ü"}}]}`, now(-time.Second)), `\u00a0`, "\u00a0", 1)); r.status != 202 {
		t.Errorf("an id with spaces and letters beyond ASCII: %d %s", r.status, r.raw)
	}
}
