package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// tokens is the contract of store.Tokens.
func tokens(t *testing.T, open Opener) {
	t.Run("RevokeListPrune", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		ctx := t.Context()
		now := time.UnixMilli(1_800_000_000_000)
		mk := func(id, org string, exp time.Duration) store.BrowserToken {
			tok := store.BrowserToken{ID: id, Org: org, Env: "test", KeyID: "key_1", Scopes: []string{"feed:read"},
				CreatedAt: now, ExpiresAt: now.Add(exp)}
			if err := s.CreateToken(ctx, tok); err != nil {
				t.Fatalf("CreateToken %s: %v", id, err)
			}
			return tok
		}
		mk("tok_a", "org-a", time.Hour)
		mk("tok_b", "org-a", time.Minute)
		mk("tok_c", "org-b", time.Hour)
		if err := s.CreateToken(ctx, store.BrowserToken{ID: "tok_a", Org: "org-a", Env: "test", Scopes: []string{}}); !errors.Is(err, store.ErrConflict) {
			t.Errorf("duplicate id: %v, want ErrConflict", err)
		}
		if _, err := s.RevokeToken(ctx, store.Scope{Org: "org-b", Env: "test"}, "tok_a", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("another organization revoked tok_a: %v", err)
		}
		got, err := s.RevokeToken(ctx, store.Scope{Org: "org-a", Env: "test"}, "tok_a", now.Add(time.Second))
		if err != nil || !got.RevokedAt.Equal(now.Add(time.Second)) || !got.ExpiresAt.Equal(now.Add(time.Hour)) || !slices.Equal(got.Scopes, []string{"feed:read"}) {
			t.Fatalf("RevokeToken = %+v, %v", got, err)
		}
		if again, err := s.RevokeToken(ctx, store.Scope{Org: "org-a", Env: "test"}, "tok_a", now.Add(time.Minute)); err != nil || !again.RevokedAt.Equal(got.RevokedAt) {
			t.Errorf("second revoke: %v, moved the time to %v", err, again.RevokedAt)
		}
		if _, err := s.RevokeToken(ctx, store.Scope{Org: "org-a", Env: "test"}, "tok_b", now); err != nil {
			t.Fatal(err)
		}
		ids, err := s.RevokedTokens(ctx, now)
		slices.Sort(ids)
		if err != nil || !slices.Equal(ids, []string{"tok_a", "tok_b"}) {
			t.Fatalf("RevokedTokens(now) = %v, %v", ids, err)
		}
		// tok_b expired: off the list, then pruned
		if ids, err := s.RevokedTokens(ctx, now.Add(2*time.Minute)); err != nil || !slices.Equal(ids, []string{"tok_a"}) {
			t.Errorf("RevokedTokens after tok_b's expiry = %v, %v", ids, err)
		}
		if n, err := s.PruneTokens(ctx, now.Add(2*time.Minute)); err != nil || n != 1 {
			t.Errorf("PruneTokens = %d, %v; want 1", n, err)
		}
		if _, err := s.RevokeToken(ctx, store.Scope{Org: "org-a", Env: "test"}, "tok_b", now); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("pruned token revoked: %v", err)
		}
	})
}
