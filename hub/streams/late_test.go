package streams_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// TestRefreshSeesLateCommits: on several nodes a stream record's update
// time is taken before its write commits, so a record can reach the store
// after a newer one was read, with an older time. Another node's registry
// still takes it in at its next refresh: a new stream and a new version of
// a known one, both stamped seconds before the newest update it had read.
func TestRefreshSeesLateCommits(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	log := slog.New(slog.DiscardHandler)
	a := streams.NewRegistry(streams.RegistryConfig{}, st, log)
	if err := a.Load(ctx); err != nil {
		t.Fatal(err)
	}
	l := embedlog.New(embedlog.Config{})
	t.Cleanup(func() { l.Close() })
	svc := streams.NewService(a, st, l)
	s, err := svc.Start(ctx, "org", "live", hub.KindEvents, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	known, err := st.GetStream(ctx, store.Scope{Org: "org", Env: "live"}, s.Entry.Rec.ID)
	if err != nil {
		t.Fatal(err)
	}

	b := streams.NewRegistry(streams.RegistryConfig{}, st, log)
	if err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if b.ByID(known.ID) == nil {
		t.Fatal("the second registry does not have the stream after its first load")
	}
	if err := b.Load(ctx); err != nil { // an ordinary refresh: nothing new
		t.Fatal(err)
	}

	late := known
	late.ID = known.ID + "-late"
	late.UpdatedAt = known.UpdatedAt.Add(-5 * time.Second)
	late.CreatedAt = late.UpdatedAt
	if err := st.CreateStream(ctx, late); err != nil {
		t.Fatal(err)
	}
	paused := known
	paused.State = hub.StatePaused
	paused.Version = known.Version + 1
	paused.UpdatedAt = known.UpdatedAt.Add(-3 * time.Second)
	if err := st.UpdateStream(ctx, paused, known.Version); err != nil {
		t.Fatal(err)
	}

	if err := b.Load(ctx); err != nil {
		t.Fatal(err)
	}
	if b.ByID(late.ID) == nil {
		t.Error("a stream committed late, with an update time before the newest read, was not taken in")
	}
	if e := b.ByID(known.ID); e == nil || e.Rec.Version != paused.Version || e.Rec.State != hub.StatePaused {
		t.Errorf("a change committed late was not taken in: %+v", e.Rec)
	}
}
