package ws_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/testredis"
)

// subscribed reads the subscribed frame of a stream and checks where it
// starts and in which epoch.
func subscribed(t *testing.T, c *client, id string, offset int64, epoch string) {
	t.Helper()
	got := expectControl(t, c, "subscribed", "")
	if got.StreamID != id || got.Offset != offset || got.Epoch != epoch {
		t.Fatalf("subscribed %+v, want %s at %d in epoch %q", got, id, offset, epoch)
	}
}

// lost reads a history_lost error and checks what it names.
func lost(t *testing.T, c *client, id, epoch string, first int64) {
	t.Helper()
	got := expectControl(t, c, "error", "history_lost")
	if got.StreamID != id || got.Epoch != epoch || got.FirstAvailable != first || got.Message == "" {
		t.Fatalf("history_lost %+v, want %s in epoch %q from %d", got, id, epoch, first)
	}
}

// handled waits until the server handled every frame sent before: it
// handles a connection's frames in order, and answers ping.
func handled(t *testing.T, c *client) {
	t.Helper()
	send(t, c, `{"type":"ping"}`)
	expectControl(t, c, "pong", "")
}

func epochOf(t *testing.T, l hub.Log, id string) string {
	t.Helper()
	e, err := l.Epoch(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// The subscribed frame names the stream's epoch, for the query's streams
// and for subscribe frames (embedlog: an epoch per log).
func TestSubscribedCarriesEpoch(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	epoch := epochOf(t, f.log, "s1")
	if epoch == "" {
		t.Fatal("embedlog gave no epoch")
	}
	c := f.mustDial("stream_id=s1")
	subscribed(t, c, "s1", 1, epoch)
	send(t, c, `{"type":"subscribe","stream_id":"s2"}`)
	subscribed(t, c, "s2", 1, epoch)
	f.appendN("s1", 3, 0)
	readOffsets(t, c, "s1", 1, 3)
	// the epoch a client was given resumes after its offset
	c2 := f.mustDial("stream_id=s1&last_offset=1&epoch=" + epoch)
	subscribed(t, c2, "s1", 2, epoch)
	readOffsets(t, c2, "s1", 2, 2)
}

// With the stream's epoch, resume goes on after last_offset, from the
// query, a resume frame or a subscribe frame.
func TestResumeWithEpoch(t *testing.T) {
	l := newHistLog(1000)
	f := newFixtureLog(t, ws.Config{}, l, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	f.appendN("s1", 10, 0)
	f.appendN("s2", 4, 0)
	epoch := epochOf(t, l, "s1")

	c := f.mustDial("stream_id=s1&last_offset=4&epoch=" + epoch)
	subscribed(t, c, "s1", 5, epoch)
	readOffsets(t, c, "s1", 5, 6)
	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":7,"epoch":"`+epoch+`"}`)
	subscribed(t, c, "s1", 8, epoch)
	readOffsets(t, c, "s1", 8, 3)
	send(t, c, `{"type":"subscribe","stream_id":"s2","last_offset":2,"epoch":"`+epoch+`"}`)
	subscribed(t, c, "s2", 3, epoch)
	readOffsets(t, c, "s2", 3, 2)
	f.appendN("s1", 1, 0)
	readOffsets(t, c, "s1", 11, 1)
}

// A position of another epoch gets history_lost with the current epoch
// and the oldest retained offset, and delivery from there: from the
// query, a resume frame and a subscribe frame. Without an epoch the
// documented behaviour stays (offsets_expired past retention).
func TestResumeWithLostHistory(t *testing.T) {
	l := newHistLog(5)
	f := newFixtureLog(t, ws.Config{}, l, hub.StreamInfo{ID: "s1"}, hub.StreamInfo{ID: "s2"})
	f.appendN("s1", 10, 0)
	old, cur := l.lose()
	f.appendN("s1", 8, 0) // 1..8 appended, 4..8 retained

	c := f.mustDial(fmt.Sprintf("stream_id=s1&last_offset=9&epoch=%s", old))
	subscribed(t, c, "s1", 4, cur)
	lost(t, c, "s1", cur, 4)
	readOffsets(t, c, "s1", 4, 5)
	f.appendN("s1", 1, 0) // 5..9 retained
	readOffsets(t, c, "s1", 9, 1)

	send(t, c, `{"type":"resume","stream_id":"s1","last_offset":2,"epoch":"`+old+`"}`)
	subscribed(t, c, "s1", 5, cur)
	lost(t, c, "s1", cur, 5)
	readOffsets(t, c, "s1", 5, 5)

	c2 := f.mustDial("stream_id=s2")
	subscribed(t, c2, "s2", 1, cur)
	send(t, c2, `{"type":"subscribe","stream_id":"s1","last_offset":3,"epoch":"`+old+`"}`)
	subscribed(t, c2, "s1", 5, cur)
	lost(t, c2, "s1", cur, 5)
	readOffsets(t, c2, "s1", 5, 5)

	// no epoch: the offset is taken as one of the current history
	c3 := f.mustDial("stream_id=s1&last_offset=2")
	subscribed(t, c3, "s1", 3, cur)
	if got := expectControl(t, c3, "error", "offsets_expired"); got.FirstAvailable != 5 {
		t.Fatalf("first_available %d, want 5", got.FirstAvailable)
	}
	readOffsets(t, c3, "s1", 5, 5)
}

// A history lost while a client follows the stream is reported the same
// way, and delivery goes on from the new history's oldest offset.
func TestHistoryLostWhileFollowing(t *testing.T) {
	for _, batch := range []bool{false, true} {
		t.Run(map[bool]string{false: "single", true: "batch"}[batch], func(t *testing.T) {
			l := newHistLog(1000)
			l.waited = make(chan int64, 64)
			info := hub.StreamInfo{ID: "s1"}
			if batch {
				// a batch pending when the loss is seen goes out first
				info.BatchEvents, info.BatchSize, info.MaxWait = true, 100, time.Hour
			}
			f := newFixtureLog(t, ws.Config{}, l, info)
			c := f.mustDial("stream_id=s1")
			subscribed(t, c, "s1", 1, epochOf(t, l, "s1"))
			f.appendN("s1", 3, 0)
			if batch {
				// the pump holds 1..3 in the batch it fills once it
				// waits for offset 4
				deadline := time.After(5 * time.Second)
				for from := int64(0); from != 4; {
					select {
					case from = <-l.waited:
					case <-deadline:
						t.Fatalf("the pump never waited for offset 4 (last from %d)", from)
					}
				}
			} else {
				readOffsets(t, c, "s1", 1, 3)
			}
			_, cur := l.lose()
			if batch {
				readOffsets(t, c, "s1", 1, 3)
			}
			lost(t, c, "s1", cur, 1)
			f.appendN("s1", 2, 0)
			if batch {
				f.appendN("s1", 98, 0)
				readOffsets(t, c, "s1", 1, 100)
				return
			}
			readOffsets(t, c, "s1", 1, 2)
		})
	}
}

// An at_least_once stream resumes after the ack of its epoch; an ack of
// another epoch is a lost history.
func TestAckEpoch(t *testing.T) {
	l := newHistLog(1000)
	f := newFixtureLog(t, ws.Config{}, l, hub.StreamInfo{ID: "s1", AtLeastOnce: true})
	first := epochOf(t, l, "s1")
	c := f.mustDial("stream_id=s1")
	subscribed(t, c, "s1", 1, first)
	f.appendN("s1", 10, 0)
	readOffsets(t, c, "s1", 1, 10)
	send(t, c, `{"type":"ack","stream_id":"s1","offset":6}`) // in the subscribed frame's epoch
	handled(t, c)

	c2 := f.mustDial("stream_id=s1")
	subscribed(t, c2, "s1", 7, first)
	readOffsets(t, c2, "s1", 7, 4)

	old, cur := l.lose()
	f.appendN("s1", 3, 0)
	c3 := f.mustDial("stream_id=s1")
	subscribed(t, c3, "s1", 1, cur)
	lost(t, c3, "s1", cur, 1)
	readOffsets(t, c3, "s1", 1, 3)
	send(t, c3, `{"type":"ack","stream_id":"s1","offset":2,"epoch":"`+cur+`"}`)
	handled(t, c3)

	c4 := f.mustDial("stream_id=s1")
	subscribed(t, c4, "s1", 3, cur)
	readOffsets(t, c4, "s1", 3, 1)
	// an ack naming the lost epoch: the next connection starts over
	send(t, c4, `{"type":"ack","stream_id":"s1","offset":3,"epoch":"`+old+`"}`)
	handled(t, c4)
	c5 := f.mustDial("stream_id=s1")
	subscribed(t, c5, "s1", 1, cur)
	lost(t, c5, "s1", cur, 1)
	readOffsets(t, c5, "s1", 1, 3)
}

// Bad epochs are refused: 400 before the upgrade, invalid_frame after.
func TestBadEpoch(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	long := strings.Repeat("e", 65)
	for _, q := range []string{
		"stream_id=s1&last_offset=3&epoch=",
		"stream_id=s1&last_offset=3&epoch=a%20b",
		"stream_id=s1&last_offset=3&epoch=a.b",
		"stream_id=s1&last_offset=3&epoch=%C3%A9",
		"stream_id=s1&last_offset=3&epoch=" + long,
		"stream_id=s1&epoch=abc", // without last_offset
	} {
		_, resp, err := f.dial(q, false)
		if err == nil {
			t.Fatalf("%s: upgraded", q)
		}
		if resp == nil {
			t.Fatalf("%s: %v", q, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || !strings.Contains(string(b), `"code":"invalid_request"`) {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, b)
		}
	}
	// the longest epoch is a valid one (of another history here)
	c := f.mustDial("stream_id=s1&last_offset=0&epoch=" + long[1:])
	subscribed(t, c, "s1", 1, epochOf(t, f.log, "s1"))
	lost(t, c, "s1", epochOf(t, f.log, "s1"), 1)
	for _, bad := range []string{
		`{"type":"resume","stream_id":"s1","last_offset":1,"epoch":""}`,
		`{"type":"resume","stream_id":"s1","last_offset":1,"epoch":"a b"}`,
		`{"type":"resume","stream_id":"s1","last_offset":1,"epoch":"` + long + `"}`,
		`{"type":"resume","stream_id":"s1","last_offset":1,"epoch":7}`,
		`{"type":"subscribe","stream_id":"s1","epoch":"abc"}`,
		`{"type":"ack","stream_id":"s1","offset":1,"epoch":"a/b"}`,
	} {
		send(t, c, bad)
		if got := expectControl(t, c, "error", "invalid_frame"); got.Message == "" {
			t.Fatalf("%s: no message", bad)
		}
	}
	handled(t, c)
}

// An unknown query parameter is refused before the upgrade, named in
// details.
func TestUnknownQueryParameter(t *testing.T) {
	f := newFixture(t, ws.Config{}, hub.StreamInfo{ID: "s1"})
	_, resp, err := f.dial("stream_id=s1&bogus=1", false)
	if err == nil {
		t.Fatal("upgraded")
	}
	if resp == nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var body struct {
		Error struct {
			Code    string            `json:"code"`
			Details map[string]string `json:"details"`
		} `json:"error"`
	}
	if jerr := json.Unmarshal(b, &body); jerr != nil || resp.StatusCode != 400 || body.Error.Code != "invalid_request" || body.Error.Details["bogus"] == "" {
		t.Fatalf("%d %s", resp.StatusCode, b)
	}
}

// RedisAcks keeps positions with their epochs, and reads the bare offsets
// stored before epochs as positions of no epoch.
func TestRedisAcks(t *testing.T) {
	rdb := testredis.Client(t)
	a := ws.NewRedisAcks(rdb, time.Minute)
	k := fmt.Sprintf("test-%d", time.Now().UnixNano())
	testAcks(t, a, k)

	ctx := context.Background()
	if err := rdb.Set(ctx, "fleethub:ack:"+k+":old", "41", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if p, ok, err := a.Acked(ctx, k, "old"); err != nil || !ok || p != (ws.Position{Offset: 41}) {
		t.Fatalf("acked %+v %v %v, want 41 of no epoch", p, ok, err)
	}
	if err := a.Ack(ctx, k, "old", ws.Position{Offset: 42, Epoch: "e"}); err != nil {
		t.Fatal(err)
	}
	if p, _, _ := a.Acked(ctx, k, "old"); p != (ws.Position{Offset: 42, Epoch: "e"}) {
		t.Fatalf("acked %+v, want 42 of e", p)
	}
}

// Two followers share a stream's frame cache: after a lost history the
// new offset 1 is another message than the old one, of the same length,
// and is delivered as itself.
func TestLostHistoryNotServedFromFrameCache(t *testing.T) {
	l := newHistLog(1000)
	f := newFixtureLog(t, ws.Config{}, l, hub.StreamInfo{ID: "s1"})
	a, b := f.mustDial("stream_id=s1"), f.mustDial("stream_id=s1")
	for _, c := range []*client{a, b} {
		subscribed(t, c, "s1", 1, epochOf(t, l, "s1"))
	}
	appendMsgs := func(msgs ...string) {
		data := make([][]byte, len(msgs))
		for i, m := range msgs {
			data[i] = []byte(m)
		}
		if _, err := l.Append(context.Background(), "s1", data); err != nil {
			t.Fatal(err)
		}
	}
	expect := func(c *client, want ...string) {
		t.Helper()
		for i := 0; i < len(want); {
			fr, err := read(t, c, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range fr.msgs {
				if w.Offset != int64(i+1) || string(w.Message) != want[i] {
					t.Fatalf("offset %d %s, want %d %s", w.Offset, w.Message, i+1, want[i])
				}
				i++
			}
		}
	}
	appendMsgs(`{"v":"a1"}`, `{"v":"a2"}`)
	expect(a, `{"v":"a1"}`, `{"v":"a2"}`)
	expect(b, `{"v":"a1"}`, `{"v":"a2"}`)
	_, cur := l.lose()
	lost(t, a, "s1", cur, 1)
	lost(t, b, "s1", cur, 1)
	appendMsgs(`{"v":"b1"}`, `{"v":"b2"}`)
	expect(a, `{"v":"b1"}`, `{"v":"b2"}`)
	expect(b, `{"v":"b1"}`, `{"v":"b2"}`)
}
