package sqlite_test

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// TestConcurrentAppendsEachTheirOwn: uploads to 40 trips at once, in
// two rounds, share the writer's transactions; each gets its own
// answer and only its own writes. In the first round the last trip's
// upload names a version it does not have (store.ErrConflict), in the
// second the one before repeats a block it already wrote (a broken
// unique index): those two change nothing of their trips, and every
// other upload, whatever transaction it shared with them, is stored
// whole. (The first upload to reach the idle writer goes alone; the
// last ones started share a transaction with the others.)
func TestConcurrentAppendsEachTheirOwn(t *testing.T) {
	s := open(t, t.TempDir())
	ctx := t.Context()
	sc := store.Scope{Org: "org_a", Env: "live"}
	start := time.Date(2025, 3, 14, 15, 0, 0, 0, time.UTC)
	const n = 40
	trips := make([]store.Trip, n)
	for i := range trips {
		trips[i] = store.Trip{ID: fmt.Sprintf("trip_%02d", i), Org: sc.Org, Env: sc.Env, VehicleID: fmt.Sprintf("veh_%02d", i),
			Status: store.TripActive, StartTime: start, Version: 1, CreatedAt: start, UpdatedAt: start}
		if err := s.CreateTrip(ctx, trips[i]); err != nil {
			t.Fatal(err)
		}
	}
	round := func(r int, upload func(i int) (tr store.Trip, prev int64, blocks []store.PointBlock, events []store.TripEvent)) []error {
		errs := make([]error, n)
		var ready, wg sync.WaitGroup
		ready.Add(1)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tr, prev, blocks, events := upload(i)
				ready.Wait()
				errs[i] = s.AppendPoints(ctx, tr, prev, blocks, events, false)
			}()
		}
		ready.Done()
		wg.Wait()
		return errs
	}
	upload := func(r int) func(i int) (store.Trip, int64, []store.PointBlock, []store.TripEvent) {
		return func(i int) (store.Trip, int64, []store.PointBlock, []store.TripEvent) {
			tr := trips[i]
			tr.Version = int64(r + 1)
			tr.Totals.LocationsCount = r * 10
			ts := start.UnixMilli() + int64(r)*60_000
			b := store.PointBlock{Seq: int64(r), FirstTS: ts, LastTS: ts + 9_000, Count: 10, Data: []byte{byte(r), byte(i)}}
			e := store.TripEvent{ID: fmt.Sprintf("evt_%02d_%d", i, r), Type: "harsh_braking", Time: start.Add(time.Duration(r) * time.Minute), Data: []byte(`{}`)}
			prev := int64(r)
			switch {
			case r == 1 && i == n-1:
				prev = 7 // not its version
			case r == 2 && i == n-2:
				b.Seq = 1 // written in the first round
			}
			return tr, prev, []store.PointBlock{b}, []store.TripEvent{e}
		}
	}
	for r := 1; r <= 2; r++ {
		errs := round(r, upload(r))
		for i, err := range errs {
			switch {
			case i == n-1: // the second round names version 2, which it never reached
				if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "version") {
					t.Errorf("round %d trip %d: %v, want store.ErrConflict on its version", r, i, err)
				}
			case r == 2 && i == n-2:
				if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "block 1") {
					t.Errorf("round %d trip %d: %v, want the repeated block refused (a unique index: store.ErrConflict)", r, i, err)
				}
			case err != nil:
				t.Errorf("round %d trip %d: %v", r, i, err)
			}
		}
	}
	for i, want := range trips {
		// the last trip missed the first round (its second names
		// version 2: a conflict too), the one before the second; the
		// others have both
		rounds := []int{1, 2}
		switch i {
		case n - 1:
			rounds = nil
		case n - 2:
			rounds = []int{1}
		}
		got, err := s.GetTrip(ctx, sc, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Version != int64(len(rounds)+1) {
			t.Errorf("trip %d: version %d, want %d", i, got.Version, len(rounds)+1)
		}
		blocks, err := s.ReadPoints(ctx, sc, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		events, err := s.TripEvents(ctx, sc, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(blocks) != len(rounds) || len(events) != len(rounds) {
			t.Fatalf("trip %d: %d blocks and %d events, want %d of each", i, len(blocks), len(events), len(rounds))
		}
		for k, r := range rounds {
			if blocks[k].Seq != int64(r) || string(blocks[k].Data) != string([]byte{byte(r), byte(i)}) || events[k].ID != fmt.Sprintf("evt_%02d_%d", i, r) {
				t.Errorf("trip %d: block %d seq %d data %v, event %s; want round %d's", i, k, blocks[k].Seq, blocks[k].Data, events[k].ID, r)
			}
		}
	}
}
