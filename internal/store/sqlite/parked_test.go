package sqlite

import (
	"bytes"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

func parkedDelivery(stream string, off int64) store.Delivery {
	now := time.UnixMilli(1_767_225_600_000 + off)
	return store.Delivery{ID: "msg_" + stream + "_" + string(rune('a'+off)), Org: "org", Env: "live", StreamID: stream, Offset: off,
		Payload: []byte(`{"offset":` + string(rune('0'+off)) + `}`), NextAttemptAt: now, QueuedAt: now, CreatedAt: now, Park: true}
}

// Parked deliveries are still there after a restart, in order, counted
// as pending, and move into the queue once.
func TestParkedSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(t.Context(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ds := []store.Delivery{parkedDelivery("s1", 1), parkedDelivery("s1", 2), parkedDelivery("s2", 3), parkedDelivery("s1", 4)}
	if _, err := s.EnqueueDeliveries(t.Context(), ds); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(t.Context(), Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	sc := store.Scope{Org: "org", Env: "live"}
	if n, _ := s.CountDeliveries(t.Context(), sc, "s1"); n[store.DeliveryPending] != 3 {
		t.Fatalf("s1 counts %d pending after a restart, want its 3 parked", n[store.DeliveryPending])
	}
	if n, err := s.UnparkDeliveries(t.Context(), "s1", 2); err != nil || n != 2 {
		t.Fatalf("unpark 2: %d, %v", n, err)
	}
	got, _, err := s.ListDeliveries(t.Context(), sc, "s1", store.DeliveryQuery{Limit: 10})
	if err != nil || len(got) != 2 {
		t.Fatalf("s1 lists %d after unparking 2: %v", len(got), err)
	}
	for _, d := range got {
		if d.Offset != 1 && d.Offset != 2 {
			t.Fatalf("unparked offset %d, want the two oldest", d.Offset)
		}
		if d.Status != store.DeliveryPending || !bytes.Equal(d.Payload, ds[d.Offset-1].Payload) || !d.QueuedAt.Equal(ds[d.Offset-1].QueuedAt) {
			t.Fatalf("unparked %+v", d)
		}
	}
	if n, _ := s.CountDeliveries(t.Context(), sc, "s1"); n[store.DeliveryPending] != 3 {
		t.Fatalf("s1 counts %d pending after unparking 2 of 3", n[store.DeliveryPending])
	}
}

// FuzzDecodeParked: any record decodes or fails cleanly, and whatever
// encodeParked writes decodes to the same delivery.
func FuzzDecodeParked(f *testing.F) {
	f.Add(encodeParked(parkedDelivery("s1", 1)), "msg_x", "estr_1", int64(7), []byte(`{"a":1}`))
	f.Add([]byte{1, 200, 1}, "", "", int64(-1), []byte{})
	f.Fuzz(func(t *testing.T, raw []byte, id, stream string, off int64, payload []byte) {
		_, _ = decodeParked(raw)
		if id == "" || stream == "" {
			return
		}
		at := time.UnixMilli(off)
		d := store.Delivery{ID: id, Org: "o", Env: "e", StreamID: stream, Offset: off, Payload: payload, NextAttemptAt: at, QueuedAt: at, CreatedAt: at}
		back, err := decodeParked(encodeParked(d))
		if err != nil {
			t.Fatal(err)
		}
		if back.ID != id || back.StreamID != stream || back.Offset != off || !bytes.Equal(back.Payload, payload) || ms(back.QueuedAt) != ms(at) {
			t.Fatalf("round trip: %+v from %+v", back, d)
		}
	})
}
