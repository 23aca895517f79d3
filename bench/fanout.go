package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// FanoutConfig drives `fleethub-bench fanout`: Subscribers websocket
// clients follow one event stream while Rate events per second are
// ingested through POST /v1/events for Duration.
type FanoutConfig struct {
	URL string
	Key string
	// SubscribeURL is the node the websocket clients connect to (default
	// URL): with two nodes, events are ingested at one and received at
	// the other.
	SubscribeURL string
	Subscribers  int // default 100
	// Streams: subscriber i follows stream i modulo Streams (default 1),
	// each stream its own vehicles; the events are spread over them.
	Streams  int
	Rate     int           // events per second ingested, default 1000
	Duration time.Duration // default 10s
	Batch    int           // events per ingest request, default 50
	Drain    time.Duration // wait after the last ingest, default 3s
	// BatchEvents starts the stream with batch_events (frames carry
	// arrays of up to 100 messages, sent after MaxWaitMS at the latest).
	BatchEvents bool
	MaxWaitMS   int
	// Senders ingest in parallel, each with one request in flight and
	// its own vehicle per stream (default 4): more of them model more
	// publishers, whose concurrent requests the server's group commit
	// shares an fsync among.
	Senders int
	// Server: where the server's CPU and memory are read (its /proc with
	// a PID, else its /metrics), and how it is reached over HTTPS.
	Server ServerConfig
	// Meter, when set, counts deliveries (with their latency) and failed
	// ingest requests as they happen.
	Meter *Meter
	// Centrifugo, when set, is the HTTP API key of a Centrifugo server at
	// URL, driven instead of Fleethub (centrifugo.go): a channel per
	// stream, the same events published through its API.
	Centrifugo string
}

// FanoutResult is what the subscribers saw.
type FanoutResult struct {
	Sent, Expected, Delivered, Lost, Duplicates, OutOfOrder int64
	Streams, Subscribers, Senders                           int
	// Offered is the events a second the senders were to publish
	// (--events-per-sec): a sender waits for each answer, so a slow one
	// sends fewer.
	Offered          int
	Elapsed          time.Duration
	Latencies        []time.Duration `json:"-"`
	ServerCPUSeconds float64
	ServerRSSBytes   float64
	IngestErrors     int64
	// CPUSource is where the server's CPU was read: /proc/<pid> or
	// /metrics.
	CPUSource string
	TLS       bool
	// Server is what was driven: fleethub, or centrifugo.
	Server string
}

// Report is the result's figures: with the server's CPU, its cost per
// delivery and per published event (the figures Centrifugo's are given
// in).
func (r *FanoutResult) Report() *Report {
	secs := r.Elapsed.Seconds()
	rep := &Report{Mode: "fanout"}
	if r.Server != "" {
		rep.Add("server", "server", r.Server, "")
	}
	rep.Add("streams", "streams", r.Streams, "")
	rep.Add("subscribers", "subscribers", r.Subscribers, "")
	if r.Senders > 0 {
		rep.Add("senders", "senders", r.Senders, "")
	}
	rep.Add("tls", "TLS", r.TLS, "")
	if r.Offered > 0 {
		rep.Add("offered_per_s", "events offered", r.Offered, "/s")
	}
	rep.Add("sent", "events sent", r.Sent, "")
	rep.Add("sent_per_s", "events sent a second", float64(r.Sent)/secs, "/s")
	rep.Add("expected", "deliveries expected", r.Expected, "")
	rep.Add("delivered", "delivered", r.Delivered, "")
	rep.Add("deliveries_per_s", "delivery rate", float64(r.Delivered)/secs, "/s")
	rep.latencyRows("latency", "ingest→receipt", r.Latencies)
	rep.Add("lost", "lost", r.Lost, "")
	rep.Add("duplicates", "duplicates", r.Duplicates, "")
	rep.Add("out_of_order", "out of order", r.OutOfOrder, "")
	rep.Add("ingest_errors", "ingest errors", r.IngestErrors, "")
	serverRows(rep, r.CPUSource, r.ServerCPUSeconds, secs, r.ServerRSSBytes)
	if r.ServerCPUSeconds > 0 && r.Delivered > 0 {
		rep.Add("server_cpu_us_per_delivery", "server CPU per delivery", r.ServerCPUSeconds*1e6/float64(r.Delivered), "µs")
	}
	if r.ServerCPUSeconds > 0 && r.Sent > 0 {
		rep.Add("server_cpu_us_per_publish", "server CPU per event published", r.ServerCPUSeconds*1e6/float64(r.Sent), "µs")
	}
	return rep
}

// Print writes the report as a table.
func (r *FanoutResult) Print(w io.Writer) { r.Report().WriteTable(w) }

// The generator's events carry their send time and sequence number under
// keys that start with '~', a byte found nowhere else in a delivered
// message, so finding them is one IndexByte scan rather than a search for
// a quoted key among a message full of quotes.
var (
	seqKey  = []byte(`~seq":`)
	sentKey = []byte(`~ns":`)
)

// seenSet records which sequence numbers of one sender arrived: a bitmap
// over the low 32 bits (each sender counts up from 1).
type seenSet []uint64

// add reports whether n was new.
func (s *seenSet) add(n int64) bool {
	w, bit := int(n>>6), uint64(1)<<(n&63)
	if w >= len(*s) {
		grown := make([]uint64, max(2*len(*s), w+1))
		copy(grown, *s)
		*s = grown
	}
	if (*s)[w]&bit != 0 {
		return false
	}
	(*s)[w] |= bit
	return true
}

func scanInt(b []byte) (int64, []byte) {
	var n int64
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int64(b[i]-'0')
		i++
	}
	return n, b[i:]
}

func (cfg *FanoutConfig) defaults() {
	if cfg.Subscribers == 0 {
		cfg.Subscribers = 100
	}
	if cfg.Streams == 0 {
		cfg.Streams = 1
	}
	if cfg.Rate == 0 {
		cfg.Rate = 1000
	}
	if cfg.Duration == 0 {
		cfg.Duration = 10 * time.Second
	}
	if cfg.Batch == 0 {
		cfg.Batch = 50
	}
	if cfg.Drain == 0 {
		cfg.Drain = 3 * time.Second
	}
	if cfg.Senders <= 0 {
		cfg.Senders = defaultSenders
	}
}

// defaultSenders ingest in parallel, each for its own vehicle, so a slow
// ingest round trip (Kafka acks) does not throttle the offered rate;
// order is checked per vehicle (seq = sender<<32 | n)
const defaultSenders = 4

// fanoutSub is one websocket subscriber and what it saw; only its
// receive goroutine touches it until the connection is closed.
type fanoutSub struct {
	conn   *websocket.Conn
	stream int // index of the stream it follows
	lat    []time.Duration
	seen   []seenSet // per sender
	got    int64
	last   []int64 // per sender
	dup    int64
	ooo    int64
	// meter counts deliveries live (nil: not)
	meter *Meter
	// pong answers the server's pings (Centrifugo's, which are frames)
	pong bool
}

// Fanout runs the fan-out benchmark.
func Fanout(ctx context.Context, cfg FanoutConfig) (*FanoutResult, error) {
	cfg.defaults()
	vehicles := runVehiclesFor("fanout", cfg.Streams, cfg.Senders)
	client := cfg.Server.client()
	var streamIDs []string
	defer func() {
		for _, id := range streamIDs {
			if err := apiCallWith(context.Background(), client, "POST", cfg.URL+"/api/v1/streaming/events/stop", cfg.Key, map[string]any{"stream_id": id}, nil); err != nil {
				fmt.Fprintf(os.Stderr, "bench: stopping stream %s: %v\n", id, err)
			}
		}
	}()
	channels := streamNames(vehicles)
	if cfg.Centrifugo == "" { // a channel needs no start
		for _, vs := range vehicles {
			id, err := startFanoutStream(ctx, cfg, vs)
			if err != nil {
				return nil, err
			}
			streamIDs = append(streamIDs, id)
		}
	}
	sub0 := cfg.SubscribeURL
	if sub0 == "" {
		sub0 = cfg.URL
	}
	subs, err := dialFanout(ctx, cfg, sub0, streamIDs, channels)
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	for _, s := range subs {
		wg.Add(1)
		go func(s *fanoutSub) {
			defer wg.Done()
			s.receive()
		}(s)
	}
	two := sub0 != cfg.URL && cfg.Server.PID == 0 // a PID is one process: the one given
	cpu0, _, _ := cfg.Server.usage(ctx, cfg.URL)
	var cpuB0 float64
	if two {
		cpuB0, _, _ = cfg.Server.usage(ctx, sub0)
	}
	start := time.Now()
	sent, ingestErr := sendFanout(ctx, cfg, vehicles, channels, start.Add(cfg.Duration))
	elapsed := time.Since(start)
	time.Sleep(cfg.Drain)
	cpu1, rss, source := cfg.Server.usage(ctx, cfg.URL)
	if two {
		cpuB1, rssB, _ := cfg.Server.usage(ctx, sub0)
		cpu1 += cpuB1 - cpuB0
		rss += rssB
	}
	for _, s := range subs {
		s.conn.Close()
	}
	wg.Wait()
	res := &FanoutResult{Server: "fleethub", Offered: cfg.Rate, Streams: cfg.Streams, Subscribers: cfg.Subscribers, Senders: cfg.Senders, Elapsed: elapsed, ServerCPUSeconds: cpu1 - cpu0, ServerRSSBytes: rss,
		IngestErrors: ingestErr, CPUSource: source, TLS: strings.HasPrefix(cfg.URL, "https:")}
	if cfg.Centrifugo != "" {
		res.Server = "centrifugo"
	}
	for _, n := range sent {
		res.Sent += n
	}
	for _, s := range subs {
		res.Expected += sent[s.stream]
		res.Delivered += s.got
		res.Duplicates += s.dup
		res.OutOfOrder += s.ooo
		res.Latencies = append(res.Latencies, s.lat...)
	}
	res.Lost = res.Expected - res.Delivered
	slices.Sort(res.Latencies)
	return res, nil
}

// runVehicles names the vehicles of a run of the default senders.
func runVehicles(prefix string, streams int) [][]string {
	return runVehiclesFor(prefix, streams, defaultSenders)
}

// runVehiclesFor names the vehicles of a run: per stream, one per sender
// (a sender's events of one vehicle keep their order).
func runVehiclesFor(prefix string, streams, senders int) [][]string {
	run := time.Now().UnixNano()
	vs := make([][]string, streams)
	for j := range vs {
		vs[j] = make([]string, senders)
		for k := range vs[j] {
			vs[j][k] = fmt.Sprintf("%s-%d-%d-%d", prefix, run, j, k)
		}
	}
	return vs
}

// startFanoutStream starts the event stream of the vehicles and returns
// its id.
func startFanoutStream(ctx context.Context, cfg FanoutConfig, vehicles []string) (string, error) {
	var st struct {
		StreamID string `json:"stream_id"`
	}
	body := map[string]any{"event_filters": map[string]any{"vehicle_ids": vehicles}}
	if cfg.BatchEvents {
		body["stream_config"] = map[string]any{"batch_events": true, "batch_size": 100, "max_wait_time": max(1, cfg.MaxWaitMS)}
	}
	if err := apiCallWith(ctx, cfg.Server.client(), "POST", cfg.URL+"/api/v1/streaming/events/start", cfg.Key, body, &st); err != nil {
		return "", fmt.Errorf("bench: start stream: %w", err)
	}
	return st.StreamID, nil
}

// dialFanout connects the subscribers to the streams at base (to the
// channels, on Centrifugo), subscriber i to stream i modulo their count.
func dialFanout(ctx context.Context, cfg FanoutConfig, base string, streamIDs, channels []string) ([]*fanoutSub, error) {
	addrs := make([]string, len(channels))
	for j := range addrs {
		var a string
		var err error
		if cfg.Centrifugo != "" {
			a, err = centrifugoWS(base)
		} else {
			a, err = wsURL(base, streamIDs[j], cfg.Key)
		}
		if err != nil {
			return nil, err
		}
		addrs[j] = a
	}
	subs := make([]*fanoutSub, cfg.Subscribers)
	// a large read buffer: a burst reaches each client as one run of
	// frames, read with few syscalls
	dialer := cfg.Server.dialer(64<<10, 0)
	for i := range subs {
		c, resp, err := dialer.DialContext(ctx, addrs[i%len(addrs)], nil)
		if err != nil {
			err = handshakeErr(resp, err)
			for _, s := range subs[:i] {
				s.conn.Close()
			}
			return nil, fmt.Errorf("bench: subscriber %d: %w", i, err)
		}
		perStream := cfg.Rate / len(addrs)
		subs[i] = &fanoutSub{conn: c, stream: i % len(addrs), lat: make([]time.Duration, 0, perStream*int(cfg.Duration.Seconds()+1)), meter: cfg.Meter}
		if cfg.Centrifugo != "" {
			subs[i].pong = true
			if err := centrifugoSubscribe(c, channels[i%len(addrs)]); err != nil {
				for _, s := range subs[:i+1] {
					s.conn.Close()
				}
				return nil, err
			}
		}
	}
	return subs, nil
}

// receive reads frames until the connection is closed, recording each
// generator event's latency, duplicates and order.
func (s *fanoutSub) receive() {
	buf := make([]byte, 0, 64<<10)
	for {
		_, r, err := s.conn.NextReader()
		if err != nil {
			return
		}
		buf = buf[:0]
		for {
			if len(buf) == cap(buf) {
				buf = append(buf, 0)[:len(buf)]
			}
			n, err := r.Read(buf[len(buf):cap(buf)])
			buf = buf[:len(buf)+n]
			if err != nil {
				break
			}
		}
		s.scan(buf, time.Now().UnixNano())
		if s.pong && centrifugoPong(s.conn, buf) != nil {
			return // the connection is gone, as the next read would say
		}
	}
}

// scan records the generator events of one frame received at now.
func (s *fanoutSub) scan(data []byte, now int64) {
	// scan instead of decoding: the generator shares the machine, and a
	// full JSON decode of a million messages a second would measure the
	// generator, not the server
	for {
		// event_data keys arrive sorted: ~ns, then ~seq
		i := bytes.Index(data, sentKey)
		if i < 0 {
			break
		}
		sent, rest := scanInt(data[i+len(sentKey):])
		j := bytes.Index(rest, seqKey)
		if j < 0 {
			break
		}
		seq, rest2 := scanInt(rest[j+len(seqKey):])
		data = rest2
		src := int(seq >> 32)
		for src >= len(s.seen) { // a sender seen first
			s.seen, s.last = append(s.seen, seenSet{}), append(s.last, 0)
		}
		if !s.seen[src].add(seq & (1<<32 - 1)) {
			s.dup++
			continue
		}
		s.got++
		if seq < s.last[src] {
			s.ooo++
		}
		s.last[src] = seq
		s.lat = append(s.lat, time.Duration(now-sent))
		s.meter.Observe(time.Duration(now - sent))
	}
}

// sendFanout ingests Rate events a second until the deadline, from one
// goroutine per sender (len(vehicles[0])), the events of a request
// spread over the streams in turn (vehicles[stream][sender]), and
// returns how many were accepted for each stream and how many requests
// failed.
func sendFanout(ctx context.Context, cfg FanoutConfig, vehicles [][]string, channels []string, deadline time.Time) (sent []int64, ingestErrs int64) {
	senders := len(vehicles[0])
	nSent := make([]atomic.Int64, len(vehicles))
	var ingestErr atomic.Int64
	client := cfg.Server.clientConns(senders)
	interval := time.Duration(float64(time.Second) * float64(cfg.Batch) * float64(senders) / float64(cfg.Rate))
	var swg sync.WaitGroup
	for snd := 0; snd < senders; snd++ {
		swg.Add(1)
		go func(snd int) {
			defer swg.Done()
			// stagger the senders across one interval, so that the
			// offered load is 1/senders of it every interval/senders
			// instead of all senders' requests at once
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Duration(snd) * interval / time.Duration(senders)):
			}
			ticker := time.NewTicker(interval)
			defer ticker.Stop()
			seq, next := int64(snd)<<32, snd%len(vehicles)
			per := make([]int64, len(vehicles))
			for time.Now().Before(deadline) && ctx.Err() == nil {
				<-ticker.C
				evs := make([]map[string]any, cfg.Batch)
				chs := make([]string, cfg.Batch)
				now := time.Now()
				clear(per)
				for i := range evs {
					seq++
					evs[i] = map[string]any{"event_type": "bench_ping", "category": "operational_events", "timestamp": now.UTC().Format(time.RFC3339Nano),
						"severity": "low", "priority": "normal", "source": map[string]any{"vehicle_id": vehicles[next][snd]},
						"event_data": map[string]any{"~seq": seq, "~ns": now.UnixNano()}}
					chs[i] = channels[next]
					per[next]++
					next = (next + 1) % len(vehicles)
				}
				var err error
				if cfg.Centrifugo != "" {
					err = centrifugoPublish(ctx, client, cfg.URL, cfg.Centrifugo, chs, evs)
				} else {
					err = apiCallWith(ctx, client, "POST", cfg.URL+"/v1/events", cfg.Key, map[string]any{"events": evs}, nil)
				}
				if err != nil {
					ingestErr.Add(1)
					cfg.Meter.Fail()
					continue
				}
				for j, n := range per {
					if n > 0 {
						nSent[j].Add(n)
					}
				}
			}
		}(snd)
	}
	swg.Wait()
	sent = make([]int64, len(vehicles))
	for j := range sent {
		sent[j] = nSent[j].Load()
	}
	return sent, ingestErr.Load()
}
