package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// soakTraffic is the ledger of one kind of request (events, points,
// telemetry), per phase.
type soakTraffic struct {
	sent, acked, refused, failed []int64
	during, after                [][]time.Duration // answer times before and after the phase's fault ended
	lastBad                      []time.Time       // the last refused or unanswered request of the phase
}

func newTraffic(phases int) *soakTraffic {
	return &soakTraffic{sent: make([]int64, phases), acked: make([]int64, phases), refused: make([]int64, phases), failed: make([]int64, phases),
		during: make([][]time.Duration, phases), after: make([][]time.Duration, phases), lastBad: make([]time.Time, phases)}
}

// soakLedger records every ingest request of the generator.
type soakLedger struct {
	mu        sync.Mutex
	phase     int
	faultOver bool             // the current phase's fault has ended
	events    *soakTraffic     // counted in events
	points    *soakTraffic     // counted in points
	telemetry *soakTraffic     // counted in messages
	evAcked   map[int64]int    // event sequence → soakAckMark of when it was acknowledged
	telAcked  map[int64]int    // telemetry sequence → soakAckMark
	tripAcked map[string]int64 // trip id → points accepted in acknowledged batches
	// points acknowledged batches skipped, by reason
	pointsSkipped map[string]int64
}

func newLedger(phases int) *soakLedger {
	return &soakLedger{events: newTraffic(phases), points: newTraffic(phases), telemetry: newTraffic(phases),
		evAcked: map[int64]int{}, telAcked: map[int64]int{}, tripAcked: map[string]int64{}, pointsSkipped: map[string]int64{}}
}

// soakAckMark is the phase a message was acknowledged in, times two, plus
// one when it was acknowledged after the phase's fault ended.
func soakAckMark(phase int, faultOver bool) int {
	if faultOver {
		return 2*phase + 1
	}
	return 2 * phase
}

// now is the current phase and whether its fault is over.
func (l *soakLedger) now() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.phase, l.faultOver
}

// answer records one request of n units sent in phase ph: status 0 means
// no answer. It returns whether the request was acknowledged.
func (l *soakLedger) answer(t *soakTraffic, ph int, over bool, n int, status, want int, took time.Duration) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	t.sent[ph] += int64(n)
	// a refusal answered in a later phase belongs to that phase's fault,
	// not to this one's recovery
	bad := func() {
		if l.phase == ph {
			t.lastBad[ph] = time.Now()
		}
	}
	switch {
	case status == 0:
		t.failed[ph] += int64(n)
		bad()
		return false
	case status == want:
		t.acked[ph] += int64(n)
	default:
		t.refused[ph] += int64(n)
		bad()
	}
	if over {
		t.after[ph] = append(t.after[ph], took)
	} else {
		t.during[ph] = append(t.during[ph], took)
	}
	return status == want
}

// soakPost sends body and returns the status, 0 when no answer came, and
// the answer's body when out is not nil.
func soakPost(client *http.Client, url, key string, body []byte, out *[]byte) int {
	req, err := http.NewRequest("POST", url, bytes.NewReader(body))
	if err != nil {
		return 0
	}
	req.Header.Set("X-API-Key", key)
	req.Header.Set("Content-Type", "application/json")
	res, err := client.Do(req)
	if err != nil {
		return 0
	}
	defer res.Body.Close()
	if out != nil {
		b, err := io.ReadAll(res.Body)
		if err != nil {
			return 0
		}
		*out = b
		return res.StatusCode
	}
	_, _ = io.Copy(io.Discard, res.Body)
	return res.StatusCode
}

// soakTicker calls job every period from one of workers goroutines; a tick
// finding every worker busy is skipped (not sent), so a slow server lowers
// the rate instead of queueing without bound.
func soakTicker(ctx context.Context, period time.Duration, workers int, job func(tick int64)) {
	jobs := make(chan int64, workers)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for t := range jobs {
				job(t)
			}
		}()
	}
	tick := time.NewTicker(period)
	defer tick.Stop()
	var n int64
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			n++
			select {
			case jobs <- n:
			default:
			}
		}
	}
	close(jobs)
	wg.Wait()
}

// soakFleet is the simulated fleet: vehicles on trips reporting points,
// telemetry and safety events.
type soakFleet struct {
	cfg    SoakConfig
	bases  []string
	key    string
	trips  []string // trip ids; trip i reports to node i % nodes
	led    *soakLedger
	client *http.Client
	seq    atomic.Int64 // event and telemetry sequences, one counter
}

const (
	soakEventBatch     = 10
	soakTelemetryBatch = 50
	soakPointBatch     = 100
)

// forEachTrip calls fn for every trip index from workers goroutines and
// returns the first error; the other workers stop taking indexes then.
func (f *soakFleet) forEachTrip(ctx context.Context, workers int, fn func(i int) error) error {
	var wg sync.WaitGroup
	var first atomic.Value
	var next atomic.Int64
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(f.trips) || ctx.Err() != nil || first.Load() != nil {
					return
				}
				if err := fn(i); err != nil {
					first.CompareAndSwap(nil, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, ok := first.Load().(error); ok {
		return err
	}
	return ctx.Err()
}

// startTrips starts cfg.Trips trips, each on the node its points go to.
func (f *soakFleet) startTrips(ctx context.Context) error {
	f.trips = make([]string, f.cfg.Trips)
	return f.forEachTrip(ctx, 8, func(i int) error {
		var t struct {
			TripID string `json:"trip_id"`
		}
		err := apiCall(ctx, "POST", f.bases[i%len(f.bases)]+"/v1/trips", f.key,
			map[string]any{"vehicle_id": "soak-veh-" + strconv.Itoa(i), "start_time": time.Now().Add(-time.Minute).UTC().Format(time.RFC3339Nano)}, &t)
		if err == nil && t.TripID == "" {
			err = errors.New("no trip_id")
		}
		if err != nil {
			return fmt.Errorf("bench: soak: start trip %d: %w", i, err)
		}
		f.trips[i] = t.TripID
		return nil
	})
}

// run sends events, telemetry and points at their rates until ctx ends.
func (f *soakFleet) run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, g := range []struct {
		rate, batch, workers int
		job                  func(int64)
	}{
		{f.cfg.Rate, soakEventBatch, 16, f.sendEvents},
		{f.cfg.TelemetryRate, soakTelemetryBatch, 4, f.sendTelemetry},
		{f.cfg.PointsRate, soakPointBatch, 16, f.sendPoints},
	} {
		if g.rate <= 0 {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			soakTicker(ctx, time.Second*time.Duration(g.batch)/time.Duration(g.rate), g.workers, g.job)
		}()
	}
	wg.Wait()
}

func (f *soakFleet) sendEvents(tick int64) {
	f.sendSequenced(tick, soakEventBatch, "/v1/events", "events", f.led.events, f.led.evAcked, func(s int64, now, vehicle string) any {
		return map[string]any{"event_id": "soak-" + strconv.FormatInt(s, 10), "event_type": "harsh_braking", "category": "safety_events",
			"timestamp": now, "severity": "high", "source": map[string]any{"vehicle_id": vehicle}, "event_data": map[string]any{"soak_seq": s}}
	})
}

func (f *soakFleet) sendTelemetry(tick int64) {
	f.sendSequenced(tick, soakTelemetryBatch, "/v1/telemetry", "messages", f.led.telemetry, f.led.telAcked, func(s int64, now, vehicle string) any {
		return map[string]any{"timestamp": now, "vehicle_id": vehicle, "data_type": "engine_diagnostics", "sequence": s,
			"data": map[string]any{"engine": map[string]any{"rpm": 2000 + s%500, "load_percentage": 40, "coolant_temp": 90, "oil_pressure": 45}}}
	})
}

// sendSequenced sends n messages made by msg, each with the next sequence
// of the generator, as {field: [...]} to path on the next node in turn,
// and records each acknowledged sequence in acked.
func (f *soakFleet) sendSequenced(tick int64, n int, path, field string, t *soakTraffic, acked map[int64]int, msg func(seq int64, now, vehicle string) any) {
	seqs := make([]int64, n)
	msgs := make([]any, n)
	now := time.Now().UTC().Format(time.RFC3339Nano)
	for i := range seqs {
		s := f.seq.Add(1)
		seqs[i] = s
		msgs[i] = msg(s, now, "soak-veh-"+strconv.FormatInt(s%int64(max(f.cfg.Trips, 1)), 10))
	}
	body, err := json.Marshal(map[string]any{field: msgs})
	ph, over := f.led.now()
	if err != nil { // sent, never answered: counted as failed
		f.led.answer(t, ph, over, n, 0, 202, 0)
		return
	}
	start := time.Now()
	st := soakPost(f.client, f.bases[int(tick)%len(f.bases)]+path, f.key, body, nil)
	if f.led.answer(t, ph, over, n, st, 202, time.Since(start)) {
		f.led.mu.Lock()
		for _, s := range seqs {
			acked[s] = soakAckMark(ph, over)
		}
		f.led.mu.Unlock()
	}
}

// sendPoints sends the next trip in turn its last soakPointBatch points:
// every trip reports once per round, its points spread evenly over the
// round, so a vehicle moves at about 40 km/h along a meridian.
func (f *soakFleet) sendPoints(tick int64) {
	if len(f.trips) == 0 {
		return
	}
	i := int(tick-1) % len(f.trips)
	round := tick / int64(len(f.trips))
	every := time.Duration(len(f.trips)) * time.Second * soakPointBatch / time.Duration(f.cfg.PointsRate) / soakPointBatch
	end := time.Now()
	var b bytes.Buffer
	b.WriteString(`{"trip_id":"` + f.trips[i] + `","locations":[`)
	lat0 := 39.9 + float64(i%200)*0.001
	for j := range soakPointBatch {
		if j > 0 {
			b.WriteByte(',')
		}
		k := round*soakPointBatch + int64(j)
		ts := end.Add(-time.Duration(soakPointBatch-1-j) * every).UTC()
		fmt.Fprintf(&b, `{"latitude":%.6f,"longitude":%.6f,"timestamp":"%s","speed_kmh":40,"heading":0,"accuracy_meters":5}`,
			lat0+float64(k)*every.Seconds()*11.1/111_320, -83.0+float64(i/200)*0.001, ts.Format(time.RFC3339Nano))
	}
	b.WriteString("]}")
	ph, over := f.led.now()
	start := time.Now()
	var answer []byte
	st := soakPost(f.client, f.bases[i%len(f.bases)]+"/v1/locations/batch", f.key, b.Bytes(), &answer)
	if f.led.answer(f.led.points, ph, over, soakPointBatch, st, 200, time.Since(start)) {
		// acknowledged: the points it accepted must be in the trip; the
		// ones it skipped (rejections, with a reason) must not
		var r struct {
			Processed  int64 `json:"processed_count"`
			Rejections []struct {
				Reason string `json:"reason"`
			} `json:"rejections"`
		}
		if err := json.Unmarshal(answer, &r); err != nil {
			r.Processed = soakPointBatch // counted as accepted: a loss shows
		}
		f.led.mu.Lock()
		f.led.tripAcked[f.trips[i]] += r.Processed
		for _, rj := range r.Rejections {
			f.led.pointsSkipped[rj.Reason]++
		}
		f.led.mu.Unlock()
	}
}

// stored asks every trip's route for its stored points.
func (f *soakFleet) stored(ctx context.Context) (map[string]int64, error) {
	out := make(map[string]int64, len(f.trips))
	var mu sync.Mutex
	err := f.forEachTrip(ctx, 4, func(i int) error {
		var r struct {
			Geometry struct {
				TotalPoints int64 `json:"total_points"`
			} `json:"route_geometry"`
		}
		if err := apiCall(ctx, "GET", f.bases[i%len(f.bases)]+"/v1/trips/"+f.trips[i]+"/route?include_waypoints=false", f.key, nil, &r); err != nil {
			return fmt.Errorf("bench: soak: read a trip's route: %w", err)
		}
		mu.Lock()
		out[f.trips[i]] = r.Geometry.TotalPoints
		mu.Unlock()
		return nil
	})
	return out, err
}
