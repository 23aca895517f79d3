package feed

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/event"
)

func encoded(t *testing.T, id string) []byte {
	t.Helper()
	b, err := event.Marshal(&event.Envelope{Org: "o", Env: "live", Kind: event.KindEvent, IngestedAt: time.Now(),
		Event: &event.Event{EventID: id, EventType: "x", Category: event.CategorySafety, Timestamp: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// A message is decoded once per slot; other bytes at the same offset (a
// log that started over) and another offset of the same slot are decoded
// anew.
func TestDecodedCacheHitsOnlyTheSameMessage(t *testing.T) {
	c := newDecodedCache()
	s := c.of("events", 3)
	if c.of("events", 3) != s || c.of("events", 4) == s || c.of("telemetry", 3) == s {
		t.Fatal("slots are not one per topic and partition")
	}
	a, b := encoded(t, "a"), encoded(t, "b")
	first, err := c.decode(s, 7, a)
	if err != nil || first.env.Event.EventID != "a" {
		t.Fatalf("decode: %v %v", first, err)
	}
	if again, _ := c.decode(s, 7, a); again != first {
		t.Fatal("the same message at the same offset was decoded again")
	}
	if other, _ := c.decode(s, 7, b); other == first || other.env.Event.EventID != "b" {
		t.Fatalf("other bytes at offset 7 gave %q", other.env.Event.EventID)
	}
	if wrapped, _ := c.decode(s, 7+cacheSlots, a); wrapped.env.Event.EventID != "a" || wrapped == first {
		t.Fatal("another offset of the slot was served from the cache")
	}
	if _, err := c.decode(s, 8, []byte{0xc1}); err == nil {
		t.Fatal("undecodable bytes decoded")
	}
}
