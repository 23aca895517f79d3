package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// speedingSummaries is the contract of store.SpeedingSummaries.
func speedingSummaries(t *testing.T, open Opener) {
	t0 := time.Date(2026, 3, 2, 23, 0, 0, 0, time.UTC)
	ep := func(id, device, day string, start time.Time) store.SpeedingEpisode {
		return store.SpeedingEpisode{Org: "o1", Env: "test", ID: id, DeviceID: device, VehicleID: "veh-1", DriverID: "drv-1", TripID: "trip-1",
			Start: start, DurationSeconds: 40, MaxSpeedKmh: 117.5, LimitKmh: 100, Day: day}
	}
	k1 := store.SpeedingSummaryKey{Org: "o1", Env: "test", DeviceID: "dev-1", Day: "2026-03-02"}
	t.Run("RecordClaimFinishLate", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		eps := []store.SpeedingEpisode{ep("e1", "dev-1", "2026-03-02", t0), ep("e2", "dev-1", "2026-03-02", t0.Add(time.Minute)),
			ep("e3", "dev-2", "2026-03-02", t0), ep("e4", "dev-1", "2026-03-03", t0.Add(2*time.Hour))}
		if err := s.RecordSpeedingEpisodes(ctx, eps); err != nil {
			t.Fatal(err)
		}
		changed := ep("e1", "dev-1", "2026-03-02", t0)
		changed.MaxSpeedKmh = 200
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{changed}); err != nil {
			t.Fatalf("recording a stored episode again: %v", err)
		}
		if got, err := s.PendingSpeedingSummaries(ctx, "2026-03-02", 10); err != nil || len(got) != 0 {
			t.Fatalf("before the day ended: %v %v", got, err)
		}
		got, err := s.PendingSpeedingSummaries(ctx, "2026-03-03", 10)
		if err != nil || len(got) != 2 || got[0] != k1 || got[1].DeviceID != "dev-2" {
			t.Fatalf("pending %+v %v", got, err)
		}
		now := t0.Add(2 * time.Hour)
		if ok, sent, err := s.ClaimSpeedingSummary(ctx, k1, "n1", now, now.Add(2*time.Minute)); err != nil || !ok || sent {
			t.Fatalf("claim: %v %v %v", ok, sent, err)
		}
		if ok, sent, err := s.ClaimSpeedingSummary(ctx, k1, "n2", now, now.Add(2*time.Minute)); err != nil || ok || sent {
			t.Fatalf("claimed while another claim lives: %v %v %v", ok, sent, err)
		}
		if ok, _, err := s.ClaimSpeedingSummary(ctx, k1, "n1", now, now.Add(2*time.Minute)); err != nil || !ok {
			t.Fatalf("its holder takes it again: %v %v", ok, err)
		}
		got1, err := s.SpeedingSummaryEpisodes(ctx, k1)
		if err != nil || len(got1) != 2 || got1[0].ID != "e1" || got1[0].MaxSpeedKmh != 117.5 || got1[1].ID != "e2" ||
			!got1[0].Start.Equal(t0) || got1[0].SummaryDay != "2026-03-02" || got1[0].DriverID != "drv-1" || got1[0].LimitKmh != 100 {
			t.Fatalf("episodes %+v %v", got1, err)
		}
		// n1 stops; after the lease n2 takes the summary over
		later := now.Add(3 * time.Minute)
		if ok, _, err := s.ClaimSpeedingSummary(ctx, k1, "n2", later, later.Add(2*time.Minute)); err != nil || !ok {
			t.Fatalf("a lapsed claim is taken over: %v %v", ok, err)
		}
		if err := s.FinishSpeedingSummary(ctx, k1, "n1", []string{"e1", "e2"}, later); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("finishing a claim taken over: %v", err)
		}
		// an episode recorded while n2 sends: not in what it took
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{ep("e5", "dev-1", "2026-03-02", t0.Add(30*time.Minute))}); err != nil {
			t.Fatal(err)
		}
		if n, err := s.MoveLateSpeedingEpisodes(ctx, k1, "2026-03-03"); err != nil || n != 0 {
			t.Fatalf("moved from a summary not sent: %d %v", n, err)
		}
		if err := s.FinishSpeedingSummary(ctx, k1, "n2", []string{"e1", "e2"}, later); err != nil {
			t.Fatal(err)
		}
		if ok, sent, err := s.ClaimSpeedingSummary(ctx, k1, "n3", later.Add(time.Hour), later.Add(time.Hour+2*time.Minute)); err != nil || ok || !sent {
			t.Fatalf("a sent summary is never claimed again: %v %v %v", ok, sent, err)
		}
		got, err = s.PendingSpeedingSummaries(ctx, "2026-03-03", 10)
		if err != nil || len(got) != 2 || got[0] != k1 {
			t.Fatalf("the late episode keeps its summary pending: %+v %v", got, err)
		}
		if n, err := s.MoveLateSpeedingEpisodes(ctx, k1, "2026-03-03"); err != nil || n != 1 {
			t.Fatalf("move: %d %v", n, err)
		}
		k3 := store.SpeedingSummaryKey{Org: "o1", Env: "test", DeviceID: "dev-1", Day: "2026-03-03"}
		got3, err := s.SpeedingSummaryEpisodes(ctx, k3)
		if err != nil || len(got3) != 2 || got3[0].ID != "e5" || got3[0].Day != "2026-03-02" || got3[0].SummaryDay != "2026-03-03" || got3[1].ID != "e4" {
			t.Fatalf("the next summary takes the late episode: %+v %v", got3, err)
		}
		if got, err := s.SpeedingSummaryEpisodes(ctx, k1); err != nil || len(got) != 0 {
			t.Fatalf("a sent summary's episodes: %+v %v", got, err)
		}
		if got, err := s.SpeedingSummaryEpisodes(ctx, store.SpeedingSummaryKey{Org: "o2", Env: "test", DeviceID: "dev-1", Day: "2026-03-02"}); err != nil || len(got) != 0 {
			t.Fatalf("another organization's: %+v %v", got, err)
		}
	})
	t.Run("Prune", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		key := func(device, day string) store.SpeedingSummaryKey {
			return store.SpeedingSummaryKey{Org: "o1", Env: "test", DeviceID: device, Day: day}
		}
		at := time.Date(2026, 3, 6, 1, 0, 0, 0, time.UTC)
		send := func(k store.SpeedingSummaryKey, ids ...string) {
			t.Helper()
			if ok, _, err := s.ClaimSpeedingSummary(ctx, k, "n1", at, at.Add(time.Minute)); err != nil || !ok {
				t.Fatalf("claim %+v: %v %v", k, ok, err)
			}
			if err := s.FinishSpeedingSummary(ctx, k, "n1", ids, at); err != nil {
				t.Fatal(err)
			}
		}
		old1, old2, fresh := ep("e1", "dev-1", "2026-03-01", t0), ep("e2", "dev-2", "2026-03-01", t0), ep("e4", "dev-1", "2026-03-05", t0)
		pending := ep("e5", "dev-3", "2026-03-02", t0)
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{old1, old2, fresh, pending}); err != nil {
			t.Fatal(err)
		}
		send(key("dev-1", "2026-03-01"), "e1")
		send(key("dev-2", "2026-03-01"), "e2")
		send(key("dev-1", "2026-03-05"), "e4")
		// a late episode of dev-2's sent day waits for the loop to move it
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{ep("e3", "dev-2", "2026-03-01", t0.Add(time.Minute))}); err != nil {
			t.Fatal(err)
		}
		var total int64
		for {
			n, err := s.PruneSpeedingSummaries(ctx, "2026-03-04", 1)
			if err != nil {
				t.Fatal(err)
			}
			if n == 0 {
				break
			}
			total += n
		}
		// e1, e2 and dev-1's claim of 2026-03-01
		if total != 3 {
			t.Errorf("pruned %d rows, want 3", total)
		}
		// dev-1's claim of 2026-03-01 is gone: the day claims as new
		if ok, sent, err := s.ClaimSpeedingSummary(ctx, key("dev-1", "2026-03-01"), "n2", at, at.Add(time.Minute)); err != nil || !ok || sent {
			t.Errorf("a pruned claim: %v %v %v, want it claimed anew", ok, sent, err)
		}
		// dev-2's, which a late episode waits for, and the day within are kept
		for _, k := range []store.SpeedingSummaryKey{key("dev-2", "2026-03-01"), key("dev-1", "2026-03-05")} {
			if ok, sent, err := s.ClaimSpeedingSummary(ctx, k, "n2", at, at.Add(time.Minute)); err != nil || ok || !sent {
				t.Errorf("%+v: %v %v %v, want it kept as sent", k, ok, sent, err)
			}
		}
		// a pruned episode recorded again is stored again; a kept one is left alone
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{old1, fresh}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SpeedingSummaryEpisodes(ctx, key("dev-1", "2026-03-01")); err != nil || len(got) != 1 || got[0].ID != "e1" {
			t.Errorf("a pruned episode recorded again: %+v %v", got, err)
		}
		if got, err := s.SpeedingSummaryEpisodes(ctx, key("dev-1", "2026-03-05")); err != nil || len(got) != 0 {
			t.Errorf("a kept episode recorded again: %+v %v", got, err)
		}
		// the episodes no summary took are kept, the late one still moves
		if got, err := s.SpeedingSummaryEpisodes(ctx, key("dev-3", "2026-03-02")); err != nil || len(got) != 1 || got[0].ID != "e5" {
			t.Errorf("an episode not sent: %+v %v", got, err)
		}
		if n, err := s.MoveLateSpeedingEpisodes(ctx, key("dev-2", "2026-03-01"), "2026-03-06"); err != nil || n != 1 {
			t.Errorf("the late episode: moved %d, %v", n, err)
		}
		// with it moved on, its day's claim goes
		if n, err := s.PruneSpeedingSummaries(ctx, "2026-03-04", 10); err != nil || n != 1 {
			t.Errorf("after the late episode moved: pruned %d, %v; want its day's claim", n, err)
		}
	})
	t.Run("RecordIntoAnotherDay", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		e := ep("e1", "dev-1", "2026-03-02", t0)
		e.SummaryDay = "2026-03-09"
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{e}); err != nil {
			t.Fatal(err)
		}
		if got, err := s.SpeedingSummaryEpisodes(ctx, k1); err != nil || len(got) != 0 {
			t.Errorf("its own day's summary: %+v %v", got, err)
		}
		k := store.SpeedingSummaryKey{Org: "o1", Env: "test", DeviceID: "dev-1", Day: "2026-03-09"}
		if got, err := s.SpeedingSummaryEpisodes(ctx, k); err != nil || len(got) != 1 || got[0].Day != "2026-03-02" || got[0].SummaryDay != "2026-03-09" {
			t.Errorf("the summary of its SummaryDay: %+v %v", got, err)
		}
	})
	t.Run("ConcurrentClaims", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		if err := s.RecordSpeedingEpisodes(ctx, []store.SpeedingEpisode{ep("e1", "dev-1", "2026-03-02", t0)}); err != nil {
			t.Fatal(err)
		}
		now := t0.Add(2 * time.Hour)
		var wg sync.WaitGroup
		var won atomic.Int32
		errs := make(chan error, 8)
		for i := range 8 {
			wg.Go(func() {
				ok, _, err := s.ClaimSpeedingSummary(ctx, k1, fmt.Sprintf("n%d", i), now, now.Add(2*time.Minute))
				if err != nil {
					errs <- err
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
		if won.Load() != 1 {
			t.Fatalf("%d of 8 concurrent claims won, want 1", won.Load())
		}
	})
}
