package pipeline

import (
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/dedup"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/streams"
	"github.com/fleethub/fleethub/internal/store"
)

// TestStreamCommittedLateIsStillLoaded: on several nodes a stream's
// record can commit after a later one was read, with an older update
// time (the time is taken before the write commits). Node B's registry,
// which had read past that time, still loads it at its next refresh, and
// its pipeline hands the stream the next event.
func TestStreamCommittedLateIsStillLoaded(t *testing.T) {
	a := newFixture(t)
	reg := streams.NewRegistry(streams.RegistryConfig{PollEvery: time.Hour}, a.st, a.logger)
	first := a.start("org-a", "live", hub.KindEvents, `{}`)
	if err := reg.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec, err := a.st.GetStream(t.Context(), store.Scope{Org: "org-a", Env: "live"}, first)
	if err != nil {
		t.Fatal(err)
	}
	late := rec
	late.ID = "estr_committed_late"
	late.CreatedAt, late.UpdatedAt = rec.UpdatedAt.Add(-2*time.Second), rec.UpdatedAt.Add(-2*time.Second)
	if err := a.st.CreateStream(t.Context(), late); err != nil {
		t.Fatal(err)
	}
	if err := reg.Load(t.Context()); err != nil { // the next poll
		t.Fatal(err)
	}
	p := New(Config{}, nil, reg, a.log, dedup.NewLocal(100, time.Hour), nil, a.sink, a.logger)
	if err := p.Handle(t.Context(), []hub.Message{msg(t, hub.TopicEvents, 1, anEvent("org-a", "live", "evt_1", "veh-1", 0))}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{first, late.ID} {
		if got := eventIDs(a.logged(id)); !slices.Equal(got, []string{"evt_1"}) {
			t.Errorf("stream %s holds %v, want evt_1", id, got)
		}
	}
}
