package main

// The machinery of the crash harness (crash_test.go): the server as a child
// process that can be SIGKILLed and restarted, an HTTP client that returns
// errors instead of failing the test (ingest goroutines see the child die),
// a reader of a stream's whole log over a real websocket, a webhook
// receiver, and fresh PostgreSQL and Redis state per run.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub/event"
)

// crashAPI calls the child's HTTP API. Errors are returned, never fatal:
// the ingest goroutines see the child die under them.
type crashAPI struct {
	base string
	key  string
	tr   *http.Transport
	hc   *http.Client
}

func newCrashAPI(base, key string) *crashAPI {
	tr := &http.Transport{MaxIdleConnsPerHost: 16, IdleConnTimeout: 30 * time.Second}
	return &crashAPI{base: base, key: key, tr: tr, hc: &http.Client{Transport: tr, Timeout: 15 * time.Second}}
}

func (a *crashAPI) call(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, a.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("X-API-Key", a.key)
	res, err := a.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return res.StatusCode, nil, err
	}
	return res.StatusCode, b, nil
}

// must calls and fails the test unless the answer has the wanted status;
// it decodes the body into out when out is not nil.
func (a *crashAPI) must(t *testing.T, want int, method, path string, body, out any) {
	t.Helper()
	status, b, err := a.call(context.Background(), method, path, body)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	if status != want {
		t.Fatalf("%s %s: %d %s (want %d)", method, path, status, b, want)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, b)
		}
	}
}

// crashMsg is the part of a delivered message the harness identifies it by:
// vehicle_id and sequence for telemetry, event_id for events.
type crashMsg struct {
	VehicleID string `json:"vehicle_id"`
	Sequence  int64  `json:"sequence"`
	EventID   string `json:"event_id"`
}

// crashFrame is any frame of the websocket: a control frame (type set) or
// a message wrapper (message is an object).
type crashFrame struct {
	Type           string          `json:"type"`
	Code           string          `json:"code"`
	StreamID       string          `json:"stream_id"`
	Offset         int64           `json:"offset"`
	FirstAvailable int64           `json:"first_available"`
	Message        json.RawMessage `json:"message"`
}

// crashLogRead is what one read of a stream's log found.
type crashLogRead struct {
	subscribedAt int64            // the offset the subscribed frame announced (first one)
	expiredFrom  int64            // first_available of an offsets_expired error, if any
	first, last  int64            // lowest and highest message offsets read
	messages     int              // wrappers read
	found        map[string]int64 // message id → first offset it was read at
	duplicates   int              // wrappers whose id was read before
	gaps         []string         // "after 41 came 45"
	errs         []string         // error frames and read errors
}

// crashReadLog reads a stream's log over a websocket from last_offset=0
// until every wanted id was read and the highest offset reached minLast,
// or until the deadline. A dropped connection resumes after the last
// offset read. id names a message (empty: not one of the harness's).
func crashReadLog(base, key, streamID string, want map[string]int, minLast int64, deadline time.Time, id func(crashMsg) string) crashLogRead {
	r := crashLogRead{found: map[string]int64{}}
	missing := len(want)
	done := func() bool { return missing == 0 && r.last >= minLast }
	u := strings.Replace(base, "http://", "ws://", 1) + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(streamID) + "&last_offset="
	h := http.Header{"X-Api-Key": []string{key}}
	for !done() && time.Now().Before(deadline) {
		d := websocket.Dialer{HandshakeTimeout: 5 * time.Second}
		c, res, err := d.Dial(u+fmt.Sprint(r.last), h)
		if err != nil {
			status := 0
			if res != nil {
				status = res.StatusCode
			}
			r.errs = append(r.errs, fmt.Sprintf("dial: %v (status %d)", err, status))
			crashPause(min(time.Until(deadline), 200*time.Millisecond)) // between dial attempts
			continue
		}
		c.SetReadDeadline(deadline)
		for !done() {
			_, data, err := c.ReadMessage()
			if err != nil {
				var ne net.Error
				if !(errors.As(err, &ne) && ne.Timeout()) {
					r.errs = append(r.errs, "read: "+err.Error())
				}
				break
			}
			var frames []crashFrame
			if len(data) > 0 && data[0] == '[' {
				if err := json.Unmarshal(data, &frames); err != nil {
					r.errs = append(r.errs, fmt.Sprintf("bad frame %.200s: %v", data, err))
					continue
				}
			} else {
				var f crashFrame
				if err := json.Unmarshal(data, &f); err != nil {
					r.errs = append(r.errs, fmt.Sprintf("bad frame %.200s: %v", data, err))
					continue
				}
				frames = []crashFrame{f}
			}
			for _, f := range frames {
				switch {
				case f.Type == "subscribed":
					if r.subscribedAt == 0 {
						r.subscribedAt = f.Offset
					}
					continue
				case f.Type == "error" && f.Code == "offsets_expired":
					r.expiredFrom = f.FirstAvailable
					continue
				case f.Type != "":
					if f.Type == "error" {
						r.errs = append(r.errs, fmt.Sprintf("error frame %s: %s", f.Code, f.Message))
					}
					continue
				}
				if f.StreamID != streamID || len(f.Message) == 0 || f.Message[0] != '{' {
					continue
				}
				if r.last != 0 && f.Offset != r.last+1 {
					r.gaps = append(r.gaps, fmt.Sprintf("after %d came %d", r.last, f.Offset))
				}
				if r.first == 0 || f.Offset < r.first {
					r.first = f.Offset
				}
				r.last = max(r.last, f.Offset)
				r.messages++
				var m crashMsg
				if err := json.Unmarshal(f.Message, &m); err != nil {
					r.errs = append(r.errs, fmt.Sprintf("offset %d: %v", f.Offset, err))
					continue
				}
				k := id(m)
				if k == "" {
					continue
				}
				if _, seen := r.found[k]; seen {
					r.duplicates++
					continue
				}
				r.found[k] = f.Offset
				if _, ok := want[k]; ok {
					missing--
				}
			}
		}
		c.Close()
	}
	return r
}

// crashHit is one request the webhook receiver got.
type crashHit struct {
	webhookID string
	events    []string // event_ids the body carried
	offsets   []int64
}

// crashReceiver is the webhook endpoint: it answers 200 and records every
// request's webhook-id and the messages its body carried.
type crashReceiver struct {
	srv *httptest.Server

	mu       sync.Mutex // guards the fields below
	hits     int
	byID     map[string][]string // webhook-id → event ids of its first request
	conflict []string            // a webhook-id that came back with other content
	events   map[string]string   // event id → a webhook-id it came under
}

func newCrashReceiver(t *testing.T) *crashReceiver {
	rc := &crashReceiver{byID: map[string][]string{}, events: map[string]string{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h := crashHit{webhookID: r.Header.Get("webhook-id")}
		var one struct {
			Offset  int64    `json:"offset"`
			Message crashMsg `json:"message"`
		}
		var many []struct {
			Offset  int64    `json:"offset"`
			Message crashMsg `json:"message"`
		}
		if len(b) > 0 && b[0] == '[' {
			json.Unmarshal(b, &many)
		} else if json.Unmarshal(b, &one) == nil {
			many = append(many, one)
		}
		for _, m := range many {
			h.events = append(h.events, m.Message.EventID)
			h.offsets = append(h.offsets, m.Offset)
		}
		rc.record(h)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *crashReceiver) record(h crashHit) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.hits++
	if prev, ok := rc.byID[h.webhookID]; ok {
		if strings.Join(prev, ",") != strings.Join(h.events, ",") {
			rc.conflict = append(rc.conflict, fmt.Sprintf("%s carried %v, then %v", h.webhookID, prev, h.events))
		}
		return
	}
	rc.byID[h.webhookID] = h.events
	for _, e := range h.events {
		rc.events[e] = h.webhookID
	}
}

// snapshot copies what was received so far.
func (rc *crashReceiver) snapshot() (hits int, byID map[string][]string, events map[string]string, conflicts []string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	byID = make(map[string][]string, len(rc.byID))
	for k, v := range rc.byID {
		byID[k] = v
	}
	events = make(map[string]string, len(rc.events))
	for k, v := range rc.events {
		events[k] = v
	}
	return rc.hits, byID, events, append([]string(nil), rc.conflict...)
}

// crashSchema creates a PostgreSQL schema of its own for this run, dropped
// at cleanup, and returns the URL whose search_path is that schema (as the
// store's own tests isolate themselves).
func crashSchema(t *testing.T, base string) string {
	t.Helper()
	b := make([]byte, 8)
	rand.Read(b)
	name := "fleethub_crash_" + hex.EncodeToString(b)
	ident := pgx.Identifier{name}.Sanitize()
	exec := func(ctx context.Context, sql string) error {
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			return fmt.Errorf("connect: %w", err)
		}
		defer conn.Close(ctx)
		_, err = conn.Exec(ctx, sql)
		return err
	}
	if err := exec(context.Background(), "CREATE SCHEMA "+ident); err != nil {
		t.Fatalf("CREATE SCHEMA: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			t.Errorf("DROP SCHEMA %s: %v", name, err)
		}
	})
	if !strings.HasPrefix(base, "postgres://") && !strings.HasPrefix(base, "postgresql://") {
		return base + " search_path=" + name
	}
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("FLEETHUB_TEST_DATABASE_URL: %v", err)
	}
	q := u.Query()
	q.Set("search_path", name)
	u.RawQuery = q.Encode()
	return u.String()
}

// crashRedisCleanup removes, at cleanup, the Redis keys that name one of
// the run's streams or event ids: the server has no key prefix flag, so the
// run keeps to itself by unique names instead.
func crashRedisCleanup(t *testing.T, redisURL string, patterns func() []string) {
	t.Cleanup(func() {
		opt, err := redis.ParseURL(redisURL)
		if err != nil {
			return
		}
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		for _, p := range patterns() {
			it := rdb.Scan(ctx, 0, p, 1000).Iterator()
			var keys []string
			for it.Next(ctx) {
				keys = append(keys, it.Val())
			}
			for len(keys) > 0 {
				n := min(len(keys), 500)
				rdb.Del(ctx, keys[:n]...)
				keys = keys[n:]
			}
		}
	})
}

// crashPipelineGroup is the pipeline's consumer group (pipeline.Config's
// default, which cmd/fleethub keeps).
const crashPipelineGroup = "fleethub-pipeline"

// crashKafkaWhere tells, for messages missing from a stream's log, where
// they are in Kafka: past the pipeline group's committed offset (not
// consumed yet: stuck, not lost), before it (consumed and committed, yet
// never appended: lost), or not in the topic at all (acknowledged but never
// published: lost). id names a message of the topic ("" to skip).
func crashKafkaWhere(brokers []string, topic string, missing []string, id func(*event.Envelope) string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	want := make(map[string]bool, len(missing))
	for _, k := range missing {
		want[k] = true
	}
	cl := &kafka.Client{Addr: kafka.TCP(brokers...), Timeout: 10 * time.Second}
	md, err := cl.Metadata(ctx, &kafka.MetadataRequest{Topics: []string{topic}})
	if err != nil || len(md.Topics) != 1 {
		return fmt.Sprintf("Kafka: metadata of %s: %v", topic, err)
	}
	var parts []int
	for _, p := range md.Topics[0].Partitions {
		parts = append(parts, p.ID)
	}
	committed := map[int]int64{}
	of, err := cl.OffsetFetch(ctx, &kafka.OffsetFetchRequest{GroupID: crashPipelineGroup, Topics: map[string][]int{topic: parts}})
	if err != nil {
		return fmt.Sprintf("Kafka: committed offsets of %s: %v", crashPipelineGroup, err)
	}
	for _, p := range of.Topics[topic] {
		committed[p.Partition] = p.CommittedOffset
	}
	reqs := make([]kafka.OffsetRequest, len(parts))
	for i, p := range parts {
		reqs[i] = kafka.LastOffsetOf(p)
	}
	lo, err := cl.ListOffsets(ctx, &kafka.ListOffsetsRequest{Topics: map[string][]kafka.OffsetRequest{topic: reqs}})
	if err != nil {
		return fmt.Sprintf("Kafka: end offsets of %s: %v", topic, err)
	}
	end := map[int]int64{}
	for _, p := range lo.Topics[topic] {
		end[p.Partition] = p.LastOffset
	}
	var beyond, before int
	var lag []string
	for _, p := range parts {
		if committed[p] < end[p] {
			lag = append(lag, fmt.Sprintf("partition %d committed %d of %d", p, committed[p], end[p]))
		}
		if end[p] == 0 {
			continue
		}
		r := kafka.NewReader(kafka.ReaderConfig{Brokers: brokers, Topic: topic, Partition: p, MaxBytes: 16 << 20, MaxWait: 200 * time.Millisecond})
		r.SetOffset(kafka.FirstOffset)
		for {
			m, err := r.ReadMessage(ctx)
			if err != nil {
				lag = append(lag, fmt.Sprintf("partition %d: read: %v", p, err))
				break
			}
			if env, err := event.Unmarshal(m.Value); err == nil {
				if k := id(env); want[k] {
					delete(want, k)
					if m.Offset >= committed[p] {
						beyond++
					} else {
						before++
					}
				}
			}
			if m.Offset+1 >= end[p] {
				break
			}
		}
		r.Close()
	}
	slices.Sort(lag)
	lags := "every partition committed to its end"
	if len(lag) > 0 {
		lags = "behind: " + strings.Join(lag[:min(len(lag), 8)], ", ")
	}
	return fmt.Sprintf("In Kafka (%s, group %s): %d of them are past the group's committed offset (not consumed: stuck), %d before it (consumed and committed, never appended: lost), %d not in the topic (never published: lost); %s",
		topic, crashPipelineGroup, beyond, before, len(want), lags)
}
