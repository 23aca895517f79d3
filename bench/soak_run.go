package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/fleethub/fleethub/internal/faultproxy"
)

// soakRun is a soak under way: its configuration (Dir and, with
// RedisServer, RedisURL filled in), the servers, proxies and processes it
// started, and what it undoes when it ends.
type soakRun struct {
	cfg   SoakConfig
	began time.Time
	undo  []func() // run last first by close

	schema           string    // the soak's own PostgreSQL schema
	redisProc        *soakProc // the soak's own Redis, with RedisServer
	pgProxy, rdProxy *faultproxy.Proxy
	dbURL, redisURL  string // the servers' URLs through the proxies
	broker           *soakProc
	brokerAddr       string
	key              string // an API key with every permission
	nodes            []*soakProc
	bases            []string // per node, its base URL
	receiver         *soakReceiver
	evStream         string // the event stream's ID, of its websocket subscribers
	telStream        string // the telemetry stream's ID
}

// atEnd has close run f.
func (r *soakRun) atEnd(f func()) { r.undo = append(r.undo, f) }

// atEndErr is atEnd for an undo that may fail: the failure is logged.
func (r *soakRun) atEndErr(what string, f func() error) {
	r.atEnd(func() {
		if err := f(); err != nil {
			r.logf("undoing %s failed: %v", what, err)
		}
	})
}

// close undoes what the soak set up, last first.
func (r *soakRun) close() {
	for i := len(r.undo) - 1; i >= 0; i-- {
		r.undo[i]()
	}
}

// logf writes a progress line, with the time of day.
func (r *soakRun) logf(format string, args ...any) {
	fmt.Fprintf(r.cfg.Log, "%s "+format+"\n", append([]any{time.Now().UTC().Format("15:04:05")}, args...)...)
}

// setUp starts everything the soak runs on: its schema, Redis when it
// runs its own, the proxies, the broker, the nodes and the streams with
// their webhook receiver.
func (r *soakRun) setUp(ctx context.Context) error {
	if err := r.workDir(); err != nil {
		return err
	}
	r.began = time.Now()
	if err := r.createSchema(ctx); err != nil {
		return err
	}
	if r.cfg.RedisServer != "" {
		if err := r.startRedis(ctx); err != nil {
			return err
		}
	}
	if err := r.startProxies(); err != nil {
		return err
	}
	if err := r.startBroker(); err != nil {
		return err
	}
	if err := r.createKey(ctx); err != nil {
		return err
	}
	if err := r.startNodes(ctx); err != nil {
		return err
	}
	r.logf("%d nodes ready, broker %s", r.cfg.Nodes, r.brokerAddr)
	return r.startStreams(ctx)
}

// workDir makes the directory of the logs and node data: a temporary
// one, removed at the end, unless the configuration names one.
func (r *soakRun) workDir() error {
	if r.cfg.Dir != "" {
		if err := os.MkdirAll(r.cfg.Dir, 0o755); err != nil {
			return fmt.Errorf("bench: soak: %w", err)
		}
		return nil
	}
	d, err := os.MkdirTemp("", "fleethub-soak-")
	if err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.atEndErr("the soak's directory", func() error { return os.RemoveAll(d) })
	r.cfg.Dir = d
	return nil
}

// createSchema creates a schema of the soak's own, dropped at the end.
func (r *soakRun) createSchema(ctx context.Context) error {
	b := make([]byte, 6)
	if _, err := rand.Read(b); err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.schema = "fleethub_soak_" + hex.EncodeToString(b)
	admin, err := pgx.Connect(ctx, r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	if _, err := admin.Exec(ctx, "CREATE SCHEMA "+r.schema); err != nil {
		return errors.Join(fmt.Errorf("bench: soak: %w", err), admin.Close(ctx))
	}
	r.atEndErr("the soak's schema", func() error {
		dctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		_, err := admin.Exec(dctx, "DROP SCHEMA "+r.schema+" CASCADE")
		return errors.Join(err, admin.Close(dctx))
	})
	return nil
}

// startRedis starts a Redis of the soak's own (every write synced before
// it answers), killed at the end, and points RedisURL at it.
func (r *soakRun) startRedis(ctx context.Context) error {
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	dir := filepath.Join(r.cfg.Dir, "redis")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.redisProc = &soakProc{name: "redis", out: filepath.Join(r.cfg.Dir, "redis.log"), args: []string{r.cfg.RedisServer, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--dir", dir, "--appendonly", "yes", "--appendfsync", "always", "--save", ""}}
	if err := r.redisProc.start(); err != nil {
		return err
	}
	r.atEndErr("the soak's Redis", func() error { return r.redisProc.signal(syscall.SIGKILL) })
	r.cfg.RedisURL = "redis://127.0.0.1:" + strconv.Itoa(port) + "/0"
	return waitListening(ctx, "127.0.0.1:"+strconv.Itoa(port), 30*time.Second)
}

// startProxies puts a fault proxy before PostgreSQL and one before
// Redis, and sets the URLs the nodes reach them by (PostgreSQL's with the
// soak's schema).
func (r *soakRun) startProxies() error {
	pgURL, err := url.Parse(r.cfg.DatabaseURL)
	if err != nil {
		return fmt.Errorf("bench: soak: --database-url: %w", err)
	}
	rdURL, err := url.Parse(r.cfg.RedisURL)
	if err != nil {
		return fmt.Errorf("bench: soak: --redis-url: %w", err)
	}
	if pgURL.Host == "" || rdURL.Host == "" {
		return errors.New("bench: soak: --database-url and --redis-url must be URLs with a host")
	}
	if r.pgProxy, err = faultproxy.New(pgURL.Host); err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.atEndErr("the PostgreSQL proxy", r.pgProxy.Close)
	if r.rdProxy, err = faultproxy.New(rdURL.Host); err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.atEndErr("the Redis proxy", r.rdProxy.Close)
	q := pgURL.Query()
	q.Set("search_path", r.schema)
	pgURL.RawQuery = q.Encode()
	if r.dbURL, err = withHost(pgURL.String(), r.pgProxy.Addr()); err != nil {
		return err
	}
	r.redisURL, err = withHost(r.cfg.RedisURL, r.rdProxy.Addr())
	return err
}

// startBroker starts the broker process, killed at the end.
func (r *soakRun) startBroker() error {
	port, err := freePort()
	if err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.brokerAddr = "127.0.0.1:" + strconv.Itoa(port)
	r.broker = &soakProc{name: "broker", args: []string{r.cfg.Broker, "broker", "--port", strconv.Itoa(port), "--dir", filepath.Join(r.cfg.Dir, "broker")},
		out: filepath.Join(r.cfg.Dir, "broker.log")}
	if err := r.broker.start(); err != nil {
		return err
	}
	r.atEndErr("the broker", func() error { return r.broker.signal(syscall.SIGKILL) })
	time.Sleep(time.Second)
	return nil
}

// createKey creates the API key the soak's requests carry.
func (r *soakRun) createKey(ctx context.Context) error {
	out, err := exec.CommandContext(ctx, r.cfg.Fleethub, "keys", "create", "--database-url", r.dbURL, "--org", "soak", "--env", "test",
		"--name", "soak", "--permissions", "all", "--rpm", "60000000").Output()
	if err != nil {
		return fmt.Errorf("bench: soak: keys create: %w", err)
	}
	r.key = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	if r.key == "" {
		return errSoakNoKey
	}
	return nil
}

// startNodes starts the fleethub nodes one after the other, each ready
// before the next starts, all killed at the end.
func (r *soakRun) startNodes(ctx context.Context) error {
	r.nodes = make([]*soakProc, r.cfg.Nodes)
	r.bases = make([]string, r.cfg.Nodes)
	for i := range r.nodes {
		port, err := freePort()
		if err != nil {
			return fmt.Errorf("bench: soak: %w", err)
		}
		r.bases[i] = "http://127.0.0.1:" + strconv.Itoa(port)
		node := &soakProc{name: fmt.Sprintf("node %d", i), out: filepath.Join(r.cfg.Dir, fmt.Sprintf("node%d.log", i)),
			args: []string{r.cfg.Fleethub, "serve", "--addr", "127.0.0.1:" + strconv.Itoa(port), "--data", filepath.Join(r.cfg.Dir, fmt.Sprintf("node%d", i)),
				"--database-url", r.dbURL, "--redis-url", r.redisURL, "--kafka-brokers", r.brokerAddr, "--log-format", "json", "--allow-private-webhooks"}}
		r.nodes[i] = node
		if err := node.start(); err != nil {
			return err
		}
		r.atEndErr("a node", func() error { return node.signal(syscall.SIGKILL) })
		if err := waitReady(ctx, r.bases[i], 60*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// startStreams starts the webhook receiver, closed at the end, and the
// streams: the event stream of the websocket subscribers, the same
// events' webhook stream to the receiver, and the telemetry stream of
// every vehicle.
func (r *soakRun) startStreams(ctx context.Context) error {
	var err error
	if r.receiver, err = newSoakReceiver(r.began); err != nil {
		return fmt.Errorf("bench: soak: %w", err)
	}
	r.atEndErr("the webhook receiver", r.receiver.close)
	vehicles := make([]string, r.cfg.Trips)
	for i := range vehicles {
		vehicles[i] = "soak-veh-" + strconv.Itoa(i)
	}
	var evStream, whStream, telStream struct {
		StreamID string `json:"stream_id"`
	}
	// the event streams deduplicate by event_id, as a user who wants each
	// event once starts them: the duplicates counted are what gets past
	// the dedup window; the telemetry stream has no ids to dedup on
	dedup := map[string]any{"deduplication": true}
	evFilter := map[string]any{"categories": []string{"safety_events"}, "custom_conditions": []any{map[string]any{"field": "event_data.soak_seq", "operator": ">", "value": 0}}}
	base, key := r.bases[0], r.key
	if err := apiCall(ctx, "POST", base+"/api/v1/streaming/events/start", key, map[string]any{"event_filters": evFilter, "processing_rules": dedup}, &evStream); err != nil {
		return fmt.Errorf("bench: soak: start the event stream: %w", err)
	}
	if err := apiCall(ctx, "POST", base+"/api/v1/streaming/events/start", key, map[string]any{"event_filters": evFilter, "processing_rules": dedup, "webhook_url": "http://" + r.receiver.addr + "/hook",
		"stream_config": map[string]any{"delivery_method": "webhook", "batch_events": true, "batch_size": 100, "max_wait_time": 100}}, &whStream); err != nil {
		return fmt.Errorf("bench: soak: start the webhook stream: %w", err)
	}
	if err := apiCall(ctx, "POST", base+"/api/v1/streaming/telemetry/start", key, map[string]any{"vehicles": vehicles, "data_types": []string{"engine_diagnostics"},
		"stream_config": map[string]any{"frequency": "high"}, "delivery_method": "websocket"}, &telStream); err != nil {
		return fmt.Errorf("bench: soak: start the telemetry stream: %w", err)
	}
	r.evStream, r.telStream = evStream.StreamID, telStream.StreamID
	time.Sleep(2 * time.Second) // every node's registry has the streams
	return nil
}

// waitListening dials addr until it accepts a connection.
func waitListening(ctx context.Context, addr string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var d net.Dialer
		if c, err := d.DialContext(ctx, "tcp", addr); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: soak: nothing listens on %s after %s", addr, within)
}
