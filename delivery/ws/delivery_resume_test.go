package ws_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

func TestResumeQueryNoGap(t *testing.T) {
	f := newFixture(t, ws.Config{ReadBatch: 64}, hub.StreamInfo{ID: "s1"})
	const total = 3000
	f.appendN("s1", 1000, 0)
	c := f.mustDial("stream_id=s1&last_offset=250")
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 251 {
		t.Fatalf("subscribed at %d, want 251", got.Offset)
	}
	// appends keep coming while the client replays: ten more after every
	// tenth message read, until the log holds total
	last := int64(1000)
	readOffsetsEach(t, c, "s1", 251, total-250, func(off int64) {
		if off%10 == 0 && last < total {
			last = f.appendN("s1", 10, 0)
		}
	})
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", total+1, 10)
	expectSilence(t, c, 100*time.Millisecond)
}

func TestResumeFrame(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", 1, 10)
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":3}`)
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 4 {
		t.Fatalf("resumed at %d, want 4", got.Offset)
	}
	readOffsets(t, c, "s1", 4, 7)
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 11, 5)
	// a position past the head starts at the head
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":999}`)
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 16 {
		t.Fatalf("resumed at %d, want 16", got.Offset)
	}
	if n := f.counter.conns("s1"); n != 1 {
		t.Fatalf("connected %d after resumes, want 1", n)
	}
}

func TestStopStream(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1,s2")
	expectControl(t, c, "subscribed", "")
	expectControl(t, c, "subscribed", "")
	f.streams.setState("s1", hub.StateStopped)
	f.appendN("s1", 1, 0) // wakes the pump; it is not delivered
	if got := expectControl(t, c, "error", "stream_stopped"); got.StreamID != "s1" {
		t.Fatalf("stopped %+v", got)
	}
	f.appendN("s2", 1, 0)
	readOffsets(t, c, "s2", 1, 1)
	f.streams.setState("s2", hub.StateStopped) // noticed within a second, without appends
	expectControl(t, c, "error", "stream_stopped")
	if code := expectClose(t, c); code != ws.CloseStreamStopped {
		t.Fatalf("close %d, want 4001", code)
	}
	eventually(t, "counters", func() bool { return f.counter.conns("s1") == 0 && f.counter.conns("s2") == 0 })

	// connecting to a stopped stream: upgraded, told, closed
	c2 := f.mustDial("stream_id=s1")
	expectControl(t, c2, "error", "stream_stopped")
	if code := expectClose(t, c2); code != ws.CloseStreamStopped {
		t.Fatalf("close %d, want 4001", code)
	}
}

// Streams whose subscribers all wait with nothing to deliver notice a
// stop without any append, every one of them, and again after the first
// check came and went.
func TestStopNoticedOnEveryWaitingStream(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"}, hub.StreamInfo{ID: "s3"})
	conns := map[string]*client{}
	for _, id := range []string{"s1", "s2", "s3"} {
		conns[id] = f.mustDial("stream_id=" + id)
		expectControl(t, conns[id], "subscribed", "")
	}
	f.appendN("s3", 1, 0)
	readOffsets(t, conns["s3"], "s3", 1, 1)
	f.streams.setState("s1", hub.StateStopped)
	f.streams.setState("s2", hub.StateStopped)
	for _, id := range []string{"s1", "s2"} {
		if got := expectControl(t, conns[id], "error", "stream_stopped"); got.StreamID != id {
			t.Fatalf("stopped %+v, want %s", got, id)
		}
	}
	expectSilence(t, conns["s3"], 1500*time.Millisecond) // a check passed: s3 is active
	f.streams.setState("s3", hub.StateStopped)
	expectControl(t, conns["s3"], "error", "stream_stopped")
}

func TestPause(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 1, 5)
	f.streams.setState("s1", hub.StatePaused)
	f.appendN("s1", 5, 0)
	expectSilence(t, c, 1500*time.Millisecond)
	f.streams.setState("s1", hub.StateActive)
	f.appendN("s1", 5, 0)
	readOffsets(t, c, "s1", 6, 10)
}

func TestAckThenReconnect(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", AtLeastOnce: true}, hub.StreamInfo{ID: "s2"})
	c := f.mustDial("stream_id=s1")
	if got := expectControl(t, c, "subscribed", ""); got.Offset != 1 {
		t.Fatalf("subscribed at %d", got.Offset)
	}
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", 1, 10)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":6}`)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":4}`) // lower: kept at 6
	send(t, c, `{"type":"ack","stream_id":"nope","offset":4}`)
	expectControl(t, c, "error", "stream_not_found")
	_ = c.Close()
	eventually(t, "closed", func() bool { return f.srv.Connections() == 0 })

	c2 := f.mustDial("stream_id=s1")
	if got := expectControl(t, c2, "subscribed", ""); got.Offset != 7 {
		t.Fatalf("reconnected at %d, want 7", got.Offset)
	}
	readOffsets(t, c2, "s1", 7, 4)
	// last_offset wins over the ack
	c3 := f.mustDial("stream_id=s1&last_offset=8")
	if got := expectControl(t, c3, "subscribed", ""); got.Offset != 9 {
		t.Fatalf("subscribed at %d, want 9", got.Offset)
	}
}

// An ack of an offset the connection has not delivered is refused and
// stores nothing: the next connection gets every message after the last
// real ack, none skipped.
func TestAckPastDeliveredRefused(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1", AtLeastOnce: true}, hub.StreamInfo{ID: "s2", AtLeastOnce: true})
	c := f.mustDial("stream_id=s1")
	expectControl(t, c, "subscribed", "")
	f.appendN("s1", 2, 0)
	readOffsets(t, c, "s1", 1, 2)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":1}`)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":50}`)
	if got := expectControl(t, c, "error", "offset_not_delivered"); got.StreamID != "s1" || got.Offset != 50 {
		t.Fatalf("refusal %+v, want s1 offset 50", got)
	}
	f.appendN("s1", 2, 0)
	readOffsets(t, c, "s1", 3, 2)
	// a stream not followed here: up to its newest offset
	f.appendN("s2", 3, 0)
	send(t, c, `{"type":"ack","stream_id":"s2","offset":4}`)
	if got := expectControl(t, c, "error", "offset_not_delivered"); got.StreamID != "s2" || got.Offset != 4 {
		t.Fatalf("refusal %+v, want s2 offset 4", got)
	}
	send(t, c, `{"type":"ack","stream_id":"s2","offset":3}`)
	handled(t, c)
	_ = c.Close()
	eventually(t, "closed", func() bool { return f.srv.Connections() == 0 })

	c2 := f.mustDial("stream_id=s1")
	if got := expectControl(t, c2, "subscribed", ""); got.Offset != 2 {
		t.Fatalf("reconnected at %d, want 2 (after the last ack accepted)", got.Offset)
	}
	readOffsets(t, c2, "s1", 2, 3)
	c3 := f.mustDial("stream_id=s2")
	if got := expectControl(t, c3, "subscribed", ""); got.Offset != 4 {
		t.Fatalf("s2 reconnected at %d, want 4", got.Offset)
	}
}

func TestOffsetsExpired(t *testing.T) {
	f := newFixtureLog(t, ws.Config{}, newHistLog(100), hub.StreamInfo{ID: "s1"})
	f.appendN("s1", 300, 0)
	c := f.mustDial("stream_id=s1&last_offset=10")
	expectControl(t, c, "subscribed", "")
	if got := expectControl(t, c, "error", "offsets_expired"); got.FirstAvailable != 201 {
		t.Fatalf("first_available %d, want 201", got.FirstAvailable)
	}
	readOffsets(t, c, "s1", 201, 100)
}

func TestMemoryAcks(t *testing.T) {
	testAcks(t, ws.NewMemoryAcks(), "k")
}

// testAcks runs the Acks contract on a store, with keys of prefix k.
func testAcks(t *testing.T, a ws.Acks, k string) {
	t.Helper()
	ctx := context.Background()
	if _, ok, _ := a.Acked(ctx, k, "s"); ok {
		t.Fatal("acked before any ack")
	}
	for _, off := range []int64{5, 3, 9, 7} {
		if err := a.Ack(ctx, k, "s", ws.Position{Offset: off, Epoch: "e1"}); err != nil {
			t.Fatal(err)
		}
	}
	if p, ok, err := a.Acked(ctx, k, "s"); err != nil || !ok || p != (ws.Position{Offset: 9, Epoch: "e1"}) {
		t.Fatalf("acked %+v %v %v, want 9 of e1", p, ok, err)
	}
	if _, ok, _ := a.Acked(ctx, k+"2", "s"); ok {
		t.Fatal("another key shares the ack")
	}
	// an ack of another epoch replaces the stored one, even lower
	_ = a.Ack(ctx, k, "s", ws.Position{Offset: 2, Epoch: "e2"})
	if p, _, _ := a.Acked(ctx, k, "s"); p != (ws.Position{Offset: 2, Epoch: "e2"}) {
		t.Fatalf("acked %+v, want 2 of e2", p)
	}
	_ = a.Ack(ctx, k, "s", ws.Position{Offset: 1, Epoch: "e2"})
	if p, _, _ := a.Acked(ctx, k, "s"); p != (ws.Position{Offset: 2, Epoch: "e2"}) {
		t.Fatalf("acked %+v, want 2 of e2", p)
	}
}
