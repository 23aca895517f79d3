package postgres_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// BenchmarkAppendPoints measures one AppendPoints of a trip: the trip's
// update, blocks of 2 KiB (about 100 encoded points each) and one event.
func BenchmarkAppendPoints(b *testing.B) {
	for _, blocks := range []int{1, 16, 64, 256} {
		b.Run(fmt.Sprintf("%dBlocks", blocks), func(b *testing.B) {
			s := open(b, freshSchema(b))
			sc := store.Scope{Org: "org_bench", Env: "live"}
			start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
			tr := store.Trip{ID: "trip_bench", Org: sc.Org, Env: sc.Env, VehicleID: "veh_1", Status: store.TripActive,
				StartTime: start, Version: 1, CreatedAt: start, UpdatedAt: start}
			if err := s.CreateTrip(b.Context(), tr); err != nil {
				b.Fatal(err)
			}
			data := make([]byte, 2048)
			bs := make([]store.PointBlock, blocks)
			var seq int64
			b.ReportAllocs()
			b.SetBytes(int64(blocks * len(data)))
			for b.Loop() {
				for i := range bs {
					seq++
					ts := start.UnixMilli() + seq*100_000
					bs[i] = store.PointBlock{Seq: seq, FirstTS: ts, LastTS: ts + 99_000, Count: 100, Data: data}
				}
				ev := store.TripEvent{ID: fmt.Sprintf("evt_%d", seq), Type: "harsh_braking", Time: start, Data: []byte(`{"g":0.61}`)}
				prev := tr.Version
				tr.Version++
				tr.Totals.LocationsCount += 100 * blocks
				if err := s.AppendPoints(b.Context(), tr, prev, bs, []store.TripEvent{ev}, false); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*blocks*100)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
