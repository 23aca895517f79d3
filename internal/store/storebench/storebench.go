// Package storebench holds the benchmarks of a store backend's hot paths,
// run by each backend's tests on a store they open: the webhook delivery
// queue (enqueue, lease, outcome) and a trip's point upload. Each
// benchmark uses the store it is given from one goroutine.
package storebench

import (
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// Opener opens an empty backend that b closes.
type Opener func(b *testing.B) store.Backend

var scope = store.Scope{Org: "org_bench", Env: "live"}

// batch is the number of deliveries an operation handles, about what a
// dispatcher claims and records at once.
const batch = 16

// Deliveries measures the delivery queue: Enqueue inserts a batch,
// ClaimRelease leases a batch out of a queue of backlog deliveries over
// 8 streams and gives it back, Lifecycle enqueues, claims and records a
// batch.
func Deliveries(b *testing.B, open Opener) {
	const backlog = 4096
	streams := make([]string, 8)
	for i := range streams {
		streams[i] = fmt.Sprintf("estr_%d", i)
	}
	start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	payload := make([]byte, 512)
	var n int
	next := func(stream string) store.Delivery {
		n++
		return store.Delivery{ID: fmt.Sprintf("msg_%d", n), Org: scope.Org, Env: scope.Env, StreamID: stream, Offset: int64(n),
			Payload: payload, NextAttemptAt: start, QueuedAt: start, CreatedAt: start}
	}
	enqueue := func(b *testing.B, s store.Deliveries, count int) {
		ds := make([]store.Delivery, count)
		for i := range ds {
			ds[i] = next(streams[i%len(streams)])
		}
		if _, err := s.EnqueueDeliveries(b.Context(), ds); err != nil {
			b.Fatal(err)
		}
	}
	claim := func(b *testing.B, s store.Deliveries, now time.Time) []store.Delivery {
		got, err := s.ClaimDeliveries(b.Context(), store.DeliveryClaim{Owner: "node_1", StreamIDs: streams, Now: now, Until: now.Add(time.Minute), Limit: batch})
		if err != nil || len(got) != batch {
			b.Fatalf("claimed %d: %v", len(got), err)
		}
		return got
	}
	b.Run("Enqueue", func(b *testing.B) {
		s := deliveries(b, open)
		b.ReportAllocs()
		for b.Loop() {
			enqueue(b, s, batch)
		}
	})
	b.Run("ClaimRelease", func(b *testing.B) {
		s := deliveries(b, open)
		for range backlog / 256 {
			enqueue(b, s, 256)
		}
		now := start
		b.ReportAllocs()
		for b.Loop() {
			now = now.Add(time.Millisecond)
			got := claim(b, s, now)
			ids := make([]string, len(got))
			for i, d := range got {
				ids[i] = d.ID
			}
			if err := s.ReleaseDeliveries(b.Context(), "node_1", ids, now); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Lifecycle", func(b *testing.B) {
		s := deliveries(b, open)
		now := start
		b.ReportAllocs()
		for b.Loop() {
			now = now.Add(time.Millisecond)
			enqueue(b, s, batch)
			got := claim(b, s, now)
			rs := make([]store.DeliveryResult, len(got))
			for i, d := range got {
				rs[i] = store.DeliveryResult{ID: d.ID, Status: store.DeliveryDelivered, Attempted: true, StatusCode: 200, LatencyMS: 3, At: now}
			}
			if err := s.RecordDeliveries(b.Context(), "node_1", rs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// deliveries opens a backend as its delivery queue.
func deliveries(b *testing.B, open Opener) store.Deliveries {
	s, ok := open(b).(store.Deliveries)
	if !ok {
		b.Fatal("the backend has no delivery queue")
	}
	return s
}

// AppendPoints measures one AppendPoints of a trip: the trip's update,
// blocks of 2 KiB (about 100 encoded points each) and one event.
func AppendPoints(b *testing.B, open Opener) {
	for _, blocks := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("%dBlocks", blocks), func(b *testing.B) {
			s := open(b)
			start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
			tr := store.Trip{ID: "trip_bench", Org: scope.Org, Env: scope.Env, VehicleID: "veh_1", Status: store.TripActive,
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
		})
	}
}

// AppendPointsParallel measures AppendPoints from 16 goroutines at once,
// each on a trip of its own: one upload of one 2 KiB block and one event
// each, as many small uploads of a fleet arrive (a backend that shares a
// transaction among the uploads waiting shows it here).
func AppendPointsParallel(b *testing.B, open Opener) {
	s := open(b)
	start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	var next atomic.Int64
	data := make([]byte, 2048)
	b.SetParallelism(8) // 16 goroutines on 2 processors
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		id := next.Add(1)
		tr := store.Trip{ID: fmt.Sprintf("trip_p%03d", id), Org: scope.Org, Env: scope.Env, VehicleID: fmt.Sprintf("veh_p%03d", id),
			Status: store.TripActive, StartTime: start, Version: 1, CreatedAt: start, UpdatedAt: start}
		if err := s.CreateTrip(b.Context(), tr); err != nil {
			b.Error(err)
			return
		}
		var seq int64
		for pb.Next() {
			seq++
			ts := start.UnixMilli() + seq*1_000
			prev := tr.Version
			tr.Version++
			tr.Totals.LocationsCount++
			ev := store.TripEvent{ID: fmt.Sprintf("evt_p%03d_%d", id, seq), Type: "harsh_braking", Time: start, Data: []byte(`{"g":0.61}`)}
			if err := s.AppendPoints(b.Context(), tr, prev, []store.PointBlock{{Seq: seq, FirstTS: ts, LastTS: ts, Count: 1, Data: data}},
				[]store.TripEvent{ev}, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// Reads measures the reads a request makes most: a trip by id, a page
// of a scope's trips, and a vehicle's latest trip (what a trip's start
// reads) for a vehicle with none among the scope's 20,000.
func Reads(b *testing.B, open Opener) {
	s := open(b)
	start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	for i := range 20_000 {
		at := start.Add(time.Duration(i) * time.Minute)
		t := store.Trip{ID: fmt.Sprintf("trip_%05d", i), Org: scope.Org, Env: scope.Env, VehicleID: fmt.Sprintf("veh_%d", i),
			Status: store.TripCompleted, StartTime: at, EndTime: at.Add(time.Minute), Version: 1, CreatedAt: at, UpdatedAt: at,
			StartLocation: &store.Place{Latitude: 48.85, Longitude: 2.35}}
		if err := s.CreateTrip(b.Context(), t); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("GetTrip", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.GetTrip(b.Context(), scope, "trip_00100"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ListTrips", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := s.ListTrips(b.Context(), store.TripFilter{Scope: scope, Statuses: []string{store.TripCompleted}, Desc: true, Limit: 20,
				After: &store.Keyset{Value: float64(start.Add(150 * time.Minute).UnixMilli()), ID: "trip_00150"}})
			if err != nil || len(got) != 20 {
				b.Fatalf("listed %d: %v", len(got), err)
			}
		}
	})
	b.Run("VehicleLatest", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			got, err := s.ListTrips(b.Context(), store.TripFilter{Scope: scope, VehicleID: "veh_new", Sort: "start_time", Desc: true, Limit: 1})
			if err != nil || len(got) != 0 {
				b.Fatalf("listed %d: %v", len(got), err)
			}
		}
	})
}
