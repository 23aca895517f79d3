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
