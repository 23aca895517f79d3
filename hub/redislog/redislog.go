// Package redislog is the stream log shared by several nodes: each
// stream is a Redis stream whose entry ids are the stream offsets
// ("<offset>-0"), assigned by one Lua script per append (INCR then XADD,
// atomic), trimmed to MaxEntries. Every node keeps a local mirror of the
// recent entries of the streams its clients follow, fed by one XREAD
// BLOCK follower per stream, so that a thousand websocket clients on a
// node cost one Redis read per new batch, not a thousand.
package redislog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
	"github.com/redis/go-redis/v9"
)

// Config of the log.
type Config struct {
	Prefix     string // default "fleethub:log:"
	MaxEntries int64  // per stream, default 100,000 (approximate trim)
	Retention  time.Duration
	MirrorSize int           // entries kept locally per followed stream, default 10,000
	IdleAfter  time.Duration // a follower with no waiter stops after this, default 30s
}

// Log is the Redis hub.Log.
type Log struct {
	cfg    Config
	rdb    redis.UniversalClient
	logger *slog.Logger
	script *redis.Script

	mu      sync.Mutex // guards mirrors
	mirrors map[string]*mirror
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

var _ hub.Log = (*Log)(nil)

// mirror is the local copy of a followed stream's recent entries.
type mirror struct {
	mu       sync.RWMutex // guards the fields below
	base     int64        // offset of entries[0]
	entries  []hub.Entry
	last     int64 // newest offset known on this node
	notify   chan struct{}
	lastUsed time.Time
}

// appendScript assigns offsets and adds entries atomically.
const appendScript = `
local n = 0
for i = 1, #ARGV - 1 do
  n = redis.call('INCR', KEYS[1])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[#ARGV], n .. '-0', 'd', ARGV[i])
end
return n`

// New makes a log on client.
func New(cfg Config, client redis.UniversalClient, logger *slog.Logger) *Log {
	if cfg.Prefix == "" {
		cfg.Prefix = "fleethub:log:"
	}
	if cfg.MaxEntries <= 0 {
		cfg.MaxEntries = 100_000
	}
	if cfg.MirrorSize <= 0 {
		cfg.MirrorSize = 10_000
	}
	if cfg.IdleAfter <= 0 {
		cfg.IdleAfter = 30 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Log{cfg: cfg, rdb: client, logger: logger, script: redis.NewScript(appendScript), mirrors: map[string]*mirror{}, ctx: ctx, cancel: cancel}
}

func (l *Log) keys(id string) (seq, log string) {
	return l.cfg.Prefix + "{" + id + "}:seq", l.cfg.Prefix + "{" + id + "}:log"
}

// Append adds entries; offsets come from Redis.
func (l *Log) Append(ctx context.Context, id string, data [][]byte) (int64, error) {
	if len(data) == 0 {
		return l.Last(ctx, id)
	}
	seq, key := l.keys(id)
	args := make([]any, 0, len(data)+1)
	for _, d := range data {
		args = append(args, d)
	}
	args = append(args, l.cfg.MaxEntries)
	last, err := l.script.Run(ctx, l.rdb, []string{seq, key}, args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("redislog: append: %w", err)
	}
	return last, nil
}

func parseID(id string) (int64, error) {
	ms, _, _ := strings.Cut(id, "-")
	return strconv.ParseInt(ms, 10, 64)
}

func toEntries(msgs []redis.XMessage) ([]hub.Entry, error) {
	out := make([]hub.Entry, 0, len(msgs))
	for _, m := range msgs {
		off, err := parseID(m.ID)
		if err != nil {
			return nil, fmt.Errorf("redislog: entry id %q: %w", m.ID, err)
		}
		d, _ := m.Values["d"].(string)
		out = append(out, hub.Entry{Offset: off, Time: time.Now(), Data: []byte(d)})
	}
	return out, nil
}

// Read returns entries from offset from. A followed stream answers from
// its local mirror, the node's view of the log: entries not mirrored yet
// are simply not there yet (Wait fires when they are), so a thousand
// readers of one stream cost no Redis call; offsets older than the mirror
// are read from Redis.
func (l *Log) Read(ctx context.Context, id string, from int64, max int) ([]hub.Entry, error) {
	if from < 1 {
		from = 1
	}
	l.mu.Lock()
	m := l.mirrors[id]
	l.mu.Unlock()
	if m != nil {
		m.mu.RLock()
		if from >= m.base {
			var out []hub.Entry
			if i := int(from - m.base); i < len(m.entries) {
				end := min(len(m.entries), i+max)
				out = m.entries[i:end:end]
			}
			m.mu.RUnlock()
			return out, nil
		}
		m.mu.RUnlock()
	}
	_, key := l.keys(id)
	msgs, err := l.rdb.XRangeN(ctx, key, strconv.FormatInt(from, 10)+"-0", "+", int64(max)).Result()
	if err != nil {
		return nil, fmt.Errorf("redislog: read: %w", err)
	}
	return toEntries(msgs)
}

// Last returns the newest offset: the mirror's for a followed stream (so
// Read and Last agree on this node), else Redis's.
func (l *Log) Last(ctx context.Context, id string) (int64, error) {
	l.mu.Lock()
	m := l.mirrors[id]
	l.mu.Unlock()
	if m != nil {
		m.mu.RLock()
		defer m.mu.RUnlock()
		return m.last, nil
	}
	return l.remoteLast(ctx, id)
}

func (l *Log) remoteLast(ctx context.Context, id string) (int64, error) {
	seq, _ := l.keys(id)
	n, err := l.rdb.Get(ctx, seq).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redislog: last: %w", err)
	}
	return n, nil
}

// Wait returns a channel closed when offset from exists, following the
// stream from this node.
func (l *Log) Wait(id string, from int64) <-chan struct{} {
	m := l.follow(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastUsed = time.Now()
	if from <= m.last {
		c := make(chan struct{})
		close(c)
		return c
	}
	return m.notify
}

// follow returns the mirror of a stream, starting its follower.
func (l *Log) follow(id string) *mirror {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mirrors[id]; m != nil {
		return m
	}
	last, err := l.remoteLast(l.ctx, id)
	if err != nil {
		l.logger.Warn("redislog: follow", "stream_id", id, "error", err)
	}
	m := &mirror{base: last + 1, last: last, notify: make(chan struct{}), lastUsed: time.Now()}
	l.mirrors[id] = m
	l.wg.Add(1)
	go l.run(id, m)
	return m
}

// run follows a stream with XREAD BLOCK until idle or closed.
func (l *Log) run(id string, m *mirror) {
	defer l.wg.Done()
	_, key := l.keys(id)
	m.mu.RLock()
	after := strconv.FormatInt(m.last, 10) + "-0"
	m.mu.RUnlock()
	for l.ctx.Err() == nil {
		res, err := l.rdb.XRead(l.ctx, &redis.XReadArgs{Streams: []string{key, after}, Count: 1000, Block: time.Second}).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			if l.ctx.Err() != nil {
				break
			}
			l.logger.Warn("redislog: follower read", "stream_id", id, "error", err)
			time.Sleep(200 * time.Millisecond)
			continue
		}
		var ents []hub.Entry
		for _, s := range res {
			e, err := toEntries(s.Messages)
			if err != nil {
				l.logger.Warn("redislog: follower decode", "stream_id", id, "error", err)
				continue
			}
			ents = append(ents, e...)
		}
		m.mu.Lock()
		if len(ents) > 0 {
			after = strconv.FormatInt(ents[len(ents)-1].Offset, 10) + "-0"
			for _, e := range ents {
				if e.Offset != m.base+int64(len(m.entries)) {
					// a gap (trimmed before we read): restart the mirror here
					m.entries, m.base = nil, e.Offset
				}
				m.entries = append(m.entries, e)
			}
			if over := len(m.entries) - l.cfg.MirrorSize; over > 0 {
				m.entries = append([]hub.Entry(nil), m.entries[over:]...)
				m.base += int64(over)
			}
			m.last = ents[len(ents)-1].Offset
			close(m.notify)
			m.notify = make(chan struct{})
		}
		idle := time.Since(m.lastUsed) > l.cfg.IdleAfter
		m.mu.Unlock()
		if idle {
			l.mu.Lock()
			delete(l.mirrors, id)
			l.mu.Unlock()
			return
		}
	}
}

// Close stops the followers.
func (l *Log) Close() error {
	l.cancel()
	l.wg.Wait()
	return nil
}

// Epoch is not kept yet on Redis: every stream reports the same name.
func (l *Log) Epoch(context.Context, string) (string, error) { return "redis", nil }
