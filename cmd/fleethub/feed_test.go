package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
	hubfeed "github.com/fleethub/fleethub/hub/feed"
	"github.com/twmb/franz-go/pkg/kfake"
)

// sseEvent is one Server-Sent Event as a client reads it.
type sseEvent struct{ ID, Name, Data string }

// sseClient reads an event stream with net/http.
type sseClient struct {
	res    *http.Response
	events chan sseEvent
	cancel context.CancelFunc
}

func openSSE(t *testing.T, n *node, path, key string, hdr ...string) *sseClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, "GET", n.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-API-Key", key)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := (&http.Client{}).Do(req)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		cancel()
		t.Fatalf("event stream: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := &sseClient{res: res, events: make(chan sseEvent, 1024), cancel: cancel}
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(res.Body)
		var ev sseEvent
		var seen bool
		for sc.Scan() {
			line := sc.Text()
			switch {
			case line == "":
				if seen {
					c.events <- ev
				}
				ev, seen = sseEvent{}, false
			case strings.HasPrefix(line, ":"):
				c.events <- sseEvent{Name: "comment", Data: line}
			case strings.HasPrefix(line, "id: "):
				ev.ID, seen = line[4:], true
			case strings.HasPrefix(line, "event: "):
				ev.Name, seen = line[7:], true
			case strings.HasPrefix(line, "data: "):
				ev.Data, seen = line[6:], true
			case strings.HasPrefix(line, "retry: "):
				ev.Name, ev.Data, seen = "retry", line[7:], true
			}
		}
	}()
	t.Cleanup(c.close)
	return c
}

func (c *sseClient) close() { c.cancel(); c.res.Body.Close() }

// next returns the next event that is not a comment or retry, or fails.
func (c *sseClient) next(t *testing.T) sseEvent {
	t.Helper()
	timeout := time.After(20 * time.Second)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatal("event stream ended")
			}
			if ev.Name == "comment" || ev.Name == "retry" {
				continue
			}
			return ev
		case <-timeout:
			t.Fatal("no event within 20 s")
		}
	}
}

type feedEntry struct {
	Cursor  string          `json:"cursor"`
	Type    string          `json:"type"`
	Message json.RawMessage `json:"message"`
}

type feedPage struct {
	Success    bool        `json:"success"`
	Entries    []feedEntry `json:"entries"`
	NextCursor string      `json:"next_cursor"`
}

func (n *node) pull(t *testing.T, key, query string) feedPage {
	t.Helper()
	r := n.do("GET", "/api/v1/streaming/feed?"+query, key, nil)
	if r.Status != 200 {
		t.Fatalf("feed?%s: %d %s", query, r.Status, r.Body)
	}
	var p feedPage
	if err := json.Unmarshal(r.Body, &p); err != nil || !p.Success {
		t.Fatalf("feed page: %v %s", err, r.Body)
	}
	return p
}

func eventIDOf(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var m struct {
		EventID string `json:"event_id"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m.EventID
}

func entryIDs(t *testing.T, es []feedEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = eventIDOf(t, e.Message)
	}
	return out
}

func idRange(vehicle string, from, to int) []string {
	var out []string
	for i := from; i < to; i++ {
		out = append(out, fmt.Sprintf("%s-%d", vehicle, i))
	}
	return out
}

func TestFeedPullReadsTheOrganizationsOwnOldestFirst(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:read", "events:write"}, 100000)
	other := n.key("org-b", "test", []string{"all"}, 100000)
	for i := range 3 {
		n.ingestEvents(t, k, "veh-a", i*10, 10)
		n.ingestEvents(t, k, "veh-x", i*10, 5) // filtered out
		n.ingestEvents(t, other, "veh-a", i*10, 10)
	}
	want := idRange("veh-a", 0, 30)

	// pages of 7, each from the previous next_cursor: every one once, in order
	var got []string
	q := "types=events&vehicle_id=veh-a&category=safety_events&limit=7"
	after := ""
	for range 10 {
		p := n.pull(t, k, q+after)
		got = append(got, entryIDs(t, p.Entries)...)
		after = "&after=" + url.QueryEscape(p.NextCursor)
		if len(p.Entries) == 0 {
			break
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("pages gave %v, want %v", got, want)
	}
	// another organization's feed holds only its own
	if ids := entryIDs(t, n.pull(t, other, "vehicle_id=veh-a&limit=1000").Entries); fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("org-b reads %v", ids)
	}
	// repeated parameters are any of them
	p := n.pull(t, k, "vehicle_id=veh-a&vehicle_id=veh-x&limit=1000")
	if len(p.Entries) != 45 {
		t.Fatalf("two vehicles: %d entries, want 45", len(p.Entries))
	}

	// bad and unknown parameters name themselves
	for q, field := range map[string]string{"limit=0": "limit", "limit=1001": "limit", "wait=31": "wait", "types=points": "types",
		"after=nope": "after", "severity=loud": "severity", "vehicle_ids=veh-a": "vehicle_ids", "types=telemetry&category=safety_events": "category",
		"data_types=engine_diagnostics": "data_types", "event_type=": "event_type"} {
		r := n.do("GET", "/api/v1/streaming/feed?"+q, k, nil)
		det, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if r.Status != 400 || r.errCode(t) != "invalid_request" || det[field] == nil {
			t.Errorf("%s: %d %s, want invalid_request naming %s", q, r.Status, r.Body, field)
		}
	}
	if r := n.do("GET", "/api/v1/streaming/feed", n.key("org-a", "test", []string{"events:write"}, 1000), nil); r.Status != 403 {
		t.Errorf("without streams:read: %d", r.Status)
	}

	// a position past what the log holds is cursor_expired with where to go on
	stale := hubfeed.Position{hub.TopicEvents: []int64{1 << 40, 1, 1, 1, 1, 1, 1, 1}}.Cursor([]string{hub.TopicEvents})
	r := n.do("GET", "/api/v1/streaming/feed?after="+stale, k, nil)
	det, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
	if r.Status != 410 || r.errCode(t) != "cursor_expired" || det["first_available"] == nil {
		t.Fatalf("stale cursor: %d %s", r.Status, r.Body)
	}
	first := n.pull(t, k, "limit=1&after="+url.QueryEscape(det["first_available"].(string)))
	if len(first.Entries) != 1 || eventIDOf(t, first.Entries[0].Message) != "veh-a-0" {
		t.Fatalf("first_available starts at %v", entryIDs(t, first.Entries))
	}
}

func TestFeedPullWaitsForANewEvent(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	n.ingestEvents(t, k, "veh-old", 0, 3)
	got := make(chan feedPage, 1)
	go func() {
		r := n.do("GET", "/api/v1/streaming/feed?after=now&wait=25", k, nil)
		var p feedPage
		json.Unmarshal(r.Body, &p)
		got <- p
	}()
	// the wait may begin after this ingest: keep ingesting until the pull answers
	for i := 0; ; i++ {
		n.ingestEvents(t, k, "veh-new", i, 1)
		select {
		case p := <-got:
			if len(p.Entries) == 0 || !strings.HasPrefix(eventIDOf(t, p.Entries[0].Message), "veh-new-") {
				t.Fatalf("waited pull gave %v", entryIDs(t, p.Entries))
			}
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

func TestFeedEventStreamResumesWithLastEventID(t *testing.T) {
	cfg := testConfig(t)
	cfg.SSEHeartbeat = 200 * time.Millisecond
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	n.ingestEvents(t, k, "veh-s", 0, 10)
	n.ingestEvents(t, k, "veh-x", 0, 10)

	c := openSSE(t, n, "/api/v1/streaming/feed?vehicle_id=veh-s", k)
	var ids []string
	for range 6 {
		ev := c.next(t)
		var e feedEntry
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil || e.Cursor != ev.ID {
			t.Fatalf("event %+v: %v (id must be the entry's cursor)", ev, err)
		}
		ids = append(ids, eventIDOf(t, e.Message))
	}
	last := ""
	// pull and the event stream agree on cursors: the pull's 6th entry
	// has the stream's 6th id
	p := n.pull(t, k, "vehicle_id=veh-s&limit=6")
	c.close() // the connection drops
	last = p.Entries[5].Cursor
	if fmt.Sprint(entryIDs(t, p.Entries)) != fmt.Sprint(ids) {
		t.Fatalf("pull %v, stream %v", entryIDs(t, p.Entries), ids)
	}
	n.ingestEvents(t, k, "veh-s", 10, 5)
	c2 := openSSE(t, n, "/api/v1/streaming/feed?vehicle_id=veh-s", k, "Last-Event-ID", last)
	for range 9 {
		var e feedEntry
		json.Unmarshal([]byte(c2.next(t).Data), &e)
		ids = append(ids, eventIDOf(t, e.Message))
	}
	if want := idRange("veh-s", 0, 15); fmt.Sprint(ids) != fmt.Sprint(want) {
		t.Fatalf("across the reconnect: %v, want %v", ids, want)
	}
	// live, and heartbeats while idle
	n.ingestEvents(t, k, "veh-s", 15, 1)
	var e feedEntry
	json.Unmarshal([]byte(c2.next(t).Data), &e)
	if eventIDOf(t, e.Message) != "veh-s-15" {
		t.Fatalf("live event %s", e.Message)
	}
	for ev := range c2.events {
		if ev.Name == "comment" && strings.Contains(ev.Data, "heartbeat") {
			break
		}
	}
}

func TestStreamEventStreamResumesByOffset(t *testing.T) {
	cfg := testConfig(t)
	cfg.SSEHeartbeat = 200 * time.Millisecond
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	id := startEventStream(t, n, k, "veh-r")
	c := openSSE(t, n, "/api/v1/streaming/sse?stream_id="+id, k)
	sub := c.next(t)
	var subscribed struct{ Epoch string }
	if sub.Name != "subscribed" || json.Unmarshal([]byte(sub.Data), &subscribed) != nil || subscribed.Epoch == "" {
		t.Fatalf("first event %+v", sub)
	}
	n.ingestEvents(t, k, "veh-r", 0, 8)
	read := func(c *sseClient, n int, from int64) {
		t.Helper()
		for i := range n {
			ev := c.next(t)
			var d delivered
			if err := json.Unmarshal([]byte(ev.Data), &d); err != nil || d.StreamID != id || d.Offset != from+int64(i) || ev.ID != fmt.Sprint(d.Offset) || seqOf(t, d) != int(d.Offset-1) {
				t.Fatalf("event %+v (%v), want offset %d", ev, err, from+int64(i))
			}
		}
	}
	read(c, 5, 1)
	c.close()
	n.ingestEvents(t, k, "veh-r", 8, 2)
	c2 := openSSE(t, n, "/api/v1/streaming/sse?stream_id="+id+"&epoch="+subscribed.Epoch, k, "Last-Event-ID", "5")
	if ev := c2.next(t); ev.Name != "subscribed" {
		t.Fatalf("resume: first event %+v", ev)
	}
	read(c2, 5, 6)
	st := n.do("GET", "/api/v1/streaming/events/status/"+id, k, nil).json(t)
	if st["connected_clients"].(float64) < 1 || st["counters"].(map[string]any)["delivered"].(float64) < 10 {
		t.Errorf("status while an event stream follows: connected %v, counters %v", st["connected_clients"], st["counters"])
	}
	// another epoch's offset is history_lost, then delivery from the oldest
	c3 := openSSE(t, n, "/api/v1/streaming/sse?stream_id="+id+"&epoch=another&last_offset=9", k)
	c3.next(t)
	if ev := c3.next(t); ev.Name != "error" || !strings.Contains(ev.Data, `"history_lost"`) {
		t.Fatalf("another epoch: %+v", ev)
	}
	read(c3, 10, 1)
	if r := n.do("GET", "/api/v1/streaming/sse?stream_id=nope", k, nil); r.Status != 404 {
		t.Errorf("unknown stream: %d", r.Status)
	}
	if r := n.do("GET", "/api/v1/streaming/sse?stream_id="+id+"&offset=3", k, nil); r.Status != 400 {
		t.Errorf("unknown parameter: %d", r.Status)
	}
	// stopping the stream ends the event stream with stream_stopped
	n.do("POST", "/api/v1/streaming/events/stop", k, map[string]any{"stream_id": id})
	if ev := c2.next(t); ev.Name != "error" || !strings.Contains(ev.Data, "stream_stopped") {
		t.Fatalf("after stop: %+v", ev)
	}
}

// TestFeedOverKafka: on Kafka the feed reads the topics through the
// brokers; a cursor from the pull (every partition's offset) resumes the
// event stream with no gap and no duplicate.
func TestFeedOverKafka(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.DefaultNumPartitions(8))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cluster.Close)
	cfg := testConfig(t)
	cfg.KafkaBrokers = strings.Join(cluster.ListenAddrs(), ",")
	cfg.SSEHeartbeat = 200 * time.Millisecond
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	for i := range 4 {
		n.ingestEvents(t, k, fmt.Sprintf("veh-k%d", i), 0, 5)
	}
	p := n.pull(t, k, "limit=12")
	if len(p.Entries) != 12 {
		t.Fatalf("first page: %d entries", len(p.Entries))
	}
	seen := map[string]bool{}
	for _, id := range entryIDs(t, p.Entries) {
		seen[id] = true
	}
	c := openSSE(t, n, "/api/v1/streaming/feed", k, "Last-Event-ID", p.NextCursor)
	n.ingestEvents(t, k, "veh-k0", 5, 2)
	for range 10 {
		var e feedEntry
		ev := c.next(t)
		if err := json.Unmarshal([]byte(ev.Data), &e); err != nil || e.Cursor != ev.ID {
			t.Fatalf("event %+v: %v", ev, err)
		}
		id := eventIDOf(t, e.Message)
		if seen[id] {
			t.Fatalf("%s delivered twice", id)
		}
		seen[id] = true
	}
	if len(seen) != 22 {
		t.Fatalf("%d distinct events, want 22", len(seen))
	}
}

// TestFeedPullLastReadsTheNewest: last=N answers the newest N entries the
// filters take, oldest first, and its next_cursor continues after them.
func TestFeedPullLastReadsTheNewest(t *testing.T) {
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"streams:read", "events:write"}, 100000)
	n.ingestEvents(t, k, "veh-a", 0, 30)
	n.ingestEvents(t, k, "veh-x", 0, 5)
	p := n.pull(t, k, "vehicle_id=veh-a&last=10")
	if got := entryIDs(t, p.Entries); fmt.Sprint(got) != fmt.Sprint(idRange("veh-a", 20, 30)) {
		t.Fatalf("last 10: %v", got)
	}
	n.ingestEvents(t, k, "veh-a", 30, 2)
	next := n.pull(t, k, "vehicle_id=veh-a&after="+url.QueryEscape(p.NextCursor))
	if got := entryIDs(t, next.Entries); fmt.Sprint(got) != fmt.Sprint(idRange("veh-a", 30, 32)) {
		t.Fatalf("after last: %v", got)
	}
	for _, q := range []string{"last=0", "last=1001", "last=5&after=now", "last=5&limit=3", "last=5&wait=1"} {
		r := n.do("GET", "/api/v1/streaming/feed?"+q, k, nil)
		det, _ := r.json(t)["error"].(map[string]any)["details"].(map[string]any)
		if r.Status != 400 || det["last"] == nil {
			t.Errorf("%s: %d %s, want invalid_request naming last", q, r.Status, r.Body)
		}
	}
}
