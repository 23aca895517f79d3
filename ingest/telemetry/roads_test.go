package telemetry_test

import (
	"context"
	"testing"

	"github.com/fleethub/fleethub/ingest/telemetry"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
)

// TestEventsGetTheirRoad: with the road network of the routing engine's
// tiny extract, an event on Main Street (residential, no maxspeed: 40
// km/h) without speed_limit and road_type gets both; what the sender
// gave is kept; an event off the network keeps its location as sent.
func TestEventsGetTheirRoad(t *testing.T) {
	g, err := routing.Load("../../internal/routing/testdata/tiny.osm.pbf", routing.Options{Costings: []routing.Costing{}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, telemetry.Config{Roads: mapmatch.New(g, routing.Auto, mapmatch.Config{})})
	ev := func(id, loc string) string {
		return `{"event_id":"` + id + `","event_type":"door_open","category":"vehicle_events","timestamp":"2026-11-23T09:00:00Z","severity":"low","source":{"vehicle_id":"veh-1"},"location":` + loc + `}`
	}
	body := "[" + ev("bare", `{"latitude":40.0005,"longitude":-83.00002}`) + "," +
		ev("typed", `{"latitude":40.0005,"longitude":-83.00002,"road_type":"urban"}`) + "," +
		ev("limited", `{"latitude":40.0005,"longitude":-83.00002,"speed_limit":30,"road_type":"urban"}`) + "," +
		ev("far", `{"latitude":41,"longitude":-83}`) + "]"
	if _, err := f.svc.IngestEvents(context.Background(), "org-a", "live", objs(t, body)); err != nil {
		t.Fatal(err)
	}
	want := map[string]struct {
		limit float64 // 0: none
		road  string
	}{"bare": {40, "residential"}, "typed": {40, "urban"}, "limited": {30, "urban"}, "far": {0, ""}}
	ms := all(t, f.bus.take())
	if len(ms) != len(want) {
		t.Fatalf("%d messages", len(ms))
	}
	for _, m := range ms {
		e := m.env.Event
		w := want[e.EventID]
		l := e.Location
		if got := 0.0; l.SpeedLimit != nil {
			got = *l.SpeedLimit
			if got != w.limit {
				t.Errorf("%s: speed_limit %v, want %v", e.EventID, got, w.limit)
			}
		} else if w.limit != 0 {
			t.Errorf("%s: no speed_limit, want %v", e.EventID, w.limit)
		}
		if l.RoadType != w.road {
			t.Errorf("%s: road_type %q, want %q", e.EventID, l.RoadType, w.road)
		}
	}
}
