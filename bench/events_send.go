package bench

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// eventSender posts the events of its vehicles, one request at a time.
type eventSender struct {
	vehicles []int   // indexes into the run's vehicles
	seq      []int64 // per vehicle of vehicles
	next     int
	buf      []byte
}

// eventsSent is what the senders did; sentAt and the event numbers are
// only kept with Latency.
type eventsSent struct {
	accepted, requests, errors atomic.Int64
	appends                    atomic.Int64 // expected in the streams' logs for the accepted events
	mu                         sync.Mutex
	firstError                 string
	lat                        []time.Duration // per request
	sentAt                     []int64         // per event number, ns
}

func (s *eventsSent) fail(msg string) {
	s.errors.Add(1)
	s.mu.Lock()
	if s.firstError == "" {
		s.firstError = msg
	}
	s.mu.Unlock()
}

// send runs the senders until the deadline.
func (r *eventRun) send(ctx context.Context, deadline time.Time, s *eventsSent) {
	cfg := r.cfg
	u, err := url.Parse(cfg.URL)
	if err != nil {
		s.fail("bench: events: " + err.Error())
		return
	}
	client := &fasthttp.HostClient{Addr: u.Host, MaxConns: cfg.Conns, ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second}
	var interval time.Duration
	if cfg.Rate > 0 {
		interval = time.Duration(float64(time.Second) * float64(cfg.Batch*cfg.Conns) / float64(cfg.Rate))
	}
	var n atomic.Int64 // event numbers, from 0
	var wg sync.WaitGroup
	for w := range cfg.Conns {
		snd := &eventSender{}
		for v := w; v < cfg.Vehicles; v += cfg.Conns {
			snd.vehicles = append(snd.vehicles, v)
		}
		snd.seq = make([]int64, len(snd.vehicles))
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
			defer fasthttp.ReleaseRequest(req)
			defer fasthttp.ReleaseResponse(resp)
			var lat []time.Duration
			// senders start spread over one interval
			next := time.Now().Add(time.Duration(w) * interval / time.Duration(cfg.Conns))
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if interval > 0 {
					if d := time.Until(next); d > 0 {
						select {
						case <-ctx.Done():
							return
						case <-time.After(d):
						}
					}
					next = next.Add(interval)
					if !time.Now().Before(deadline) {
						break
					}
				}
				first := n.Add(int64(cfg.Batch)) - int64(cfg.Batch)
				now := time.Now()
				body, appends := r.body(snd, first, now)
				req.Reset()
				req.SetRequestURI(cfg.URL + "/v1/events")
				req.Header.SetMethod("POST")
				req.Header.SetContentType("application/json")
				req.Header.Set("X-API-Key", cfg.Key)
				req.SetBodyRaw(body)
				if s.sentAt != nil {
					for i := first; i < first+int64(cfg.Batch) && i < int64(len(s.sentAt)); i++ {
						s.sentAt[i] = now.UnixNano()
					}
				}
				t0 := time.Now()
				err := client.Do(req, resp)
				s.requests.Add(1)
				if err != nil {
					s.fail(err.Error())
					cfg.Meter.Fail()
					continue
				}
				if resp.StatusCode() != 202 {
					cfg.Meter.Fail()
					s.fail(fmt.Sprintf("status %d: %.200s", resp.StatusCode(), resp.Body()))
					continue
				}
				lat = append(lat, time.Since(t0))
				cfg.Meter.Observe(lat[len(lat)-1])
				s.accepted.Add(int64(cfg.Batch))
				s.appends.Add(appends)
			}
			s.mu.Lock()
			s.lat = append(s.lat, lat...)
			s.mu.Unlock()
		}()
	}
	wg.Wait()
}

// body builds one request of Batch events numbered from first, the
// sender's vehicles in turn; it returns the appends the streams owe them.
func (r *eventRun) body(snd *eventSender, first int64, now time.Time) ([]byte, int64) {
	b := append(snd.buf[:0], `{"events":[`...)
	var appends int64
	ts := now.UTC().AppendFormat(nil, "2006-01-02T15:04:05.000Z07:00")
	for j := range int64(r.cfg.Batch) {
		if j > 0 {
			b = append(b, ',')
		}
		k := snd.next
		snd.next = (snd.next + 1) % len(snd.vehicles)
		v := snd.vehicles[k]
		snd.seq[k]++
		n := first + j
		c := int(n % int64(len(eventCategories)))
		appends += r.matches(v, c)
		b = append(b, `{"event_id":"be-`...)
		b = append(b, r.id...)
		b = append(b, '-')
		b = strconv.AppendInt(b, n, 10)
		b = append(b, `","event_type":"harsh_braking","category":"`...)
		b = append(b, eventCategories[c]...)
		b = append(b, `","timestamp":"`...)
		b = append(b, ts...)
		b = append(b, `","severity":"high","priority":"normal","source":{"vehicle_id":"`...)
		b = append(b, r.vehicles[v]...)
		b = append(b, `","driver_id":"bd-`...)
		b = append(b, r.vehicles[v][3:]...)
		b = append(b, `"},"location":{"latitude":`...)
		b = fixed(b, 40+float64(v)*1e-3, 6)
		b = append(b, `,"longitude":`...)
		b = fixed(b, -83+float64(snd.seq[k]%1000)*1e-5, 6)
		b = append(b, `},"event_data":{"deceleration_g":0.62,"speed_before_kmh":71.5,"~n":`...)
		b = strconv.AppendInt(b, n, 10)
		b = append(b, `},"metadata":{"sequence_number":`...)
		b = strconv.AppendInt(b, snd.seq[k], 10)
		b = append(b, `,"source_system":"bench"}}`...)
	}
	b = append(b, "]}"...)
	snd.buf = b
	return b, appends
}
