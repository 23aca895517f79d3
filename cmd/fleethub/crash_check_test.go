package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// snapshot copies the ledgers.
func (h *crashHarness) snapshot() (tel, evs map[string]int, pts map[string]map[int64]int, unexpected []string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	tel, evs, pts = make(map[string]int, len(h.telemetry)), make(map[string]int, len(h.events)), map[string]map[int64]int{}
	for k, v := range h.telemetry {
		tel[k] = v
	}
	for k, v := range h.events {
		evs[k] = v
	}
	for trip, p := range h.points {
		cp := make(map[int64]int, len(p))
		for k, v := range p {
			cp[k] = v
		}
		pts[trip] = cp
	}
	unexpected, h.unexpected = h.unexpected, nil
	return tel, evs, pts, unexpected
}

// verify runs every check after a restart; false when something
// acknowledged was lost (each check reports what).
func (h *crashHarness) verify(cycle int) bool {
	deadline := time.Now().Add(crashVerifyWithin)
	tel, evs, pts, unexpected := h.snapshot()
	for _, u := range unexpected {
		h.t.Errorf("unexpected answer to an ingest request: %s", u)
	}
	telemetryID := func(m crashMsg) string {
		if m.VehicleID == "" {
			return ""
		}
		return m.VehicleID + "#" + strconv.FormatInt(m.Sequence, 10)
	}
	eventID := func(m crashMsg) string { return m.EventID }
	ok := len(unexpected) == 0
	ok = h.checkLog(cycle, "telemetry", "telemetry messages", h.telemetryStream, tel, deadline, telemetryID) && ok
	ok = h.checkLog(cycle, "events", "events", h.eventsStream, evs, deadline, eventID) && ok
	ok = h.checkLog(cycle, "events", "events (stream with deduplication on)", h.dedupStream, evs, deadline, eventID) && ok
	ok = h.checkWebhook(cycle, evs, deadline) && ok
	ok = h.checkTrips(cycle, pts, deadline) && ok
	return ok
}

func crashCheckDeadline(shared time.Time) time.Time {
	if least := time.Now().Add(crashCheckGrace); least.After(shared) {
		return least
	}
	return shared
}

// crashDescribe says how many of the wanted ids are missing from where,
// when they were acknowledged, and gives a few examples.
func crashDescribe(what, where string, missing []string, want map[string]int, cycle int) string {
	slices.SortFunc(missing, func(a, b string) int {
		if want[a] != want[b] {
			return want[b] - want[a]
		}
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	latest := 0
	for _, k := range missing {
		if want[k] == cycle {
			latest++
		}
	}
	var ex []string
	for _, k := range missing[:min(len(missing), 5)] {
		ex = append(ex, fmt.Sprintf("%s (cycle %d)", k, want[k]))
	}
	return fmt.Sprintf("%d of %d acknowledged %s are missing from %s: %d acknowledged in cycle %d, just before this crash, %d in earlier cycles (found after an earlier restart); e.g. %s",
		len(missing), len(want), what, where, latest, cycle, len(missing)-latest, strings.Join(ex, ", "))
}

// lastOffset is the newest offset of a stream's log, from its status.
func (h *crashHarness) lastOffset(kind, stream string) string {
	status, body, err := h.api.call(context.Background(), "GET", "/api/v1/streaming/"+kind+"/status/"+stream, nil)
	if err != nil || status != 200 {
		return fmt.Sprintf("status unavailable (%d %v)", status, err)
	}
	var st struct {
		Lag struct {
			LastOffset int64 `json:"last_offset"`
		} `json:"lag"`
	}
	json.Unmarshal(body, &st)
	return fmt.Sprintf("its status reports last_offset %d", st.Lag.LastOffset)
}

// checkLog reads a stream's whole log and checks that every acknowledged
// message is in it and that offsets continued across the restart.
func (h *crashHarness) checkLog(cycle int, kind, what, stream string, want map[string]int, deadline time.Time, id func(crashMsg) string) bool {
	before := h.maxOffset[stream]
	r := crashReadLog(h.base, h.key, stream, want, before, crashCheckDeadline(deadline), id)
	h.maxOffset[stream] = max(before, r.last)
	var missing []string
	for k := range want {
		if _, ok := r.found[k]; !ok {
			missing = append(missing, k)
		}
	}
	summary := func() string {
		s := fmt.Sprintf("read %d messages at offsets %d..%d over the websocket (subscribed at %d", r.messages, r.first, r.last, r.subscribedAt)
		if r.expiredFrom > 0 {
			s += fmt.Sprintf(", offsets_expired: first_available %d", r.expiredFrom)
		}
		s += fmt.Sprintf("), %d repeated; %s", r.duplicates, h.lastOffset(kind, stream))
		if len(r.errs) > 0 {
			s += fmt.Sprintf("; %d errors, first %q", len(r.errs), r.errs[0])
		}
		return s
	}
	ok := true
	if len(missing) > 0 {
		ok = false
		h.t.Errorf("cycle %d: %s stream %s, %v after the restart: %s. The log: %s.%s", cycle, kind, stream,
			time.Since(h.restarted).Round(time.Second), crashDescribe(what, "the stream's log", missing, want, cycle), summary(), h.inKafka(kind, missing))
	}
	if r.last < before {
		ok = false
		h.t.Errorf("cycle %d: %s stream %s: offsets did not continue across the restart: the highest offset read now is %d, before the crash it was %d. The log: %s",
			cycle, kind, stream, r.last, before, summary())
	}
	if stream == h.dedupStream && r.duplicates > 0 {
		// the embedded window is rebuilt from the stream logs at start;
		// the Redis log keeps the event ids it took
		ok = false
		h.t.Errorf("cycle %d: the deduplicating stream %s holds %d events twice after the restart. The log: %s", cycle, stream, r.duplicates, summary())
	}
	if len(r.gaps) > 0 {
		ok = false
		h.t.Errorf("cycle %d: %s stream %s: %d gaps in the offsets, e.g. %s", cycle, kind, stream, len(r.gaps), strings.Join(r.gaps[:min(len(r.gaps), 5)], "; "))
	}
	return ok
}

// inKafka says, in the Kafka mode, where the missing messages of a kind
// are in the bus (see crashKafkaWhere); nothing in the embedded mode.
func (h *crashHarness) inKafka(kind string, missing []string) string {
	if h.mode.kafka == "" {
		return ""
	}
	topic, id := hub.TopicEvents, func(e *event.Envelope) string {
		if e.Event == nil {
			return ""
		}
		return e.Event.EventID
	}
	if kind == "telemetry" {
		topic, id = hub.TopicTelemetry, func(e *event.Envelope) string {
			if e.Telemetry == nil {
				return ""
			}
			return e.Telemetry.VehicleID + "#" + strconv.FormatInt(e.Telemetry.Sequence, 10)
		}
	}
	return " " + crashKafkaWhere(strings.Split(h.mode.kafka, ","), topic, missing, id)
}

// crashDelivery is one row of a webhook stream's delivery log.
type crashDelivery struct {
	id     string
	event  string
	offset int64
	status string
}

// deliveries lists the webhook stream's deliveries (of one status, or
// all), every page.
func (h *crashHarness) deliveries(status string) (map[string]crashDelivery, error) {
	out := map[string]crashDelivery{}
	cursor := ""
	for {
		q := "?limit=200"
		if status != "" {
			q += "&status=" + status
		}
		if cursor != "" {
			q += "&cursor=" + cursor
		}
		code, body, err := h.api.call(context.Background(), "GET", "/api/v1/streaming/events/deliveries/"+h.webhookStream+q, nil)
		if err != nil {
			return out, err
		}
		if code != 200 {
			return out, fmt.Errorf("deliveries: %d %.300s", code, body)
		}
		var page struct {
			Deliveries []struct {
				ID      string          `json:"id"`
				Offset  int64           `json:"offset"`
				Status  string          `json:"status"`
				Payload json.RawMessage `json:"payload"`
			} `json:"deliveries"`
			NextCursor *string `json:"next_cursor"`
		}
		if err := json.Unmarshal(body, &page); err != nil {
			return out, fmt.Errorf("deliveries: %w", err)
		}
		for _, d := range page.Deliveries {
			var p struct {
				Message crashMsg `json:"message"`
			}
			json.Unmarshal(d.Payload, &p)
			out[d.ID] = crashDelivery{id: d.ID, event: p.Message.EventID, offset: d.Offset, status: d.Status}
		}
		if page.NextCursor == nil || *page.NextCursor == "" || len(page.Deliveries) == 0 {
			return out, nil
		}
		cursor = *page.NextCursor
	}
}

// checkWebhook: every acknowledged event reached the receiver or is
// pending; deliveries keep their webhook-ids across the restart.
func (h *crashHarness) checkWebhook(cycle int, want map[string]int, deadline time.Time) bool {
	var missing []string
	var listErr error
	crashPoll(crashCheckDeadline(deadline), 100*time.Millisecond, func() bool {
		_, _, got, _ := h.rc.snapshot()
		missing = missing[:0]
		for e := range want {
			if _, ok := got[e]; !ok {
				missing = append(missing, e)
			}
		}
		if len(missing) == 0 {
			return true
		}
		waiting := map[string]bool{}
		for _, st := range []string{"pending", "failed"} {
			ds, err := h.deliveries(st)
			if err != nil {
				listErr = err
			}
			for _, d := range ds {
				waiting[d.event] = true
			}
		}
		missing = slices.DeleteFunc(missing, func(e string) bool { return waiting[e] })
		return len(missing) == 0
	})
	ok := true
	hits, byID, got, conflicts := h.rc.snapshot()
	all, err := h.deliveries("")
	if err != nil {
		h.t.Errorf("cycle %d: webhook stream %s: listing the delivery log: %v", cycle, h.webhookStream, err)
		return false
	}
	statuses := map[string]int{}
	for _, d := range all {
		statuses[d.status]++
	}
	if len(missing) > 0 {
		ok = false
		h.t.Errorf("cycle %d: webhook stream %s, %v after the restart: %s. The receiver got %d requests (%d events); the delivery log holds %d deliveries %v (listing error: %v)",
			cycle, h.webhookStream, time.Since(h.restarted).Round(time.Second),
			crashDescribe("events", "what the endpoint received and the pending deliveries", missing, want, cycle),
			hits, len(got), len(all), statuses, listErr)
		if h.mode.kafka != "" {
			h.t.Logf("cycle %d: webhook stream %s: %s", cycle, h.webhookStream, strings.TrimSpace(h.inKafka("events", missing)))
		}
	}
	var gone, changed, lost []string
	for id, evs := range byID {
		d, listed := all[id]
		switch {
		case !listed:
			gone = append(gone, fmt.Sprintf("%s (%v)", id, evs))
		case len(evs) == 1 && d.event != evs[0]:
			changed = append(changed, fmt.Sprintf("%s: received with %s, listed with %s", id, evs[0], d.event))
		}
	}
	for id, before := range h.listed {
		d, listed := all[id]
		switch {
		case !listed:
			gone = append(gone, fmt.Sprintf("%s (%s at offset %d, listed before the crash)", id, before.event, before.offset))
		case d.event != before.event || d.offset != before.offset:
			changed = append(changed, fmt.Sprintf("%s: %s at offset %d before the crash, %s at offset %d now", id, before.event, before.offset, d.event, d.offset))
		}
	}
	for _, d := range all {
		if _, ours := want[d.event]; ours && (d.status == "dead_lettered" || d.status == "disabled") {
			lost = append(lost, fmt.Sprintf("%s (%s): %s", d.id, d.event, d.status))
		}
	}
	byOffset := map[int64]map[string]string{}
	for _, d := range all {
		if byOffset[d.offset] == nil {
			byOffset[d.offset] = map[string]string{}
		}
		byOffset[d.offset][d.event] = d.id
	}
	var reused []string
	for off, evs := range byOffset {
		if len(evs) > 1 {
			reused = append(reused, fmt.Sprintf("offset %d: %v", off, evs))
		}
	}
	slices.Sort(gone)
	slices.Sort(changed)
	slices.Sort(lost)
	slices.Sort(reused)
	for _, p := range []struct {
		list []string
		what string
	}{
		{gone, "deliveries received by the endpoint or listed before the crash are no longer in the delivery log (their webhook-id was not kept)"},
		{changed, "webhook-ids now name other content"},
		{conflicts, "webhook-ids reached the endpoint with different content"},
		{lost, "deliveries of acknowledged events were dead-lettered or disabled though the endpoint answers 200"},
		{reused, "offsets name deliveries of different events (offsets restarted)"},
	} {
		if len(p.list) > 0 {
			ok = false
			h.t.Errorf("cycle %d: webhook stream %s: %d %s, e.g. %s", cycle, h.webhookStream, len(p.list), p.what, strings.Join(p.list[:min(len(p.list), 5)], "; "))
		}
	}
	h.listed = all
	return ok
}

// checkTrips: every acknowledged point is in its trip's route.
func (h *crashHarness) checkTrips(cycle int, pts map[string]map[int64]int, deadline time.Time) bool {
	ok := true
	for _, tr := range h.trips {
		want := pts[tr.id]
		if len(want) == 0 {
			continue
		}
		var missing []string
		var total int
		var note string
		crashPoll(crashCheckDeadline(deadline), 100*time.Millisecond, func() bool {
			missing, total, note = missing[:0], 0, ""
			status, body, err := h.api.call(context.Background(), "GET",
				"/v1/trips/"+tr.id+"/route?include_waypoints=false&simplify_geometry=false&geometry_precision=7", nil)
			have := map[int64]bool{}
			switch {
			case err != nil:
				note = err.Error()
			case status != 200:
				note = fmt.Sprintf("route: %d %.200s", status, body)
			default:
				var rt struct {
					RouteGeometry struct {
						Coordinates [][]float64 `json:"coordinates"`
						TotalPoints int         `json:"total_points"`
					} `json:"route_geometry"`
				}
				if err := json.Unmarshal(body, &rt); err != nil {
					note = err.Error()
				}
				total = rt.RouteGeometry.TotalPoints
				for _, c := range rt.RouteGeometry.Coordinates {
					if len(c) >= 2 {
						have[int64(math.Round((c[1]-40)/crashPointLat))] = true
					}
				}
			}
			for k := range want {
				if !have[k] {
					missing = append(missing, strconv.FormatInt(k, 10))
				}
			}
			return len(missing) == 0 && total >= len(want)
		})
		byKey := make(map[string]int, len(want))
		for k, c := range want {
			byKey[strconv.FormatInt(k, 10)] = c
		}
		if len(missing) > 0 {
			ok = false
			h.t.Errorf("cycle %d: trip %s: %s (by point index); the route counts %d stored points %s",
				cycle, tr.id, crashDescribe("location points", "the trip's route", missing, byKey, cycle), total, note)
		} else if total < len(want) {
			ok = false
			h.t.Errorf("cycle %d: trip %s: the route counts %d stored points, %d were acknowledged", cycle, tr.id, total, len(want))
		}
	}
	return ok
}

// crashPoll calls f until it returns true or the deadline passes, at
// least once; it tells whether f succeeded.
func crashPoll(deadline time.Time, every time.Duration, f func() bool) bool {
	for {
		if f() {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		crashPause(min(every, time.Until(deadline)))
	}
}
