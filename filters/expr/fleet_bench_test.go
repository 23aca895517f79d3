package expr_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

// BenchmarkIndexMatchFleet is the dispatch-console shape: 10,000 active
// streams, each following the vehicles of its own fleet (5 of 50,000
// vehicles, 60 % with a category or severity filter, 20 % with a custom
// condition), against events of random vehicles; a message is delivered
// to one or two streams, the rest are never looked at.
func BenchmarkIndexMatchFleet(b *testing.B) {
	var ix expr.Index[int]
	for i := 0; i < 10_000; i++ {
		s := expr.Spec{Kind: expr.KindEvent}
		for v := 0; v < 5; v++ {
			s.VehicleIDs = append(s.VehicleIDs, fmt.Sprintf("veh-%05d", i*5+v))
		}
		if i%5 < 3 {
			s.Categories = []string{"safety_events", "emergency_events"}
			s.Severities = []string{"high", "critical"}
		}
		if i%5 == 4 {
			s.Conditions = []expr.Condition{{Field: "event_data.deceleration_g", Operator: ">", Value: 0.3}}
		}
		p, err := expr.Compile(s)
		if err != nil {
			b.Fatal(err)
		}
		ix.Add(i, p)
	}
	envs := make([]*event.Envelope, 1024)
	for i := range envs {
		envs[i] = &event.Envelope{Org: "o", Env: "test", Kind: event.KindEvent, Event: &event.Event{
			EventID: fmt.Sprint(i), EventType: "harsh_braking", Category: "safety_events", Severity: "high", Priority: "urgent",
			Timestamp: time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC), Source: event.Source{VehicleID: fmt.Sprintf("veh-%05d", (i*7919)%50_000)},
			EventData: map[string]any{"deceleration_g": 0.5}}}
	}
	out := make([]int, 0, 16)
	matched := 0
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		out = ix.Match(envs[i%len(envs)], out[:0])
		matched += len(out)
	}
	b.ReportMetric(float64(matched)/float64(b.N), "matches/op")
}
