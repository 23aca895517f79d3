package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// notifications is the contract of store.Notifications.
func notifications(t *testing.T, open Opener) {
	t.Run("EnqueueClaimRecordList", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		t0 := time.UnixMilli(1_800_000_000_000).UTC()
		sc := store.Scope{Org: "o1", Env: "test"}
		n := store.Notification{ID: "ntf_1", Org: sc.Org, Env: sc.Env, Ref: "alr_1", RecipientID: "con_1", Channel: "sms", Body: []byte(`{"a":1}`),
			Status: store.NotificationPending, NextAttemptAt: t0, CreatedAt: t0, UpdatedAt: t0}
		if err := s.EnqueueNotification(ctx, n, "n1", t0.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ClaimNotifications(ctx, "n2", t0, t0.Add(time.Minute), 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed while the enqueuer holds it: %+v", got)
		}
		// The same id again is left alone, claim and body too.
		again := n
		again.Body, again.Status = []byte(`{"a":2}`), store.NotificationFailed
		if err := s.EnqueueNotification(ctx, again, "n2", t0.Add(time.Hour)); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("enqueueing an id already queued: %v", err)
		}
		if l, err := s.ListNotifications(ctx, sc, "alr_1"); err != nil || len(l) != 1 || string(l[0].Body) != `{"a":1}` || l[0].Status != store.NotificationPending {
			t.Fatalf("after the second enqueue: %+v", l)
		}
		n.Attempts, n.LastError, n.NextAttemptAt, n.UpdatedAt = 1, "HTTP 502", t0.Add(2*time.Second), t0.Add(time.Second)
		if err := s.RecordNotification(ctx, "n1", n); err != nil {
			t.Fatal(err)
		}
		if err := s.RecordNotification(ctx, "n1", n); !errors.Is(err, store.ErrConflict) {
			t.Fatalf("recording a released notification: %v", err)
		}
		if got, err := s.ClaimNotifications(ctx, "n2", t0.Add(time.Second), t0.Add(time.Minute), 10); err != nil || len(got) != 0 {
			t.Fatalf("claimed before its next attempt: %+v", got)
		}
		got, err := s.ClaimNotifications(ctx, "n2", t0.Add(2*time.Second), t0.Add(time.Minute), 10)
		if err != nil || len(got) != 1 || got[0].Attempts != 1 || string(got[0].Body) != `{"a":1}` || got[0].RecipientID != "con_1" {
			t.Fatalf("claim %+v %v", got, err)
		}
		n.Status, n.Attempts, n.LastError = store.NotificationDelivered, 2, ""
		if err := s.RecordNotification(ctx, "n2", n); err != nil {
			t.Fatal(err)
		}
		if got, err := s.ClaimNotifications(ctx, "n3", t0.Add(time.Hour), t0.Add(2*time.Hour), 10); err != nil || len(got) != 0 {
			t.Fatalf("a delivered notification claimed: %+v", got)
		}
		l, err := s.ListNotifications(ctx, sc, "alr_1")
		if err != nil || len(l) != 1 || l[0].Status != store.NotificationDelivered || l[0].Attempts != 2 {
			t.Fatalf("list %+v %v", l, err)
		}
		if l, err := s.ListNotifications(ctx, store.Scope{Org: "o2", Env: "test"}, "alr_1"); err != nil || len(l) != 0 {
			t.Fatalf("another org lists %+v", l)
		}
	})
}
