package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/ingest/telemetry"
)

type countingBus struct{ msgs int }

func (b *countingBus) Publish(_ context.Context, msgs ...hub.Message) error {
	b.msgs += len(msgs)
	return nil
}

// Every request the generator builds is valid telemetry, in the mix it
// claims.
func TestTelemetryRequestsAreValid(t *testing.T) {
	g := &telemetryWorker{rng: 42, vehicles: make([]benchVehicle, 50)}
	for i := range g.vehicles {
		g.vehicles[i] = benchVehicle{id: []byte("veh-" + strconv.Itoa(i)), lat: 40, lon: -83, speed: 50, fuel: 60, coolant: 90}
	}
	bus := &countingBus{}
	svc, err := telemetry.New(telemetry.Config{}, bus, nil)
	if err != nil {
		t.Fatal(err)
	}
	types := map[string]int{}
	for range 20 {
		body := g.request(1000, time.Now().UTC())
		var req struct {
			Messages []map[string]any `json:"messages"`
		}
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		if err := dec.Decode(&req); err != nil {
			t.Fatalf("body is not JSON: %v", err)
		}
		for _, m := range req.Messages {
			types[m["data_type"].(string)]++
		}
		if _, err := svc.IngestTelemetry(context.Background(), "o", "test", req.Messages); err != nil {
			t.Fatalf("generated request rejected: %v", err)
		}
	}
	for _, m := range telemetryMix {
		got := types[m.dataType]
		if want := m.perMille * 20; got < want*7/10 || got > want*13/10 {
			t.Errorf("%s: %d messages in 20,000, want about %d", m.dataType, got, want)
		}
	}
	if bus.msgs <= 20_000 {
		t.Errorf("no maintenance events raised in 20,000 messages (%d published)", bus.msgs)
	}
}

func TestFixed(t *testing.T) {
	for _, c := range []struct {
		v    float64
		d    int
		want string
	}{
		{1.05, 2, "1.05"}, {1.5, 2, "1.5"}, {2, 1, "2"}, {-0.0001, 2, "0"}, {-3.25, 2, "-3.25"},
		{40.000123, 6, "40.000123"}, {1.005, 3, "1.005"}, {99.96, 1, "100"},
	} {
		if got := string(fixed(nil, c.v, c.d)); got != c.want {
			t.Errorf("fixed(%v, %d) = %s, want %s", c.v, c.d, got, c.want)
		}
	}
}
