package main

// The crash variant of the model test: the server (built once, run as a
// child process on the embedded defaults) is SIGKILLed between requests,
// 20 times, and restarted on the same data. The streams are read at the
// end by websocket replay from offset 0, and the webhook receiver records
// everything across the restarts. The only difference from the model
// allowed is the documented re-delivery (docs/streaming.md, Guarantees,
// "Across what failures"): a stream without deduplication may receive an
// event again (under a new offset), and a webhook delivery may come again
// under its webhook-id. Nothing acknowledged may be missing, a
// deduplicating stream never gets an id twice, offsets stay 1..n without
// gaps, content and tenants stay right, and a stream without ordering
// keeps each bus key's first deliveries in publication order. Ordering
// streams' release order and late flags are not compared: after a restart
// each source's sequence starts again at the first number seen, replays
// included, so they depend on what the killed process had committed.
//
//	FLEETHUB_MODEL_SEED=s            replays the run's random choices
//	FLEETHUB_MODEL_CRASH_CYCLES=n    kills (default 20)
//	FLEETHUB_MODEL_CRASH_NOKILL=1    the same run without the kills (to tell a
//	                                 crash's effect from the workload's)
//	FLEETHUB_MODEL_CRASH_WITHIN=d    how long the websocket streams' last messages may
//	                                 take after the last restart (15s)

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// genModelCrashWorkload is one phase per cycle, each the events of a generated
// workload (ids prefixed by the cycle) on the tenants and streams of the
// seed's own, plus copies of earlier cycles' events (which straddle a
// kill), and after which request of each phase the server is killed.
func genModelCrashWorkload(seed uint64, cycles int) (*mWorkload, []int) {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	base := genModelWorkload(seed)
	w := &mWorkload{Seed: seed, Tenants: base.Tenants, Streams: base.Streams}
	// both kinds of stream the guarantee distinguishes, on every event
	w.Streams = append(w.Streams, mStream{Tenant: 0, Dedup: true, Order: true}, mStream{Tenant: 0, Webhook: true},
		mStream{Tenant: len(w.Tenants) - 1, Dedup: true, Webhook: true, Batch: true})
	// and per tenant an unfiltered websocket stream: once it has every
	// event, the pipeline handled them all
	for t := range w.Tenants {
		w.Streams = append(w.Streams, mStream{Tenant: t})
	}
	nt := len(w.Tenants)
	var kills []int
	flat := 0
	for c := range cycles {
		g := genModelWorkload(seed + uint64(c) + 1)
		var phase []mRequest
		for _, ph := range g.Phases {
			for _, r := range ph {
				for i := range r.Events { // unique within the tenant it maps to
					r.Events[i].ID = fmt.Sprintf("c%d-t%d-%s", c, r.Tenant, r.Events[i].ID)
				}
				r.Tenant %= nt
				phase = append(phase, r)
			}
		}
		for range rng.IntN(3) {
			if c == 0 {
				break
			}
			from := w.Phases[rng.IntN(c)]
			src := from[rng.IntN(len(from))]
			e := src.Events[rng.IntN(len(src.Events))]
			for i, r := range phase {
				if r.Tenant == src.Tenant {
					phase[i].Events = slices.Insert(r.Events, rng.IntN(len(r.Events)+1), e)
					break
				}
			}
		}
		w.Phases = append(w.Phases, phase)
		kills = append(kills, flat+rng.IntN(len(phase)))
		flat += len(phase)
	}
	return w, kills
}

func TestModelCrash(t *testing.T) {
	skipUnderRace(t) // its server is a child built without the detector
	t.Parallel()     // mostly waits on its child server: beside the crash tests
	seed := uint64(time.Now().UnixNano())
	if v := modelEnvInt(t, "FLEETHUB_MODEL_SEED", -1); v >= 0 {
		seed = uint64(v)
	}
	cycles := modelEnvInt(t, "FLEETHUB_MODEL_CRASH_CYCLES", 20)
	const orderWait = 500 * time.Millisecond
	w, kills := genModelCrashWorkload(seed, cycles)
	t.Logf("seed %d (FLEETHUB_MODEL_SEED=%d replays it): %d tenants, %d streams, %d requests, %d events, %d kills",
		seed, seed, len(w.Tenants), len(w.Streams), w.requests(), w.events(), len(kills))

	dir := t.TempDir()
	bin := crashBuild(t, dir)
	storeArgs := []string{"--data", filepath.Join(dir, "data")}
	within := 15 * time.Second
	if v := os.Getenv("FLEETHUB_MODEL_CRASH_WITHIN"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			t.Fatalf("FLEETHUB_MODEL_CRASH_WITHIN=%q: %v", v, err)
		}
		within = d
	}
	cl := newModelCluster(t, "crash", orderWait, within)
	r := cl.newRun(w, w.Streams)
	r.crash = true
	for _, tn := range w.Tenants {
		org := fmt.Sprintf("model-%s-%s", cl.run, tn.Org)
		r.orgs, r.keys = append(r.orgs, org), append(r.keys, crashKeyFor(t, bin, storeArgs, org, tn.Env))
	}
	addr := crashFreeAddr(t)
	args := append([]string{"serve", "--addr", addr, "--allow-private-webhooks", "--shutdown-grace", "1s", "--solver-work-rate", fixedSolverRate, "--order-wait", orderWait.String()}, storeArgs...)
	base := "http://" + addr
	child := &crashChild{t: t, bin: bin, args: args, logPath: filepath.Join(dir, "server.log")}
	t.Cleanup(child.kill)
	child.start()
	child.waitReady(base, crashReadyWithin)
	cl.nodes = []*node{{t: t, url: base}}
	ctx := context.Background()
	if err := r.startStreams(ctx, 1); err != nil {
		t.Fatal(err)
	}
	defer r.close()

	// send, killing after the chosen requests
	rng := rand.New(rand.NewPCG(seed, 0xdead))
	noKill := os.Getenv("FLEETHUB_MODEL_CRASH_NOKILL") != ""
	began := time.Now()
	k := 0
	for p, ph := range w.Phases {
		for _, req := range ph {
			if err := cl.send(ctx, 0, r.keys[req.Tenant], req, cl.ts); err != nil {
				t.Fatalf("phase %d: %v\n%s", p, err, child.tail(40))
			}
			if slices.Contains(kills, k) && !noKill {
				// now, or once the pipeline may have handled some of it,
				// or once reorder buffers may have released (a random
				// point of the fault schedule, not a wait for anything)
				crashPause([]time.Duration{0, time.Duration(rng.IntN(50)) * time.Millisecond, orderWait + time.Duration(rng.IntN(200))*time.Millisecond}[rng.IntN(3)])
				child.kill()
				child.start()
				child.waitReady(base, crashReadyWithin)
			}
			k++
		}
	}
	sending := time.Since(began)

	// read every websocket stream from offset 0; wait for the model's
	// messages, then the quiet period
	var readers sync.WaitGroup
	rctx, cancel := context.WithCancel(ctx)
	for i, s := range w.Streams {
		if !s.Webhook {
			readers.Add(1)
			go func() {
				defer readers.Done()
				r.read(rctx, i, 0)
			}()
		}
	}
	// wait for the websocket streams' messages (event-driven), then the
	// quiet period, in which webhook deliveries not held by a lease
	// arrive too; then what is still pending in the delivery logs, then
	// what was received (in that order: a delivery is pending until the
	// receiver answered)
	exp := modelExpect(w, w.Streams)
	wsExp := make([][]mDelivery, len(exp))
	for i, s := range w.Streams {
		if !s.Webhook {
			wsExp[i] = exp[i]
		}
	}
	deadline := time.NewTimer(cl.within)
	timedOut := ""
	for timedOut == "" {
		ok, why := r.arrived(wsExp, len(w.Phases)-1)
		if ok {
			break
		}
		select {
		case <-r.notify:
		case <-deadline.C:
			timedOut = why
		}
	}
	deadline.Stop()
	crashPause(2 * orderWait) // the documented quiet period
	pendings := make([][]mGot, len(w.Streams))
	pending := 0
	for i, s := range w.Streams {
		if s.Webhook {
			ps, err := r.pendingDeliveries(ctx, i)
			if err != nil {
				t.Fatalf("deliveries of stream %d: %v", i, err)
			}
			pendings[i], pending = ps, pending+len(ps)
		}
	}
	got, problems := r.snapshot()
	r.close()
	cancel()
	readers.Wait()
	hookAgain := 0 // webhook messages received more than once
	for i := range got {
		seen := map[int64]bool{}
		for _, g := range got[i] {
			if w.Streams[i].Webhook && seen[g.Offset] {
				hookAgain++
			}
			seen[g.Offset] = true
		}
		got[i] = append(got[i], pendings[i]...)
	}
	cmp, holes := compareModelCrash(w, w.Streams, exp, got)
	issues := append(problems, cmp...)
	for _, h := range holes {
		t.Log(h)
	}
	redelivered := 0
	for i, ds := range exp {
		want, have := map[string]int{}, map[string]int{}
		for _, d := range ds {
			want[d.ID]++
		}
		uniq := map[int64]bool{}
		for _, g := range got[i] {
			if !uniq[g.Offset] {
				uniq[g.Offset] = true
				have[g.ID]++
			}
		}
		for id, n := range have {
			if n > want[id] && want[id] > 0 {
				redelivered += n - want[id]
			}
		}
	}
	t.Logf("%d kills, sending and restarts took %v; %d messages expected; %d re-deliveries (allowed, in streams without deduplication), %d webhook deliveries again under their webhook-id, %d webhook messages still pending in the delivery log at the end (counted as not lost)",
		len(kills), sending.Round(time.Millisecond), func() int {
			n := 0
			for _, ds := range exp {
				n += len(ds)
			}
			return n
		}(), redelivered, hookAgain, pending)
	if timedOut != "" || len(issues) > 0 {
		o := &mOutcome{issues: issues, streams: w.Streams}
		if timedOut != "" {
			o.notes = append(o.notes, fmt.Sprintf("the model's messages did not all arrive within %v after the last restart: %s", cl.within, timedOut))
		}
		asked := map[int]bool{}
		for _, is := range issues {
			if (is.Class == "missing" || is.Class == "offsets") && is.Stream >= 0 && !asked[is.Stream] {
				asked[is.Stream] = true
				o.notes = append(o.notes, r.serverView(ctx, is.Stream))
				if w.Streams[is.Stream].Webhook {
					have := map[int64]bool{}
					top := int64(0)
					for _, g := range got[is.Stream] {
						have[g.Offset] = true
						top = max(top, g.Offset)
					}
					var st struct {
						Lag struct {
							LastOffset int64 `json:"last_offset"`
						} `json:"lag"`
					}
					if status, _, err := cl.call(ctx, 0, "GET", "/api/v1/streaming/events/status/"+r.ids[is.Stream], r.keys[w.Streams[is.Stream].Tenant], nil, &st); err == nil && status == 200 {
						top = max(top, st.Lag.LastOffset)
					}
					var gaps []int64
					for o := int64(1); o <= top && len(gaps) < 30; o++ {
						if !have[o] {
							gaps = append(gaps, o)
						}
					}
					o.notes = append(o.notes, r.deliveriesAt(ctx, is.Stream, gaps))
				}
			}
		}
		t.Log(child.tail(40))
		t.Fatalf("crash run (seed %d, FLEETHUB_MODEL_SEED=%d go test -race -run '^TestModelCrash$' ./cmd/fleethub/) differs from the model beyond re-delivery:\n%s",
			seed, seed, o.describe(w))
	}
}

// pendingDeliveries lists the messages of a webhook stream's deliveries
// not delivered yet (pending or failed): deliveries a killed process had
// leased wait for the lease to lapse (a minute) before they are sent
// again, so at the end of a run they may still be there, not lost.
func (r *mRun) pendingDeliveries(ctx context.Context, i int) ([]mGot, error) {
	var out []mGot
	for _, state := range []string{"pending", "failed"} {
		cursor := ""
		for {
			var l struct {
				Deliveries []struct {
					ID      string          `json:"id"`
					Payload json.RawMessage `json:"payload"`
				} `json:"deliveries"`
				NextCursor *string `json:"next_cursor"`
			}
			path := "/api/v1/streaming/events/deliveries/" + r.ids[i] + "?limit=200&status=" + state
			if cursor != "" {
				path += "&cursor=" + url.QueryEscape(cursor)
			}
			status, b, err := r.cl.call(ctx, 0, "GET", path, r.keys[r.streams[i].Tenant], nil, &l)
			if err != nil || status != 200 {
				return nil, fmt.Errorf("%s: %d %.200s %v", path, status, b, err)
			}
			for _, d := range l.Deliveries {
				frames, err := mParseFrames(d.Payload)
				if err != nil {
					return nil, fmt.Errorf("delivery %s payload %.200s: %v", d.ID, d.Payload, err)
				}
				for _, f := range frames {
					if f.Message != nil {
						g := f.got()
						g.Hook = d.ID + " (" + state + ")"
						out = append(out, g)
					}
				}
			}
			if l.NextCursor == nil || *l.NextCursor == "" {
				break
			}
			cursor = *l.NextCursor
		}
	}
	return out, nil
}

// deliveriesAt describes the delivery log's entries of stream i at the
// given offsets (every status), for a failure message.
func (r *mRun) deliveriesAt(ctx context.Context, i int, offsets []int64) string {
	want := map[int64]bool{}
	for _, o := range offsets {
		want[o] = true
	}
	var out []string
	cursor := ""
	for len(want) > 0 {
		var l struct {
			Deliveries []struct {
				ID          string          `json:"id"`
				Offset      int64           `json:"offset"`
				Status      string          `json:"status"`
				Attempts    int             `json:"attempts"`
				LastError   string          `json:"last_error"`
				NextAttempt any             `json:"next_attempt_at"`
				CreatedAt   string          `json:"created_at"`
				DeliveredAt any             `json:"delivered_at"`
				Payload     json.RawMessage `json:"payload"`
			} `json:"deliveries"`
			NextCursor *string `json:"next_cursor"`
		}
		path := "/api/v1/streaming/events/deliveries/" + r.ids[i] + "?limit=200"
		if cursor != "" {
			path += "&cursor=" + url.QueryEscape(cursor)
		}
		status, b, err := r.cl.call(ctx, 0, "GET", path, r.keys[r.streams[i].Tenant], nil, &l)
		if err != nil || status != 200 {
			return fmt.Sprintf("%s: %d %.200s %v", path, status, b, err)
		}
		for _, d := range l.Deliveries {
			frames, _ := mParseFrames(d.Payload)
			for _, f := range frames {
				if want[f.Offset] {
					delete(want, f.Offset)
					ev := ""
					if f.Message != nil {
						ev = f.Message.EventID
					}
					out = append(out, fmt.Sprintf("offset %d (%s) in delivery %s: %s, %d attempts, created %s, delivered %v, next %v, error %q",
						f.Offset, ev, d.ID, d.Status, d.Attempts, d.CreatedAt, d.DeliveredAt, d.NextAttempt, d.LastError))
				}
			}
		}
		if l.NextCursor == nil || *l.NextCursor == "" {
			break
		}
		cursor = *l.NextCursor
	}
	for o := range want {
		out = append(out, fmt.Sprintf("offset %d: in no delivery of the log", o))
	}
	slices.Sort(out)
	return fmt.Sprintf("stream %d's delivery log at the offsets not received: %s", i, strings.Join(out, "; "))
}

// compareModelCrash compares what each stream got with the model, allowing
// re-deliveries in streams without deduplication.
// Holes in a webhook stream without deduplication (log entries that never
// became deliveries: appended just before a kill, not yet handed to the
// delivery queue; their events come again at later offsets) are returned
// as notes: a deduplicating stream's would be losses (its redelivery is
// suppressed), and are issues.
func compareModelCrash(w *mWorkload, streams []mStream, exp [][]mDelivery, got [][]mGot) ([]mIssue, []string) {
	var out []mIssue
	var notes []string
	add := func(class string, i int, format string, args ...any) {
		out = append(out, mIssue{class, i, fmt.Sprintf(format, args...)})
	}
	byID := make([]map[string]mEvent, len(w.Tenants))
	for t := range byID {
		byID[t] = map[string]mEvent{}
	}
	for _, ph := range w.Phases {
		for _, r := range ph {
			for _, e := range r.Events {
				byID[r.Tenant][e.ID] = e
			}
		}
	}
	delivered := make([]map[string]bool, len(streams)) // per stream: ids it got
	for i := range streams {
		delivered[i] = map[string]bool{}
		for _, g := range got[i] {
			delivered[i][g.ID] = true
		}
	}
	for i, s := range streams {
		// one message per offset, 1..n
		atOffset := map[int64]string{}
		var msgs []mGot
		for j, g := range got[i] {
			if prev, ok := atOffset[g.Offset]; ok {
				if prev != g.ID {
					add("offsets", i, "offset %d carried %s, then %s", g.Offset, prev, g.ID)
				}
				if !s.Webhook {
					add("offsets", i, "the replay from offset 0 gave offset %d twice", g.Offset)
				}
				continue
			}
			if !s.Webhook && g.Offset != int64(j+1) {
				add("offsets", i, "message %d of the replay has offset %d", j+1, g.Offset)
			}
			atOffset[g.Offset] = g.ID
			msgs = append(msgs, g)
		}
		slices.SortFunc(msgs, func(a, b mGot) int { return int(a.Offset - b.Offset) })
		holes := 0
		for j, g := range msgs {
			if g.Offset != int64(j+1+holes) {
				if !s.Webhook || s.Dedup {
					add("offsets", i, "offsets are not 1..%d: the %d-th lowest is %d", len(msgs), j+1, g.Offset)
					break
				}
				holes += int(g.Offset) - (j + 1 + holes)
			}
		}
		if holes > 0 {
			notes = append(notes, fmt.Sprintf("stream %d (%s): %d offsets of its log never came as webhook deliveries (their events came at later offsets)", i, s, holes))
		}
		var known []mGot
		for _, g := range msgs {
			e, ok := byID[s.Tenant][g.ID]
			switch {
			case !ok:
				add("extra", i, "offset %d: %s is no event of tenant %d", g.Offset, g.ID, s.Tenant)
				continue
			case e.print() != g.Print:
				add("content", i, "offset %d: %s reads %s, tenant %d sent %s", g.Offset, g.ID, g.Print, s.Tenant, e.print())
				continue
			}
			if s.Corr && e.Corr != "" && (!g.HasCorr || g.CorrID != e.Corr || g.Pos < 1 || g.Related != g.Pos-1) {
				add("correlation", i, "offset %d: %s has enrichment.correlation %v %q position %d related %d", g.Offset, g.ID, g.HasCorr, g.CorrID, g.Pos, g.Related)
			}
			if (!s.Corr || e.Corr == "") && g.HasCorr {
				add("correlation", i, "offset %d: %s has enrichment.correlation", g.Offset, g.ID)
			}
			if g.Late && !s.Order {
				add("late", i, "offset %d: %s marked late in a stream without ordering", g.Offset, g.ID)
			}
			known = append(known, g)
		}
		want, have := map[string]int{}, map[string]int{}
		for _, d := range exp[i] {
			want[d.ID]++
		}
		for _, g := range known {
			have[g.ID]++
		}
		var missing, extra, dup []string
		for id, n := range want {
			if have[id] < n {
				missing = append(missing, fmt.Sprintf("%s×%d", id, n-have[id]))
			}
		}
		for id, n := range have {
			switch {
			case want[id] == 0:
				extra = append(extra, id)
			case n > want[id] && s.Dedup:
				dup = append(dup, fmt.Sprintf("%s×%d", id, n-want[id]))
			}
		}
		missingWhat := "missing (acknowledged, never delivered)"
		if s.Dedup && len(missing) > 0 {
			// the dedup window is per tenant: say whether another
			// deduplicating stream of the tenant delivered them
			by := map[int]int{}
			for _, m := range missing {
				id, _, _ := strings.Cut(m, "×")
				for j, o := range streams {
					if j != i && o.Dedup && o.Tenant == s.Tenant && delivered[j][id] {
						by[j]++
					}
				}
			}
			for j, n := range by {
				missingWhat += fmt.Sprintf(" [%d of them delivered by stream %d, deduplicating too (%s)]", n, j, streams[j])
			}
		}
		for _, l := range []struct {
			class, what string
			ids         []string
		}{{"missing", missingWhat, missing}, {"extra", "not expected at all", extra},
			{"duplicate", "delivered again by a stream with deduplication", dup}} {
			if len(l.ids) > 0 {
				slices.Sort(l.ids)
				add(l.class, i, "%s: %s", l.what, strings.Join(l.ids, " "))
			}
		}
		if s.Order {
			continue
		}
		// first deliveries per bus key in publication order
		first := func(ids []string) []string {
			seen := map[string]bool{}
			var o []string
			for _, id := range ids {
				if !seen[id] {
					seen[id] = true
					o = append(o, id)
				}
			}
			return o
		}
		expBy, gotBy := map[string][]string{}, map[string][]string{}
		var keys []string
		for _, d := range exp[i] {
			if _, ok := expBy[d.Key]; !ok {
				keys = append(keys, d.Key)
			}
			expBy[d.Key] = append(expBy[d.Key], d.ID)
		}
		for _, g := range known {
			gotBy[g.Event.partitionKey()] = append(gotBy[g.Event.partitionKey()], g.ID)
		}
		for _, key := range keys {
			e, g := first(expBy[key]), first(gotBy[key])
			if len(e) == len(g) && !slices.Equal(e, g) {
				add("order", i, "key %s, first deliveries: want %v, got %v", key, e, g)
			}
		}
	}
	return out, notes
}
