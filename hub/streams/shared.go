package streams

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// SharedCounters adds up the counters of every node (Redis when several
// nodes run). The registry flushes its local deltas every second.
type SharedCounters interface {
	// Flush adds deltas and records this node's connected clients. call
	// names the deltas: a Flush of the same call again adds nothing more
	// (the registry sends a flush that failed again with the same name,
	// as the store may have taken it before the failure).
	Flush(ctx context.Context, streamID, call string, deltas map[string]int64, connected int64) error
	// Totals returns the summed counters and connected clients of live nodes.
	Totals(ctx context.Context, streamID string) (map[string]int64, int64, error)
}

// RedisCounters keeps stream counters in Redis: a hash of totals per
// stream and a hash of node → "connected|unix ms" for connected clients
// (nodes silent for 5 s are not counted).
type RedisCounters struct {
	rdb    redis.UniversalClient
	prefix string
	node   string
	now    func() time.Time
}

// NewRedisCounters makes shared counters for node.
func NewRedisCounters(rdb redis.UniversalClient, node string) *RedisCounters {
	return &RedisCounters{rdb: rdb, prefix: "fleethub:streamctr:", node: node, now: time.Now}
}

// flushScript: KEYS totals, connected, applied (node → its last call);
// ARGV node, call, "connected|unix ms", then counter and delta pairs.
// The totals move once per call of a node: go-redis sends a command again
// when its reply did not come within the read timeout, though Redis may
// have run it, and the registry sends a failed flush again.
var flushScript = redis.NewScript(`
if redis.call('HGET', KEYS[3], ARGV[1]) ~= ARGV[2] then
  for i = 4, #ARGV, 2 do
    redis.call('HINCRBY', KEYS[1], ARGV[i], ARGV[i + 1])
  end
  redis.call('HSET', KEYS[3], ARGV[1], ARGV[2])
end
redis.call('EXPIRE', KEYS[1], 172800)
redis.call('EXPIRE', KEYS[3], 172800)
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[2], 3600)
return 1`)

// Flush implements SharedCounters.
func (r *RedisCounters) Flush(ctx context.Context, id, call string, deltas map[string]int64, connected int64) error {
	tag := r.prefix + "{" + id + "}:"
	args := make([]any, 0, 3+2*len(deltas))
	args = append(args, r.node, call, strconv.FormatInt(connected, 10)+"|"+strconv.FormatInt(r.now().UnixMilli(), 10))
	for k, v := range deltas {
		if v != 0 {
			args = append(args, k, v)
		}
	}
	if err := flushScript.Run(ctx, r.rdb, []string{tag + "totals", tag + "conn", tag + "applied"}, args...).Err(); err != nil {
		return fmt.Errorf("streams: flush counters: %w", err)
	}
	return nil
}

// Totals implements SharedCounters.
func (r *RedisCounters) Totals(ctx context.Context, id string) (map[string]int64, int64, error) {
	tot, err := r.rdb.HGetAll(ctx, r.prefix+"{"+id+"}:totals").Result()
	if err != nil {
		return nil, 0, fmt.Errorf("streams: counters: %w", err)
	}
	out := map[string]int64{}
	for k, v := range tot {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("streams: counter %s of %s: %w", k, id, err)
		}
		out[k] = n
	}
	conns, err := r.rdb.HGetAll(ctx, r.prefix+"{"+id+"}:conn").Result()
	if err != nil {
		return nil, 0, fmt.Errorf("streams: counters: %w", err)
	}
	var connected int64
	now := r.now().UnixMilli()
	for _, v := range conns {
		c, at, _ := strings.Cut(v, "|")
		n, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("streams: connections of %s: %w", id, err)
		}
		ms, err := strconv.ParseInt(at, 10, 64)
		if err != nil {
			return nil, 0, fmt.Errorf("streams: connections of %s: %w", id, err)
		}
		if now-ms < 5000 {
			connected += n
		}
	}
	return out, connected, nil
}

// flusher remembers what was already flushed per stream.
type flusher struct {
	mu      sync.Mutex
	flushed map[string]map[string]int64 // counted as flushed: taken, or sealed in pending
	pending map[string]*sealed          // a flush that failed, to send again as it was
	conn    map[string]int64
	failing bool // the last flush failed: logged once per outage
}

// sealed is a stream's flush as first sent: a flush that failed may have
// been taken, so it goes again under its name until one is answered.
type sealed struct {
	call   string
	deltas map[string]int64
	conn   int64
}

// flushCounters sends every stream's counter deltas to the shared store.
func (r *Registry) flushCounters(ctx context.Context) {
	if r.shared == nil {
		return
	}
	r.mu.RLock()
	entries := make([]*Entry, 0, len(r.streams))
	for _, e := range r.streams {
		entries = append(entries, e)
	}
	r.mu.RUnlock()
	r.fl.mu.Lock()
	defer r.fl.mu.Unlock()
	for _, e := range entries {
		id := e.Rec.ID
		p := r.fl.pending[id]
		if p == nil {
			prev := r.fl.flushed[id]
			if prev == nil {
				prev = map[string]int64{}
				r.fl.flushed[id] = prev
			}
			deltas := map[string]int64{}
			changed := false
			for _, n := range counterNames {
				cur := e.Counter(n)
				if d := cur - prev[n]; d != 0 {
					deltas[n], changed = d, true
				}
			}
			conn := e.connected.Load()
			if !changed && conn == 0 && r.fl.conn[id] == 0 {
				continue
			}
			for k, d := range deltas {
				prev[k] += d
			}
			p = &sealed{call: newCall(), deltas: deltas, conn: conn}
			r.fl.pending[id] = p
		}
		if err := r.shared.Flush(ctx, id, p.call, p.deltas, p.conn); err != nil {
			if !r.fl.failing {
				r.log.Warn("stream counters not shared; kept on this node until they can be", "error", err)
				r.fl.failing = true
			}
			return
		}
		if r.fl.failing {
			r.log.Info("stream counters shared again")
			r.fl.failing = false
		}
		delete(r.fl.pending, id)
		r.fl.conn[id] = p.conn
	}
}

// newCall names a flush: 16 hex digits.
func newCall() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// totals returns the counters of every node for an entry: the shared
// totals plus what this node has not flushed yet.
func (r *Registry) totals(ctx context.Context, e *Entry) (map[string]int64, int64) {
	local := map[string]int64{}
	for _, n := range counterNames {
		local[n] = e.Counter(n)
	}
	if r.shared == nil {
		return local, e.connected.Load()
	}
	tot, conn, err := r.shared.Totals(ctx, e.Rec.ID)
	if err != nil {
		r.log.Warn("stream counters of other nodes unavailable", "error", err)
		return local, e.connected.Load()
	}
	r.fl.mu.Lock()
	prev := r.fl.flushed[e.Rec.ID]
	lastConn := r.fl.conn[e.Rec.ID]
	var unsent map[string]int64 // a flush not answered yet: counted here
	if p := r.fl.pending[e.Rec.ID]; p != nil {
		unsent = p.deltas
	}
	out := map[string]int64{}
	for _, n := range counterNames {
		out[n] = tot[n] + local[n] - prev[n] + unsent[n]
	}
	r.fl.mu.Unlock()
	return out, conn - lastConn + e.connected.Load()
}

// RedisLease is a Lease in Redis: one key holding the name of the node
// that holds it, for ttl, renewed by each Hold of that node. A node that
// stops renewing loses it after ttl, and another node takes it.
type RedisLease struct {
	rdb  redis.UniversalClient
	key  string
	node string
	ttl  time.Duration
}

// NewRedisLease makes the lease named name for node.
func NewRedisLease(rdb redis.UniversalClient, name, node string, ttl time.Duration) *RedisLease {
	return &RedisLease{rdb: rdb, key: "fleethub:lease:" + name, node: node, ttl: ttl}
}

// holdScript takes the lease when free, renews it when held by ARGV[1].
var holdScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if cur == false then
  redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
  return 1
end
if cur == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)

// Hold implements Lease.
func (l *RedisLease) Hold(ctx context.Context) (bool, error) {
	n, err := holdScript.Run(ctx, l.rdb, []string{l.key}, l.node, l.ttl.Milliseconds()).Int()
	if err != nil {
		return false, fmt.Errorf("streams: lease %s: %w", l.key, err)
	}
	return n == 1, nil
}
