package bench

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// WebhookConfig drives webhook delivery end to end: events go in through
// POST /v1/events, match a webhook event stream, and come out as signed
// deliveries at a receiver this generator runs. The server must run with
// --allow-private-webhooks (the receiver listens on loopback) and the key
// needs events:write and streams:manage.
type WebhookConfig struct {
	Config
	Batch int // events per POST /v1/events (default 100); Rate counts events
	// ReceiverAddr is where the receiver listens (default 127.0.0.1:0).
	ReceiverAddr string
	// DeadNeighbour adds a second stream matching the same events whose
	// receiver accepts connections and never answers; HealthyNeighbour
	// adds one whose receiver answers at once (the cost of a neighbour as
	// such, for comparison).
	DeadNeighbour    bool
	HealthyNeighbour bool
	// Receivers is how many healthy receivers run, each the receiver of
	// a stream of its own matching the same events and checking its own
	// signatures (default 1): the rate counts every delivery they get.
	Receivers int
	// BadNeighbours adds five streams on the same events whose receivers
	// misbehave: one refuses connections (down), one never answers, one
	// answers after a second, one answers 500 to every other request and
	// one answers 410 Gone.
	BadNeighbours bool
	// Bad adds some of those five only, by kind: down, hung (never
	// answers), slow, flaky, gone; BadNeighbours is all five.
	Bad []string
	// BatchSize > 1 turns on batch_events: deliveries carry arrays.
	BatchSize int
	// Drain is how long to wait for deliveries after publishing stops
	// (default 30s).
	Drain time.Duration
}

// Webhook publishes events for cfg.Duration and measures the signed
// deliveries the receiver gets: Requests are webhook requests received,
// Items the messages they carried, Elapsed runs from the first publish to
// the last delivery, and Latencies are publish-to-receipt per message (an
// upper bound of match-to-send: they include the ingest request, the bus
// and matching). A delivery whose signature does not verify counts as an
// error.
func Webhook(ctx context.Context, cfg WebhookConfig) (*Result, error) {
	cfg.defaults()
	if cfg.Batch <= 0 {
		cfg.Batch = 100
	}
	if cfg.ReceiverAddr == "" {
		cfg.ReceiverAddr = "127.0.0.1:0"
	}
	if cfg.Drain == 0 {
		cfg.Drain = 30 * time.Second
	}
	var rb [6]byte
	_, _ = rand.Read(rb[:])
	runID := "bench-" + hex.EncodeToString(rb[:])

	if cfg.Receivers <= 0 {
		cfg.Receivers = 1
	}
	rcvs := make([]*webhookReceiver, cfg.Receivers)
	urls := make([]string, cfg.Receivers)
	for i := range rcvs {
		addr := cfg.ReceiverAddr
		if i > 0 {
			addr = "127.0.0.1:0"
		}
		rcvs[i] = &webhookReceiver{}
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, fmt.Errorf("bench: receiver: %w", err)
		}
		srv := &fasthttp.Server{Handler: rcvs[i].serve, ReadTimeout: time.Minute, NoDefaultServerHeader: true}
		go srv.Serve(ln)
		defer srv.Shutdown()
		urls[i] = "http://" + ln.Addr().String() + "/hooks"
	}
	if cfg.BadNeighbours {
		cfg.Bad = BadKinds
	}
	if len(cfg.Bad) > 0 {
		stop, err := startBadNeighbours(cfg, runID, cfg.Bad)
		defer stop()
		if err != nil {
			return nil, err
		}
	}

	var deadURL string
	if cfg.DeadNeighbour {
		u, stop, err := deadReceiver()
		if err != nil {
			return nil, err
		}
		defer stop()
		deadURL = u
	}

	if cfg.HealthyNeighbour {
		hl, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("bench: neighbour receiver: %w", err)
		}
		hs := &fasthttp.Server{Handler: func(c *fasthttp.RequestCtx) { c.SetStatusCode(204) }, NoDefaultServerHeader: true}
		go hs.Serve(hl)
		defer hs.Shutdown()
		hid, _, err := startWebhookStream(cfg, runID, "http://"+hl.Addr().String()+"/neighbour")
		if err != nil {
			return nil, err
		}
		defer stopWebhookStream(cfg, hid)
	}
	for i, rcv := range rcvs {
		id, err := rcv.follow(cfg, runID, urls[i])
		if err != nil {
			return nil, err
		}
		defer stopWebhookStream(cfg, id)
	}
	if deadURL != "" {
		did, _, err := startWebhookStream(cfg, runID, deadURL)
		if err != nil {
			return nil, err
		}
		defer stopWebhookStream(cfg, did)
	}

	start := time.Now()
	res, err := publishEvents(ctx, cfg, runID, cfg.Duration)
	if err != nil {
		return nil, err
	}
	published := res.Items * int64(len(rcvs)) // every receiver gets every event
	got := func() (n int64) {
		for _, rcv := range rcvs {
			n += rcv.messages.Load()
		}
		return n
	}
	deadline := time.Now().Add(cfg.Drain)
	for got() < published && time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	out := &Result{Name: "webhook", Statuses: res.Statuses, Errors: res.Errors, FirstError: res.FirstError, Elapsed: res.Elapsed}
	var last int64
	for _, rcv := range rcvs {
		out.Errors += rcv.bad.Load()
		out.Requests += rcv.requests.Load()
		out.Items += rcv.messages.Load()
		last = max(last, rcv.last.Load())
		rcv.mu.Lock()
		out.Latencies = append(out.Latencies, rcv.lats...)
		if out.FirstError == "" {
			out.FirstError = rcv.firstErr
		}
		rcv.mu.Unlock()
	}
	if last > 0 {
		out.Elapsed = time.Duration(last - start.UnixNano())
	}
	sort.Slice(out.Latencies, func(i, j int) bool { return out.Latencies[i] < out.Latencies[j] })
	if out.Items < published && out.FirstError == "" {
		out.FirstError = fmt.Sprintf("%d of %d deliveries (%d receivers × %d published events) made within %s of the end", out.Items, published, len(rcvs), res.Items, cfg.Drain)
	}
	return out, nil
}

// BadKinds are the misbehaving receivers WebhookConfig.Bad names.
var BadKinds = []string{"down", "hung", "slow", "flaky", "gone"}

// startBadNeighbours starts the misbehaving receivers of kinds and their
// streams; stop ends them all, whatever err.
func startBadNeighbours(cfg WebhookConfig, runID string, kinds []string) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	for _, k := range kinds {
		if !slices.Contains(BadKinds, k) {
			return stop, fmt.Errorf("bench: bad receiver %q: want one of %s", k, strings.Join(BadKinds, ", "))
		}
	}
	serve := func(h fasthttp.RequestHandler) (string, error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("bench: bad receiver: %w", err)
		}
		srv := &fasthttp.Server{Handler: h, NoDefaultServerHeader: true}
		go srv.Serve(ln)
		stops = append(stops, func() { srv.Shutdown() })
		return "http://" + ln.Addr().String() + "/bad", nil
	}
	// down: a port nothing listens on any more (connections refused)
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return stop, fmt.Errorf("bench: bad receiver: %w", err)
	}
	down := "http://" + dl.Addr().String() + "/down"
	dl.Close()
	hung, hstop, err := deadReceiver()
	if err != nil {
		return stop, err
	}
	stops = append(stops, hstop)
	var flakyN atomic.Int64
	slow, err := serve(func(c *fasthttp.RequestCtx) { time.Sleep(time.Second); c.SetStatusCode(204) })
	if err != nil {
		return stop, err
	}
	flaky, err := serve(func(c *fasthttp.RequestCtx) {
		if flakyN.Add(1)%2 == 0 {
			c.SetStatusCode(500)
			return
		}
		c.SetStatusCode(204)
	})
	if err != nil {
		return stop, err
	}
	gone, err := serve(func(c *fasthttp.RequestCtx) { c.SetStatusCode(410) })
	if err != nil {
		return stop, err
	}
	urls := map[string]string{"down": down, "hung": hung, "slow": slow, "flaky": flaky, "gone": gone}
	for _, k := range kinds {
		id, _, err := startWebhookStream(cfg, runID, urls[k])
		if err != nil {
			return stop, err
		}
		stops = append(stops, func() { stopWebhookStream(cfg, id) })
	}
	return stop, nil
}

// deadReceiver listens on loopback, accepts connections and never reads
// or answers them; it returns its URL and a function that closes it all.
func deadReceiver() (string, func(), error) {
	dl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("bench: dead receiver: %w", err)
	}
	var conns []net.Conn
	var cmu sync.Mutex
	go func() {
		for {
			c, err := dl.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c) // held open, never read or answered
			cmu.Unlock()
		}
	}()
	stop := func() {
		dl.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
	}
	return "http://" + dl.Addr().String() + "/dead", stop, nil
}

// publishEvents posts this run's events to POST /v1/events at cfg.Rate
// for d; each event carries its send time as event_data.sent_ns.
func publishEvents(ctx context.Context, cfg WebhookConfig, runID string, d time.Duration) (*Result, error) {
	pub := cfg.Config
	pub.Duration = d
	if pub.Rate > 0 {
		pub.Rate = cfg.Rate / float64(cfg.Batch)
	}
	url := cfg.URL + "/v1/events"
	bufs := make([][]byte, pub.Conns)
	return run(ctx, "webhook-publish", pub, func(w, i int, req *fasthttp.Request) int {
		b := bufs[w][:0]
		b = append(b, `{"events":[`...)
		now := time.Now()
		ts := now.UTC().Format(time.RFC3339Nano)
		for j := 0; j < cfg.Batch; j++ {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"event_type":"bench_tick","category":"system_events","severity":"low","timestamp":"`...)
			b = append(b, ts...)
			b = append(b, `","source":{"vehicle_id":"`...)
			b = append(b, runID...)
			b = append(b, '-')
			b = strconv.AppendInt(b, int64(w), 10)
			b = append(b, `"},"event_data":{"bench_run":"`...)
			b = append(b, runID...)
			b = append(b, `","sent_ns":`...)
			b = strconv.AppendInt(b, now.UnixNano(), 10)
			b = append(b, `}}`...)
		}
		b = append(b, "]}"...)
		bufs[w] = b
		jsonPOST(req, url, b)
		return cfg.Batch
	}, func(st int) bool { return st == 202 })
}

// webhookReceiver verifies and counts deliveries.
type webhookReceiver struct {
	key      []byte
	requests atomic.Int64
	messages atomic.Int64
	bad      atomic.Int64
	last     atomic.Int64

	dups atomic.Int64 // requests whose webhook-id arrived before

	mu       sync.Mutex // guards lats, sents, ids and firstErr
	ids      map[string]struct{}
	lats     []time.Duration
	sents    []int64 // send time of each latency, unix ns
	firstErr string
}

var sentNSKey = []byte(`"sent_ns":`)

func (r *webhookReceiver) serve(c *fasthttp.RequestCtx) {
	now := time.Now()
	body := c.PostBody()
	if err := r.verify(&c.Request.Header, body); err != nil {
		r.bad.Add(1)
		r.mu.Lock()
		if r.firstErr == "" {
			r.firstErr = "receiver: " + err.Error()
		}
		r.mu.Unlock()
		c.SetStatusCode(400)
		return
	}
	var lats []time.Duration
	var sents []int64
	n := int64(0)
	for rest := body; ; {
		i := bytes.Index(rest, sentNSKey)
		if i < 0 {
			break
		}
		rest = rest[i+len(sentNSKey):]
		j := 0
		for j < len(rest) && rest[j] >= '0' && rest[j] <= '9' {
			j++
		}
		if ns, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
			lats = append(lats, now.Sub(time.Unix(0, ns)))
			sents = append(sents, ns)
		}
		n++
	}
	id := string(c.Request.Header.Peek("webhook-id"))
	r.mu.Lock()
	if r.ids == nil {
		r.ids = map[string]struct{}{}
	}
	_, dup := r.ids[id]
	r.ids[id] = struct{}{}
	r.mu.Unlock()
	r.requests.Add(1)
	if dup {
		r.dups.Add(1)
		c.SetStatusCode(204)
		return // counted once: the receiver deduplicates by webhook-id
	}
	r.mu.Lock()
	r.lats = append(r.lats, lats...)
	r.sents = append(r.sents, sents...)
	r.mu.Unlock()
	// counted after the latencies are in: a reader that sees the count
	// finds them
	r.last.Store(now.UnixNano())
	r.messages.Add(n)
	c.SetStatusCode(204)
}

// follow starts this run's webhook stream delivering to url, and
// verifies what arrives with its secret.
func (r *webhookReceiver) follow(cfg WebhookConfig, runID, url string) (string, error) {
	id, secret, err := startWebhookStream(cfg, runID, url)
	if err != nil {
		return "", err
	}
	key, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		stopWebhookStream(cfg, id)
		return "", fmt.Errorf("bench: webhook secret: %w", err)
	}
	r.key = key
	return id, nil
}

// verify checks the Standard Webhooks signature.
func (r *webhookReceiver) verify(h *fasthttp.RequestHeader, body []byte) error {
	id, ts, sigs := h.Peek("webhook-id"), h.Peek("webhook-timestamp"), h.Peek("webhook-signature")
	if len(id) == 0 || len(ts) == 0 || len(sigs) == 0 {
		return errors.New("missing webhook headers")
	}
	m := hmac.New(sha256.New, r.key)
	m.Write(id)
	m.Write([]byte{'.'})
	m.Write(ts)
	m.Write([]byte{'.'})
	m.Write(body)
	var sum [sha256.Size]byte
	want := base64.StdEncoding.AppendEncode(nil, m.Sum(sum[:0]))
	for _, s := range bytes.Fields(sigs) {
		if v, sig, ok := bytes.Cut(s, []byte{','}); ok && string(v) == "v1" && hmac.Equal(sig, want) {
			return nil
		}
	}
	return errors.New("signature does not verify")
}

// startWebhookStream starts an event stream matching this run's events
// and delivering to url; it returns the stream id and secret.
func startWebhookStream(cfg WebhookConfig, runID, url string) (string, string, error) {
	sc := map[string]any{"delivery_method": "webhook"}
	if cfg.BatchSize > 1 {
		sc["batch_events"], sc["batch_size"], sc["max_wait_time"] = true, cfg.BatchSize, 100
	}
	body, err := json.Marshal(map[string]any{
		"event_filters": map[string]any{"categories": []string{"system_events"},
			"custom_conditions": []map[string]any{{"field": "event_data.bench_run", "operator": "=", "value": runID}}},
		"stream_config": sc,
		"webhook_url":   url,
	})
	if err != nil {
		return "", "", fmt.Errorf("bench: start stream: %w", err)
	}
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(cfg.URL + "/api/v1/streaming/events/start")
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.Header.Set("X-API-Key", cfg.Key)
	req.SetBody(body)
	if err := fasthttp.DoTimeout(req, resp, 10*time.Second); err != nil {
		return "", "", fmt.Errorf("bench: start stream: %w", err)
	}
	if resp.StatusCode() != 201 {
		return "", "", fmt.Errorf("bench: start stream: status %d: %s", resp.StatusCode(), resp.Body())
	}
	var s struct {
		StreamID      string `json:"stream_id"`
		WebhookSecret string `json:"webhook_secret"`
	}
	if err := json.Unmarshal(resp.Body(), &s); err != nil || s.StreamID == "" || len(s.WebhookSecret) < len("whsec_") {
		return "", "", fmt.Errorf("bench: start stream: unexpected answer %s", resp.Body())
	}
	return s.StreamID, s.WebhookSecret, nil
}

func stopWebhookStream(cfg WebhookConfig, id string) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.SetRequestURI(cfg.URL + "/api/v1/streaming/events/stop")
	req.Header.SetMethod("POST")
	req.Header.SetContentType("application/json")
	req.Header.Set("X-API-Key", cfg.Key)
	req.SetBodyString(`{"stream_id":"` + id + `"}`)
	if err := fasthttp.DoTimeout(req, resp, 10*time.Second); err != nil {
		fmt.Fprintf(os.Stderr, "bench: stopping stream %s: %v\n", id, err)
	}
}
