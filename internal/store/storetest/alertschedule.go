package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// alertSchedule is the contract of store.AlertSchedule.
func alertSchedule(t *testing.T, open Opener) {
	t0 := time.UnixMilli(1_800_000_000_000).UTC()
	t.Run("ClaimLeaseFinish", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		steps := []store.AlertDue{
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueEscalation, Level: 1, DueAt: t0.Add(time.Minute)},
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueEscalation, Level: 2, DueAt: t0.Add(2 * time.Minute)},
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueExpiry, DueAt: t0.Add(time.Hour)},
		}
		if err := s.ScheduleAlert(ctx, steps); err != nil {
			t.Fatal(err)
		}
		if err := s.ScheduleAlert(ctx, steps[:1]); err != nil {
			t.Fatalf("scheduling a stored step again: %v", err)
		}
		if got, err := s.ClaimDueAlerts(ctx, "n1", t0, t0.Add(time.Minute), 10); err != nil || len(got) != 0 {
			t.Fatalf("nothing is due yet: %v %v", got, err)
		}
		now := t0.Add(2 * time.Minute)
		got, err := s.ClaimDueAlerts(ctx, "n1", now, now.Add(time.Minute), 10)
		if err != nil || len(got) != 2 || got[0].Level != 1 || got[1].Level != 2 || got[0].Org != "o1" || !got[0].DueAt.Equal(t0.Add(time.Minute)) {
			t.Fatalf("claim %+v %v", got, err)
		}
		if again, err := s.ClaimDueAlerts(ctx, "n2", now, now.Add(time.Minute), 10); err != nil || len(again) != 0 {
			t.Fatalf("claimed while another claim lives: %+v", again)
		}
		if err := s.FinishAlertDue(ctx, "n1", got[0], now); err != nil {
			t.Fatal(err)
		}
		later := now.Add(time.Minute)
		taken, err := s.ClaimDueAlerts(ctx, "n2", later, later.Add(time.Minute), 10)
		if err != nil || len(taken) != 1 || taken[0].Level != 2 {
			t.Fatalf("an expired claim is taken over, a finished step never: %+v %v", taken, err)
		}
		if err := s.FinishAlertDue(ctx, "n1", got[1], later); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("finishing a step taken over: %v", err)
		}
		if err := s.FinishAlertDue(ctx, "n2", taken[0], later); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("DeliveryStepsPerChannel", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		// the same round on two channels, and an escalation level of the
		// same number: four steps, each claimed and finished on its own
		steps := []store.AlertDue{
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueDelivery, Channel: "voice_call", Level: 0, DueAt: t0.Add(time.Minute)},
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueDelivery, Channel: "sms", Level: 1, DueAt: t0.Add(2 * time.Minute)},
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueDelivery, Channel: "voice_call", Level: 1, DueAt: t0.Add(3 * time.Minute)},
			{AlertID: "a1", Org: "o1", Env: "test", Kind: store.AlertDueEscalation, Level: 1, DueAt: t0.Add(4 * time.Minute)},
		}
		if err := s.ScheduleAlert(ctx, steps); err != nil {
			t.Fatal(err)
		}
		moved := steps[1]
		moved.DueAt = t0
		if err := s.ScheduleAlert(ctx, []store.AlertDue{moved}); err != nil {
			t.Fatalf("scheduling a stored step again: %v", err)
		}
		now := t0.Add(2 * time.Minute)
		got, err := s.ClaimDueAlerts(ctx, "n1", now, now.Add(time.Minute), 10)
		if err != nil || !sameSteps(got, steps[:2]) {
			t.Fatalf("claim at +2m: %+v %v, want %+v (a step stored again keeps its due time)", got, err, steps[:2])
		}
		if err := s.FinishAlertDue(ctx, "n1", got[1], now); err != nil {
			t.Fatal(err)
		}
		// finishing one channel's round leaves the other channel's alone
		later := now.Add(2 * time.Minute)
		rest, err := s.ClaimDueAlerts(ctx, "n2", later, later.Add(time.Minute), 10)
		if err != nil || !sameSteps(rest, []store.AlertDue{steps[0], steps[2], steps[3]}) {
			t.Fatalf("claim at +4m: %+v %v, want %+v", rest, err, []store.AlertDue{steps[0], steps[2], steps[3]})
		}
		for _, d := range rest {
			if err := s.FinishAlertDue(ctx, "n2", d, later); err != nil {
				t.Fatalf("finish %+v: %v", d, err)
			}
		}
		if left, err := s.ClaimDueAlerts(ctx, "n3", later.Add(time.Hour), later.Add(2*time.Hour), 10); err != nil || len(left) != 0 {
			t.Fatalf("finished steps claimed again: %+v %v", left, err)
		}
	})
	t.Run("ConcurrentClaimsNeverOverlap", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		var steps []store.AlertDue
		for i := range 40 {
			steps = append(steps, store.AlertDue{AlertID: fmt.Sprintf("a%02d", i), Org: "o1", Env: "test", Kind: store.AlertDueEscalation, Level: 1, DueAt: t0})
		}
		if err := s.ScheduleAlert(ctx, steps); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		seen := map[string]int{}
		var wg sync.WaitGroup
		for n := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					got, err := s.ClaimDueAlerts(ctx, fmt.Sprintf("n%d", n), t0, t0.Add(time.Hour), 3)
					if err != nil {
						t.Error(err)
						return
					}
					if len(got) == 0 {
						return
					}
					mu.Lock()
					for _, d := range got {
						seen[d.AlertID]++
					}
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if len(seen) != 40 {
			t.Errorf("%d steps claimed, want 40", len(seen))
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("%s claimed %d times", id, n)
			}
		}
	})
}

// sameSteps says whether got are want, in order, due at the same instants.
func sameSteps(got, want []store.AlertDue) bool {
	return slices.EqualFunc(got, want, func(a, b store.AlertDue) bool {
		return a.AlertID == b.AlertID && a.Org == b.Org && a.Env == b.Env && a.Kind == b.Kind && a.Channel == b.Channel && a.Level == b.Level &&
			a.DueAt.Equal(b.DueAt)
	})
}
