package expr_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

// gen makes random programs and messages over a pool of vehicles.
type gen struct {
	r        *rand.Rand
	vehicles int
}

func (g *gen) vehicle() string { return fmt.Sprintf("veh_%d", g.r.IntN(g.vehicles)) }

// msgVehicle is a message's vehicle id: now and then none.
func (g *gen) msgVehicle() string {
	if g.r.IntN(50) == 0 {
		return ""
	}
	return g.vehicle()
}

func (g *gen) pick(list []string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = list[g.r.IntN(len(list))]
	}
	return out
}

// spec returns a random spec: 80% per-vehicle streams, 19.9% category-
// or data-type-only, 0.1% wildcards; a quarter are telemetry streams.
func (g *gen) spec() expr.Spec {
	var s expr.Spec
	if g.r.IntN(4) == 0 {
		s.Kind = expr.KindTelemetry
	} else {
		s.Kind = expr.KindEvent
	}
	switch x := g.r.IntN(1000); {
	case x < 800:
		s.VehicleIDs = make([]string, 1+g.r.IntN(5))
		for i := range s.VehicleIDs {
			s.VehicleIDs[i] = g.vehicle()
		}
	case x < 999:
		if s.Kind == expr.KindEvent {
			s.Categories = g.pick(event.Categories, 1+g.r.IntN(2))
		} else {
			s.DataTypes = g.pick(event.DataTypes, 1+g.r.IntN(2))
		}
	}
	if s.Kind == expr.KindEvent {
		if g.r.IntN(3) == 0 && len(s.Categories) == 0 {
			s.Categories = g.pick(event.Categories, 1+g.r.IntN(3))
		}
		if g.r.IntN(3) == 0 {
			s.Severities = g.pick(event.Severities, 1+g.r.IntN(2))
		}
		if g.r.IntN(10) == 0 {
			s.ExcludeWeekends = true
			s.Timezone = []string{"America/New_York", "Asia/Tokyo", "UTC"}[g.r.IntN(3)]
		}
		switch g.r.IntN(10) {
		case 0:
			s.Conditions = append(s.Conditions, cond("source.vehicle_id", "in", []any{g.vehicle(), g.vehicle()}))
		case 1:
			s.Conditions = append(s.Conditions, cond("category", "=", g.pick(event.Categories, 1)[0]))
		case 2:
			s.Conditions = append(s.Conditions, cond("event_data.speed", ">", float64(g.r.IntN(100))))
		}
	} else {
		if g.r.IntN(10) == 0 {
			s.AlertThresholds = map[string]float64{"engine_rpm": float64(g.r.IntN(5000))}
		}
		switch g.r.IntN(20) {
		case 0, 1:
			s.Conditions = append(s.Conditions, cond("data_type", "in", []any{"fuel_system", "engine_diagnostics"}))
		case 2:
			s.Conditions = append(s.Conditions, cond("vehicle_id", "=", ""))
		}
	}
	return s
}

func (g *gen) program() *expr.Program {
	p, err := expr.Compile(g.spec())
	if err != nil {
		panic(err)
	}
	return p
}

// envelope returns a random event or telemetry message.
func (g *gen) envelope() *event.Envelope {
	ts := time.Date(2025, 3, 3+g.r.IntN(7), g.r.IntN(24), 0, 0, 0, time.UTC)
	if g.r.IntN(4) == 0 {
		dt := event.DataTypes[g.r.IntN(len(event.DataTypes))]
		return &event.Envelope{Kind: event.KindTelemetry, Telemetry: &event.Telemetry{
			Timestamp: ts, VehicleID: g.msgVehicle(), DataType: dt,
			Data: map[string]any{"engine": map[string]any{"rpm": float64(g.r.IntN(6000))}},
		}}
	}
	return &event.Envelope{Kind: event.KindEvent, Event: &event.Event{
		EventID:   fmt.Sprintf("evt_%d", g.r.Int()),
		Category:  event.Categories[g.r.IntN(len(event.Categories))],
		Severity:  event.Severities[g.r.IntN(len(event.Severities))],
		Priority:  event.Priorities[g.r.IntN(len(event.Priorities))],
		Timestamp: ts,
		Source:    event.Source{VehicleID: g.msgVehicle()},
		EventData: map[string]any{"speed": float64(g.r.IntN(120))},
	}}
}
