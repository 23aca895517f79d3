package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestCrashDedupAcrossRestart: with deduplication on, an event_id is
// in a stream's log at most once across a SIGKILL and a restart of the
// embedded node (SQLite, in-process bus, stream logs under --data).
//
// Events are posted without pause while the node is killed, so the bus's
// committed offsets (written every 100 ms) lag what was appended; after
// the restart the bus delivers that part again, and the harness posts
// every event_id it sent once more (a device retrying). Each event_id
// must then be in the deduplicating websocket stream's log exactly once,
// and in the deduplicating webhook stream's delivery log under exactly
// one delivery (webhook-id). All events come from one vehicle, so they
// share a bus partition and are handled in order: once a last, new
// event is in the logs, everything before it was handled.
func TestCrashDedupAcrossRestart(t *testing.T) {
	skipUnderRace(t)
	t.Parallel() // mostly waits on its child server
	b := make([]byte, 4)
	rand.Read(b)
	run := hex.EncodeToString(b)
	dir := t.TempDir()
	bin := crashBuild(t, dir)
	storeArgs := []string{"--data", filepath.Join(dir, "data")}
	key := crashKey(t, bin, storeArgs)
	addr := crashFreeAddr(t)
	base := "http://" + addr
	child := &crashChild{t: t, bin: bin, args: append([]string{"serve", "--addr", addr, "--allow-private-webhooks", "--shutdown-grace", "1s", "--solver-work-rate", fixedSolverRate}, storeArgs...),
		logPath: filepath.Join(dir, "server.log")}
	t.Cleanup(child.kill)
	rc := newCrashReceiver(t)
	child.start()
	child.waitReady(base, crashReadyWithin)
	api := newCrashAPI(base, key)
	t.Cleanup(api.tr.CloseIdleConnections)

	var s struct {
		StreamID string `json:"stream_id"`
	}
	api.must(t, 201, "POST", "/api/v1/streaming/events/start", map[string]any{
		"stream_config":    map[string]any{"delivery_method": "websocket"},
		"processing_rules": map[string]any{"deduplication": true}}, &s)
	wsStream := s.StreamID
	api.must(t, 201, "POST", "/api/v1/streaming/events/start", map[string]any{
		"stream_config": map[string]any{"delivery_method": "webhook"}, "webhook_url": rc.srv.URL + "/dedup",
		"processing_rules": map[string]any{"deduplication": true}}, &s)
	hookStream := s.StreamID

	vehicle := "dd-" + run + "-v1"
	event := func(id string) map[string]any {
		return map[string]any{"event_id": id, "event_type": "dedup_probe", "category": "operational_events",
			"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "severity": "low", "source": map[string]any{"vehicle_id": vehicle}}
	}
	// post answers the status, or an error when the request got none
	// (the node died under it).
	post := func(ctx context.Context, ids []string) (int, string, error) {
		evs := make([]map[string]any, len(ids))
		for i, id := range ids {
			evs[i] = event(id)
		}
		status, body, err := api.call(ctx, "POST", "/v1/events", map[string]any{"events": evs})
		return status, fmt.Sprintf("%.300s", body), err
	}

	// Post batches of 10 until the node dies; kill it once 100 acknowledged
	// events are in the log, a little later.
	var mu sync.Mutex
	var sent, acked []string
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		for n := 0; ctx.Err() == nil; {
			ids := make([]string, 10)
			for i := range ids {
				n++
				ids[i] = fmt.Sprintf("dd-%s-e%d", run, n)
			}
			mu.Lock()
			sent = append(sent, ids...)
			mu.Unlock()
			status, body, err := post(ctx, ids)
			switch {
			case err != nil:
				return // the node died under the request
			case status == 202:
				mu.Lock()
				acked = append(acked, ids...)
				mu.Unlock()
			case status != 503: // 503: the bus refused them
				t.Errorf("POST /v1/events: %d %s", status, body)
				return
			}
		}
	})
	var first map[string]int
	crashPoll(time.Now().Add(crashVerifyWithin), 20*time.Millisecond, func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(acked) < 100 {
			return false
		}
		first = map[string]int{}
		for _, id := range acked[:100] {
			first[id] = 1
		}
		return true
	})
	if first == nil {
		cancel()
		wg.Wait()
		t.Fatalf("fewer than 100 events acknowledged in %v\n%s", crashVerifyWithin, child.tail(40))
	}
	if r := crashReadLog(base, key, wsStream, first, 0, time.Now().Add(crashVerifyWithin), func(m crashMsg) string { return m.EventID }); len(r.found) < len(first) {
		cancel()
		wg.Wait()
		t.Fatalf("the first 100 acknowledged events did not reach the stream's log: %d found; errors %v\n%s", len(r.found), r.errs, child.tail(40))
	}
	crashPause(30 * time.Millisecond) // events keep coming: some appended, not committed
	child.kill()
	cancel()
	wg.Wait()
	api.tr.CloseIdleConnections()
	mu.Lock()
	all, nAcked := slices.Clone(sent), len(acked)
	mu.Unlock()

	child.start()
	child.waitReady(base, crashReadyWithin)
	// Every event_id again, as a device retrying, then a new one.
	for ids := all; len(ids) > 0; ids = ids[min(len(ids), 50):] {
		if status, body, err := post(context.Background(), ids[:min(len(ids), 50)]); err != nil || status != 202 {
			t.Fatalf("posting the events again: %d %s %v", status, body, err)
		}
	}
	last := fmt.Sprintf("dd-%s-last", run)
	if status, body, err := post(context.Background(), []string{last}); err != nil || status != 202 {
		t.Fatalf("posting the last event: %d %s %v", status, body, err)
	}
	t.Logf("%d events sent before the SIGKILL (%d acknowledged), all sent again after the restart; %s", len(all), nAcked, warmLine(child.logPath))

	want := map[string]int{last: 1}
	for _, id := range all {
		want[id] = 1
	}
	logged := map[string]int{}
	r := crashReadLog(base, key, wsStream, want, 0, time.Now().Add(crashVerifyWithin), func(m crashMsg) string {
		logged[m.EventID]++
		return m.EventID
	})
	var missing, twice []string
	for id := range want {
		switch n := logged[id]; {
		case n == 0:
			missing = append(missing, id)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s ×%d", id, n))
		}
	}
	slices.Sort(missing)
	slices.Sort(twice)
	if len(missing) > 0 {
		t.Errorf("websocket stream %s: %d of %d events missing from the log, e.g. %v (errors %v)", wsStream, len(missing), len(want), missing[:min(5, len(missing))], r.errs)
	}
	if len(twice) > 0 {
		t.Errorf("websocket stream %s: %d of %d event_ids are in the log more than once, e.g. %v", wsStream, len(twice), len(want), twice[:min(5, len(twice))])
	}

	// The webhook stream: the pipeline hands each entry to the delivery
	// queue before it goes on, so once the last event's delivery is
	// listed, every earlier one is.
	h := &crashHarness{api: api, webhookStream: hookStream}
	var ds map[string]crashDelivery
	var listErr error
	listed := crashPoll(time.Now().Add(crashVerifyWithin), 100*time.Millisecond, func() bool {
		ds, listErr = h.deliveries("")
		for _, d := range ds {
			if d.event == last {
				return true
			}
		}
		return false
	})
	if !listed {
		t.Fatalf("webhook stream %s: the last event's delivery was not listed (listing error %v)\n%s", hookStream, listErr, child.tail(40))
	}
	byEvent := map[string][]string{}
	for _, d := range ds {
		byEvent[d.event] = append(byEvent[d.event], d.id)
	}
	missing, twice = missing[:0], twice[:0]
	for id := range want {
		switch n := len(byEvent[id]); {
		case n == 0:
			missing = append(missing, id)
		case n > 1:
			twice = append(twice, fmt.Sprintf("%s under %v", id, byEvent[id]))
		}
	}
	slices.Sort(missing)
	slices.Sort(twice)
	if len(missing) > 0 {
		t.Errorf("webhook stream %s: %d of %d events have no delivery, e.g. %v", hookStream, len(missing), len(want), missing[:min(5, len(missing))])
	}
	if len(twice) > 0 {
		t.Errorf("webhook stream %s: %d of %d events are queued under more than one webhook-id, e.g. %v", hookStream, len(twice), len(want), twice[:min(5, len(twice))])
	}
	// What reached the receiver so far: never one event under two
	// webhook-ids.
	_, byID, _, conflicts := rc.snapshot()
	ids := map[string]map[string]bool{}
	for wid, evs := range byID {
		for _, e := range evs {
			if ids[e] == nil {
				ids[e] = map[string]bool{}
			}
			ids[e][wid] = true
		}
	}
	var split []string
	for e, wids := range ids {
		if len(wids) > 1 {
			split = append(split, fmt.Sprintf("%s under %d", e, len(wids)))
		}
	}
	slices.Sort(split)
	if len(split) > 0 {
		t.Errorf("the receiver got %d events under more than one webhook-id, e.g. %v", len(split), split[:min(5, len(split))])
	}
	if len(conflicts) > 0 {
		t.Errorf("webhook-ids with different content: %v", conflicts)
	}
	if t.Failed() {
		t.Log(child.tail(40))
	}
}

// warmLine is the server's log line about warming the dedup window at
// its last start.
func warmLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	line := "the server logged no warming of the dedup window"
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.Contains(sc.Text(), "dedup window warmed") {
			line = "server: " + sc.Text()
		}
	}
	return line
}
