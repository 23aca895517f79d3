package ws

import (
	"testing"
)

var benchEvent = []byte(`{"event_id":"evt_01HZX3","event_type":"harsh_braking","category":"safety_events","timestamp":"2026-11-23T10:00:00Z","severity":"high","priority":"urgent","source":{"vehicle_id":"veh_123","driver_id":"drv_9","trip_id":"trip_77"},"location":{"latitude":52.520008,"longitude":13.404954,"address":"Unter den Linden 1, Berlin","speed_limit":50},"event_data":{"deceleration_g":0.61,"initial_speed":54.2,"final_speed":12,"braking_duration":1.8,"preceding_events":[]},"metadata":{"correlation_id":"c-1","sequence_number":1234,"processing_time":3,"source_system":"fleethub"}}`)

// BenchmarkJSONToMsgpack converts an event message once (per entry, shared
// by the msgpack subscribers of a stream).
func BenchmarkJSONToMsgpack(b *testing.B) {
	b.ReportAllocs()
	b.SetBytes(int64(len(benchEvent)))
	for b.Loop() {
		if _, err := jsonToMsgpack(benchEvent); err != nil {
			b.Fatal(err)
		}
	}
}
