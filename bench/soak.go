package bench

import (
	"bufio"
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
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/gorilla/websocket"
	"github.com/jackc/pgx/v5"
)

// SoakConfig is a soak: Nodes fleethub processes over one broker process
// (fleethub-bench broker), the Redis at RedisURL and a schema of its own
// in DatabaseURL, events ingested at Rate a second spread over the nodes,
// one websocket subscriber per node, for Duration split into six phases:
// no fault, a node SIGKILLed and restarted, Redis cut, PostgreSQL hung,
// the broker SIGKILLed and restarted, and after. Redis and PostgreSQL go
// away through proxies inside the generator, never by stopping the
// servers, which other work on the machine shares.
type SoakConfig struct {
	Fleethub    string // the fleethub binary
	Broker      string // the fleethub-bench binary (default: this process's)
	RedisURL    string
	DatabaseURL string
	Duration    time.Duration
	Rate        int
	Nodes       int
	Dir         string    // logs and node data (default: a temporary directory)
	Log         io.Writer // progress lines
}

func (c *SoakConfig) defaults() error {
	if c.Fleethub == "" {
		return errors.New("bench: soak: --fleethub names the fleethub binary")
	}
	if c.RedisURL == "" || c.DatabaseURL == "" {
		return errors.New("bench: soak: --redis-url and --database-url are required")
	}
	if c.Broker == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		c.Broker = exe
	}
	if c.Duration <= 0 {
		c.Duration = 30 * time.Minute
	}
	if c.Rate <= 0 {
		c.Rate = 200
	}
	if c.Nodes <= 0 {
		c.Nodes = 3
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
	return nil
}

// SoakPhase is what happened during one phase.
type SoakPhase struct {
	Name       string
	Sent       int64
	Acked      int64
	Refused    int64 // answered 503 (or any non-202): not acknowledged, not counted as lost
	Failed     int64 // no answer at all
	P99        time.Duration
	Delivered  []int64       // acknowledged events of the phase each sink received
	Lost       []int64       // acknowledged events of the phase a sink never received
	Duplicates []int64       // receipts beyond the first
	Recovered  time.Duration // from the fault's end to the last refusal after it
}

// SoakResult is a soak's report.
type SoakResult struct {
	Phases []SoakPhase
	Nodes  int
}

// Print writes one block per phase.
func (r *SoakResult) Print(w io.Writer) {
	fmt.Fprintf(w, "soak: %d nodes, one websocket subscriber each\n", r.Nodes)
	for _, p := range r.Phases {
		fmt.Fprintf(w, "%-16s sent %d  acked %d  refused %d  no answer %d  ingest p99 %s  recovered %s\n", p.Name, p.Sent, p.Acked, p.Refused, p.Failed, p.P99.Round(time.Millisecond), p.Recovered.Round(time.Millisecond))
		fmt.Fprintf(w, "%-16s delivered %v  lost %v  duplicates %v\n", "", p.Delivered, p.Lost, p.Duplicates)
	}
}

// soakProxy forwards TCP to target; it can cut (close every connection
// and refuse new ones) or hang (hold every byte, as a stopped server).
type soakProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	hang  atomic.Bool
	wg    sync.WaitGroup
}

func newSoakProxy(target string) (*soakProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &soakProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			p.mu.Lock()
			if p.cut || err != nil {
				p.mu.Unlock()
				c.Close()
				if up != nil {
					up.Close()
				}
				continue
			}
			p.conns[c], p.conns[up] = struct{}{}, struct{}{}
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); p.pipe(up, c) }()
			go func() { defer p.wg.Done(); p.pipe(c, up) }()
		}
	}()
	return p, nil
}

func (p *soakProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.hang.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
}

func (p *soakProxy) setCut(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = v
	if v {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *soakProxy) close() {
	p.hang.Store(false)
	p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}

// withHost returns rawURL with its host replaced.
func withHost(rawURL, host string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bench: soak: %q is not a URL with a host", rawURL)
	}
	u.Host = host
	return u.String(), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// soakProc is a child process with its output in a file.
type soakProc struct {
	name string
	args []string
	out  string
	cmd  *exec.Cmd
}

func (p *soakProc) start() error {
	f, err := os.OpenFile(p.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("bench: soak: start %s: %w", p.name, err)
	}
	go func() { _ = p.cmd.Wait(); f.Close() }()
	return nil
}

func (p *soakProc) signal(sig syscall.Signal) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// waitReady polls base/readyz until it answers 200.
func waitReady(ctx context.Context, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: soak: %s not ready within %s", base, within)
}

// soakSink is one websocket subscriber that reconnects and resumes after
// the last offset it received.
type soakSink struct {
	base, key, stream string
	mu                sync.Mutex
	got               map[int64]int // event sequence → receipts
	last              int64         // highest offset received
}

func (s *soakSink) run(ctx context.Context) {
	u, _ := url.Parse(s.base)
	for ctx.Err() == nil {
		q := "stream_id=" + url.QueryEscape(s.stream) + "&api_key=" + url.QueryEscape(s.key)
		s.mu.Lock()
		if s.last > 0 {
			q += "&last_offset=" + strconv.FormatInt(s.last, 10)
		}
		s.mu.Unlock()
		c, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+u.Host+"/api/v1/streaming/ws?"+q, nil)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				break
			}
			s.record(data)
		}
		stop()
		c.Close()
	}
}

type soakFrame struct {
	Offset  int64 `json:"offset"`
	Message struct {
		EventData struct {
			Seq int64 `json:"soak_seq"`
		} `json:"event_data"`
	} `json:"message"`
}

// record counts the generator's events in one frame: a message, or an
// array of them.
func (s *soakSink) record(data []byte) {
	var frames []soakFrame
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		_ = json.Unmarshal(data, &frames)
	} else {
		var f soakFrame
		if json.Unmarshal(data, &f) == nil {
			frames = append(frames, f)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range frames {
		if f.Message.EventData.Seq == 0 {
			continue // a control frame
		}
		s.got[f.Message.EventData.Seq]++
		s.last = max(s.last, f.Offset)
	}
}

// soakLedger records every ingest request.
type soakLedger struct {
	mu      sync.Mutex
	phase   int
	acked   map[int64]int // event sequence → phase it was acknowledged in
	sent    []int64
	refused [][]time.Time // when each refused request was answered
	refN    []int64       // events refused
	failed  []int64
	lat     [][]time.Duration
}

// Soak runs the soak described by cfg.
func Soak(ctx context.Context, cfg SoakConfig) (*SoakResult, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if cfg.Dir == "" {
		d, err := os.MkdirTemp("", "fleethub-soak-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		cfg.Dir = d
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, err
	}
	logf := func(format string, args ...any) {
		fmt.Fprintf(cfg.Log, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
	}

	// a schema of its own, dropped at the end
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "fleethub_soak_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("bench: soak: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		admin.Close(ctx)
		return nil, fmt.Errorf("bench: soak: %w", err)
	}
	defer func() {
		dctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, _ = admin.Exec(dctx, "DROP SCHEMA "+schema+" CASCADE")
		admin.Close(dctx)
	}()

	pgURL, _ := url.Parse(cfg.DatabaseURL)
	rdURL, _ := url.Parse(cfg.RedisURL)
	if pgURL == nil || rdURL == nil || pgURL.Host == "" || rdURL.Host == "" {
		return nil, errors.New("bench: soak: --database-url and --redis-url must be URLs with a host")
	}
	pgProxy, err := newSoakProxy(pgURL.Host)
	if err != nil {
		return nil, err
	}
	defer pgProxy.close()
	rdProxy, err := newSoakProxy(rdURL.Host)
	if err != nil {
		return nil, err
	}
	defer rdProxy.close()
	q := pgURL.Query()
	q.Set("search_path", schema)
	pgURL.RawQuery = q.Encode()
	dbURL, _ := withHost(pgURL.String(), pgProxy.ln.Addr().String())
	redisURL, _ := withHost(cfg.RedisURL, rdProxy.ln.Addr().String())

	bport, err := freePort()
	if err != nil {
		return nil, err
	}
	brokerAddr := "127.0.0.1:" + strconv.Itoa(bport)
	broker := &soakProc{name: "broker", args: []string{cfg.Broker, "broker", "--port", strconv.Itoa(bport), "--dir", filepath.Join(cfg.Dir, "broker")}, out: filepath.Join(cfg.Dir, "broker.log")}
	if err := broker.start(); err != nil {
		return nil, err
	}
	defer broker.signal(syscall.SIGKILL)
	time.Sleep(time.Second)

	out, err := exec.CommandContext(ctx, cfg.Fleethub, "keys", "create", "--database-url", dbURL, "--org", "soak", "--env", "test",
		"--name", "soak", "--permissions", "all", "--rpm", "60000000").Output()
	if err != nil {
		return nil, fmt.Errorf("bench: soak: keys create: %w", err)
	}
	key := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])

	nodes := make([]*soakProc, cfg.Nodes)
	bases := make([]string, cfg.Nodes)
	for i := range nodes {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		bases[i] = "http://127.0.0.1:" + strconv.Itoa(port)
		nodes[i] = &soakProc{name: fmt.Sprintf("node %d", i), out: filepath.Join(cfg.Dir, fmt.Sprintf("node%d.log", i)),
			args: []string{cfg.Fleethub, "serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--data", filepath.Join(cfg.Dir, fmt.Sprintf("node%d", i)),
				"--database-url", dbURL, "--redis-url", redisURL, "--kafka-brokers", brokerAddr, "--log-format", "json"}}
		if err := nodes[i].start(); err != nil {
			return nil, err
		}
		defer nodes[i].signal(syscall.SIGKILL)
		if err := waitReady(ctx, bases[i], 60*time.Second); err != nil {
			return nil, err
		}
	}
	logf("%d nodes ready, broker %s", cfg.Nodes, brokerAddr)

	var st struct {
		StreamID string `json:"stream_id"`
	}
	if err := apiCall(ctx, "POST", bases[0]+"/api/v1/streaming/events/start", key,
		map[string]any{"event_filters": map[string]any{"categories": []string{"safety_events"}}}, &st); err != nil {
		return nil, fmt.Errorf("bench: soak: start stream: %w", err)
	}
	time.Sleep(2 * time.Second) // every node's registry has the stream
	sctx, stopSinks := context.WithCancel(ctx)
	defer stopSinks()
	sinks := make([]*soakSink, cfg.Nodes)
	var swg sync.WaitGroup
	for i := range sinks {
		sinks[i] = &soakSink{base: bases[i], key: key, stream: st.StreamID, got: map[int64]int{}}
		swg.Add(1)
		go func() { defer swg.Done(); sinks[i].run(sctx) }()
	}

	names := []string{"no fault", "node killed", "redis cut", "postgres hung", "broker killed", "after"}
	led := &soakLedger{acked: map[int64]int{}, sent: make([]int64, len(names)), refused: make([][]time.Time, len(names)), refN: make([]int64, len(names)),
		failed: make([]int64, len(names)), lat: make([][]time.Duration, len(names))}
	lctx, stopLoad := context.WithCancel(ctx)
	defer stopLoad()
	var lwg sync.WaitGroup
	lwg.Add(1)
	go func() { defer lwg.Done(); soakLoad(lctx, cfg, bases, key, led) }()

	phase := cfg.Duration / time.Duration(len(names))
	faultFor := min(phase/2, 20*time.Second)
	faultEnds := make([]time.Time, len(names))
	for i, name := range names {
		led.mu.Lock()
		led.phase = i
		led.mu.Unlock()
		logf("phase %q", name)
		start := time.Now()
		switch name {
		case "node killed":
			nodes[1].signal(syscall.SIGKILL)
			time.Sleep(min(faultFor, 5*time.Second))
			if err := nodes[1].start(); err != nil {
				return nil, err
			}
		case "redis cut":
			rdProxy.setCut(true)
			time.Sleep(faultFor)
			rdProxy.setCut(false)
		case "postgres hung":
			pgProxy.hang.Store(true)
			time.Sleep(faultFor)
			pgProxy.hang.Store(false)
		case "broker killed":
			broker.signal(syscall.SIGKILL)
			time.Sleep(min(faultFor, 5*time.Second))
			if err := broker.start(); err != nil {
				return nil, err
			}
		}
		faultEnds[i] = time.Now()
		select {
		case <-ctx.Done():
		case <-time.After(phase - time.Since(start)):
		}
	}
	stopLoad()
	lwg.Wait()
	logf("load stopped; waiting for the sinks")
	drain := time.Now().Add(60 * time.Second)
	for time.Now().Before(drain) && !soakDrained(led, sinks) {
		time.Sleep(500 * time.Millisecond)
	}
	stopSinks()
	swg.Wait()

	res := &SoakResult{Nodes: cfg.Nodes}
	for i, name := range names {
		p := SoakPhase{Name: name, Sent: led.sent[i], Refused: led.refN[i], Failed: led.failed[i],
			Delivered: make([]int64, len(sinks)), Lost: make([]int64, len(sinks)), Duplicates: make([]int64, len(sinks))}
		lat := led.lat[i]
		slices.Sort(lat)
		if len(lat) > 0 {
			p.P99 = lat[min(len(lat)-1, len(lat)*99/100)]
		}
		for _, t := range led.refused[i] {
			if d := t.Sub(faultEnds[i]); d > p.Recovered {
				p.Recovered = d
			}
		}
		for seq, ph := range led.acked {
			if ph != i {
				continue
			}
			p.Acked++
			for j, s := range sinks {
				n := s.got[seq]
				if n == 0 {
					p.Lost[j]++
					continue
				}
				p.Delivered[j]++
				p.Duplicates[j] += int64(n - 1)
			}
		}
		res.Phases = append(res.Phases, p)
	}
	return res, nil
}

// soakDrained reports whether every sink has every acknowledged event.
func soakDrained(led *soakLedger, sinks []*soakSink) bool {
	led.mu.Lock()
	defer led.mu.Unlock()
	for _, s := range sinks {
		s.mu.Lock()
		for seq := range led.acked {
			if s.got[seq] == 0 {
				s.mu.Unlock()
				return false
			}
		}
		s.mu.Unlock()
	}
	return true
}

// soakLoad ingests cfg.Rate events a second in batches of ten, every
// batch to the next node, from workers that each wait for their answer.
func soakLoad(ctx context.Context, cfg SoakConfig, bases []string, key string, led *soakLedger) {
	const per = 10
	batches := make(chan []int64, 256)
	var wg sync.WaitGroup
	var next atomic.Int64
	client := &http.Client{Timeout: 30 * time.Second}
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for seqs := range batches {
				base := bases[int(next.Add(1))%len(bases)]
				evs := make([]map[string]any, len(seqs))
				for i, s := range seqs {
					evs[i] = map[string]any{"event_id": "soak-" + strconv.FormatInt(s, 10), "event_type": "harsh_braking", "category": "safety_events",
						"timestamp": time.Now().UTC().Format(time.RFC3339Nano), "severity": "high",
						"source": map[string]any{"vehicle_id": "soak-" + strconv.FormatInt(s%50, 10)}, "event_data": map[string]any{"soak_seq": s}}
				}
				body, _ := json.Marshal(map[string]any{"events": evs})
				led.mu.Lock()
				ph := led.phase
				led.sent[ph] += int64(len(seqs))
				led.mu.Unlock()
				start := time.Now()
				req, _ := http.NewRequest("POST", base+"/v1/events", bytes.NewReader(body))
				req.Header.Set("X-API-Key", key)
				req.Header.Set("Content-Type", "application/json")
				res, err := client.Do(req)
				d := time.Since(start)
				led.mu.Lock()
				switch {
				case err != nil:
					led.failed[ph] += int64(len(seqs))
				case res.StatusCode == 202:
					for _, s := range seqs {
						led.acked[s] = ph
					}
					led.lat[ph] = append(led.lat[ph], d)
				default:
					led.refused[ph] = append(led.refused[ph], time.Now())
					led.refN[ph] += int64(len(seqs))
					led.lat[ph] = append(led.lat[ph], d)
				}
				led.mu.Unlock()
				if res != nil {
					_, _ = io.Copy(io.Discard, bufio.NewReader(res.Body))
					res.Body.Close()
				}
			}
		}()
	}
	tick := time.NewTicker(time.Second * per / time.Duration(cfg.Rate))
	defer tick.Stop()
	var seq int64
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			seqs := make([]int64, per)
			for i := range seqs {
				seq++
				seqs[i] = seq
			}
			select {
			case batches <- seqs:
			default: // the workers are all waiting: not sent
			}
		}
	}
	close(batches)
	wg.Wait()
}
