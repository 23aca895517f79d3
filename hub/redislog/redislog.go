// Package redislog is the stream log shared by several nodes: each
// stream is a Redis stream whose entry ids are the stream offsets
// ("<offset>-0"), assigned by one Lua script per append (INCR then XADD,
// atomic), trimmed to MaxEntries. Every node keeps a local mirror of the
// recent entries of the streams its clients follow, fed by one XREAD
// BLOCK follower per stream, so that a thousand websocket clients on a
// node cost one Redis read per new batch, not a thousand.
//
// # Epochs
//
// A stream's history is named by an epoch, a random token kept in a key
// beside its sequence ("<prefix>{<id>}:epoch", the same hash slot). The
// append script and Epoch (one script, ensureHistory) give a stream its
// epoch atomically with its sequence:
//
//	seq key    epoch key   meaning                        action
//	missing    any         never appended, or lost        new epoch, seq 0, the log key deleted
//	present    missing     the epoch alone was lost       new epoch, offsets continue
//	present    present     the history goes on            none
//
// Epoch on a stream never appended creates its epoch and a sequence at 0,
// so the answer is stable and the first append keeps it. Losing the
// sequence (FLUSHALL, FLUSHDB, an eviction, a DEL) therefore always yields
// a new epoch once offsets start again at 1; losing only the epoch key
// renames a history whose offsets go on, which costs clients holding the
// old name a replay from the oldest retained offset, never a gap.
//
// A node's mirror keeps the epoch of the entries it holds. The follower
// reads the epoch key after every XREAD (one GET per round: a round that
// saw the epoch unchanged after its read returned entries of that epoch),
// and a read from Redis reads the epoch in the same MULTI; whoever sees
// another epoch resets the mirror to the new history, so Read, Last and
// Epoch of a node always describe one history, and an Epoch asked after a
// Read names the history that Read came from (or a later one).
//
// Concurrency: a Log is safe for concurrent use, and several nodes share
// one stream: an append is one atomic Lua script in Redis, so concurrent
// appends to a stream, from any goroutine of any node, get distinct
// offsets without gaps. On a node the mirrors are found in a map under
// one mutex and each mirror is guarded by a read-write mutex of its own;
// each followed stream has one follower goroutine, which stops once
// nobody asked for the stream for IdleAfter, or at Close, which waits for
// every follower. The entries read share their bytes with the mirror:
// never modify them.
package redislog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
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
	script *redis.Script // appendScript
	unique *redis.Script // uniqueScript
	ensure *redis.Script // epochScript

	mu      sync.Mutex // guards mirrors
	mirrors map[string]*mirror
	closed  chan struct{} // closed: what Wait returns for an offset that exists
	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

var _ hub.Log = (*Log)(nil)

// mirror is the local copy of a followed stream's recent entries.
type mirror struct {
	mu       sync.RWMutex // guards the fields below
	epoch    string       // the history the entries belong to
	base     int64        // offset of entries[0]
	entries  []hub.Entry
	last     int64 // newest offset known on this node
	notify   chan struct{}
	lastUsed time.Time
}

// ensureHistory gives a stream its epoch and sequence (the table in the
// package doc). KEYS: seq, log, epoch; fresh is the epoch a new history
// gets.
const ensureHistory = `
local function ensure(fresh)
  if redis.call('EXISTS', KEYS[1]) == 0 then
    redis.call('DEL', KEYS[2])
    redis.call('SET', KEYS[3], fresh)
    redis.call('SET', KEYS[1], 0)
  elseif redis.call('EXISTS', KEYS[3]) == 0 then
    redis.call('SET', KEYS[3], fresh)
  end
end
`

// appendScript assigns offsets and adds entries atomically, in the
// stream's current history. KEYS: seq, log, epoch, the call's key
// (callKey); ARGV: the entries, a fresh epoch, MAXLEN, the call key's
// TTL in ms. A call that ran already (the client sent it again after a
// reply it did not get in time) answers what it answered then and
// appends nothing.
const appendScript = ensureHistory + `
local done = redis.call('GET', KEYS[4])
if done then return tonumber(done) end
ensure(ARGV[#ARGV - 2])
local n = 0
for i = 1, #ARGV - 3 do
  n = redis.call('INCR', KEYS[1])
  redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[#ARGV - 1], n .. '-0', 'd', ARGV[i])
end
redis.call('SET', KEYS[4], n, 'PX', ARGV[#ARGV])
return n`

// uniqueScript is appendScript for entries with message ids: an entry
// whose id the stream took within the TTL is not appended again,
// atomically with the append, so that a message handed again after a
// crash is not appended twice; the id's key holds the offset it took.
// KEYS: seq, log, epoch, the call's key, then the id keys; ARGV: n
// entries, then for each the index of its id key in KEYS (0: none), a
// fresh epoch, MAXLEN, the TTL in ms, the call key's TTL in ms. Returns
// the offset of each entry, new or earlier; a call that ran already
// returns its first answer (as appendScript).
const uniqueScript = ensureHistory + `
local done = redis.call('GET', KEYS[4])
if done then return cjson.decode(done) end
local ttl = ARGV[#ARGV - 1]
ensure(ARGV[#ARGV - 3])
local count = (#ARGV - 4) / 2
local offs = {}
for i = 1, count do
  local k = tonumber(ARGV[count + i])
  local prev = false
  if k > 0 then prev = redis.call('GET', KEYS[k]) end
  if prev then
    offs[i] = tonumber(prev)
  else
    local n = redis.call('INCR', KEYS[1])
    redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[#ARGV - 2], n .. '-0', 'd', ARGV[i])
    if k > 0 then redis.call('SET', KEYS[k], n, 'PX', ttl) end
    offs[i] = n
  end
end
redis.call('SET', KEYS[4], cjson.encode(offs), 'PX', ARGV[#ARGV])
return offs`

// epochScript returns a stream's epoch and newest offset, giving it an
// epoch first when it has none. ARGV: a fresh epoch.
const epochScript = ensureHistory + `
ensure(ARGV[1])
return {redis.call('GET', KEYS[3]), redis.call('GET', KEYS[1])}`

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
	return &Log{closed: closedChan(), cfg: cfg, rdb: client, logger: logger, script: redis.NewScript(appendScript), unique: redis.NewScript(uniqueScript), ensure: redis.NewScript(epochScript),
		mirrors: map[string]*mirror{}, ctx: ctx, cancel: cancel}
}

// keys of a stream: its sequence, its Redis stream and its epoch, in one
// hash slot.
type keys struct{ seq, log, epoch string }

func (l *Log) keys(id string) keys {
	p := l.cfg.Prefix + "{" + id + "}:"
	return keys{seq: p + "seq", log: p + "log", epoch: p + "epoch"}
}

func (k keys) all() []string { return []string{k.seq, k.log, k.epoch} }

// msgID is the key of a message id the stream took (AppendUnique); the
// seq key's prefix puts it in the stream's hash slot.
func (k keys) msgID(id string) string { return strings.TrimSuffix(k.seq, "seq") + "mid:" + id }

// callKey is the key of one append call, in the stream's hash slot: it
// holds the call's answer for callTTL. go-redis sends a command again
// when its reply did not come within the read timeout, though Redis may
// have run it; the key makes the second run answer the first's instead
// of appending the entries twice.
func (k keys) callKey() string { return strings.TrimSuffix(k.seq, "seq") + "call:" + newEpoch() }

// callTTL outlives every resend of a call: go-redis's retries of one
// command end within a few read timeouts.
const callTTL = 10 * time.Second

// newEpoch is a fresh history name: 16 hex digits.
func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Append adds entries; offsets come from Redis.
func (l *Log) Append(ctx context.Context, id string, data [][]byte) (int64, error) {
	if len(data) == 0 {
		return l.Last(ctx, id)
	}
	args := make([]any, 0, len(data)+2)
	for _, d := range data {
		args = append(args, d)
	}
	args = append(args, newEpoch(), l.cfg.MaxEntries, callTTL.Milliseconds())
	k := l.keys(id)
	last, err := l.script.Run(ctx, l.rdb, append(k.all(), k.callKey()), args...).Int64()
	if err != nil {
		return 0, fmt.Errorf("redislog: append: %w", err)
	}
	return last, nil
}

// AppendUnique adds the entries whose message id (ids[i], "" for none)
// the stream did not take within ttl, in one atomic step, and returns the
// offset of every entry: a new one, or the one its id took before (a
// message handed again is not appended twice). The ids live beside the
// stream's keys, in its hash slot, and expire after ttl.
func (l *Log) AppendUnique(ctx context.Context, id string, data [][]byte, ids []string, ttl time.Duration) ([]int64, error) {
	if len(ids) != len(data) {
		return nil, fmt.Errorf("redislog: append: %d ids for %d entries", len(ids), len(data))
	}
	if len(data) == 0 {
		return nil, nil
	}
	k := l.keys(id)
	ks := append(k.all(), k.callKey())
	args := make([]any, 0, 2*len(data)+4)
	for _, d := range data {
		args = append(args, d)
	}
	for _, mid := range ids {
		if mid == "" {
			args = append(args, 0)
			continue
		}
		ks = append(ks, k.msgID(mid))
		args = append(args, len(ks))
	}
	args = append(args, newEpoch(), l.cfg.MaxEntries, max(ttl.Milliseconds(), 1), callTTL.Milliseconds())
	offs, err := l.unique.Run(ctx, l.rdb, ks, args...).Int64Slice()
	if err != nil {
		return nil, fmt.Errorf("redislog: append: %w", err)
	}
	if len(offs) != len(data) {
		return nil, fmt.Errorf("redislog: append: %d offsets for %d entries", len(offs), len(data))
	}
	return offs, nil
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
// are read from Redis, with the epoch in the same MULTI: entries of
// another history than the mirror's reset the mirror to it first.
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
	k := l.keys(id)
	var rng *redis.XMessageSliceCmd
	var ep *redis.StringCmd
	_, err := l.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		rng = p.XRangeN(ctx, k.log, strconv.FormatInt(from, 10)+"-0", "+", int64(max))
		ep = p.Get(ctx, k.epoch)
		return nil
	})
	if err == nil || errors.Is(err, redis.Nil) { // a missing epoch key is Nil
		err = rng.Err()
	}
	if err != nil {
		return nil, fmt.Errorf("redislog: read: %w", err)
	}
	if m != nil {
		if err := l.observe(ctx, id, m, ep.Val()); err != nil {
			return nil, err
		}
	}
	return toEntries(rng.Val())
}

// observe resets mirror m when epoch (read from Redis, "" when missing)
// is not the history it holds. The caller holds no lock of m.
func (l *Log) observe(ctx context.Context, id string, m *mirror, epoch string) error {
	m.mu.RLock()
	same := epoch != "" && epoch == m.epoch
	m.mu.RUnlock()
	if same {
		return nil
	}
	epoch, last, err := l.remoteEpoch(ctx, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.reset(epoch, last)
	m.mu.Unlock()
	return nil
}

// reset makes the mirror hold nothing of history epoch, whose newest
// offset is last, and wakes the waiters; m.mu held. A reset to the
// history the mirror holds already does nothing.
func (m *mirror) reset(epoch string, last int64) bool {
	if epoch == m.epoch {
		return false
	}
	m.epoch, m.entries, m.base, m.last = epoch, nil, last+1, last
	close(m.notify)
	m.notify = make(chan struct{})
	return true
}

// remoteEpoch returns the epoch and newest offset of a stream from Redis,
// giving it an epoch when it has none.
func (l *Log) remoteEpoch(ctx context.Context, id string) (string, int64, error) {
	res, err := l.ensure.Run(ctx, l.rdb, l.keys(id).all(), newEpoch()).Slice()
	if err != nil {
		return "", 0, fmt.Errorf("redislog: epoch: %w", err)
	}
	if len(res) != 2 {
		return "", 0, fmt.Errorf("redislog: epoch: unexpected reply %v", res)
	}
	epoch, _ := res[0].(string)
	seq, _ := res[1].(string)
	last, err := strconv.ParseInt(seq, 10, 64)
	if err != nil || epoch == "" {
		return "", 0, fmt.Errorf("redislog: epoch: unexpected reply %v", res)
	}
	return epoch, last, nil
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
	n, err := l.rdb.Get(ctx, l.keys(id).seq).Int64()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redislog: last: %w", err)
	}
	return n, nil
}

// Delete drops a stream's log: its Redis stream, sequence and epoch, and
// what this node mirrors of it. An append afterwards starts a new
// history (a new epoch, offsets from 1).
func (l *Log) Delete(ctx context.Context, id string) error {
	if err := l.rdb.Del(ctx, l.keys(id).all()...).Err(); err != nil {
		return fmt.Errorf("redislog: delete %s: %w", id, err)
	}
	l.mu.Lock()
	m := l.mirrors[id]
	l.mu.Unlock()
	if m != nil {
		m.mu.Lock()
		m.entries, m.base = nil, m.last+1
		m.mu.Unlock()
	}
	return nil
}

// Wait returns a channel closed when offset from exists, following the
// stream from this node.
func (l *Log) Wait(id string, from int64) <-chan struct{} {
	m := l.follow(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.lastUsed = time.Now()
	if from <= m.last {
		return l.closed // no channel made per wake-up of a pump
	}
	return m.notify
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// follow returns the mirror of a stream, starting its follower.
func (l *Log) follow(id string) *mirror {
	l.mu.Lock()
	defer l.mu.Unlock()
	if m := l.mirrors[id]; m != nil {
		return m
	}
	// an epoch not read here stays "": the follower's first round finds
	// the stream's and resets the mirror to it
	epoch, last, err := l.remoteEpoch(l.ctx, id)
	if err != nil {
		l.logger.Warn("redislog: follow", "stream_id", id, "error", err)
	}
	m := &mirror{epoch: epoch, base: last + 1, last: last, notify: make(chan struct{}), lastUsed: time.Now()}
	l.mirrors[id] = m
	l.wg.Add(1)
	go l.run(id, m)
	return m
}

// run follows a stream with XREAD BLOCK until idle or closed. After every
// XREAD it reads the epoch: entries read before an unchanged epoch belong
// to the history the follower reads; another epoch (or a mirror reset by
// a Read meanwhile) resets the mirror, drops what XREAD returned and goes
// on from the new history's head.
func (l *Log) run(id string, m *mirror) {
	defer l.wg.Done()
	k := l.keys(id)
	m.mu.RLock()
	cur, after := m.epoch, strconv.FormatInt(m.last, 10)+"-0" // the history read and the position in it
	m.mu.RUnlock()
	failing := false // logged once per outage, not per read
	for l.ctx.Err() == nil {
		res, err := l.rdb.XRead(l.ctx, &redis.XReadArgs{Streams: []string{k.log, after}, Count: 1000, Block: time.Second}).Result()
		var epoch string
		if err == nil || errors.Is(err, redis.Nil) {
			epoch, err = l.rdb.Get(l.ctx, k.epoch).Result()
		}
		if err != nil && !errors.Is(err, redis.Nil) {
			if l.ctx.Err() != nil {
				break
			}
			if !failing {
				l.logger.Warn("redislog: follower read failed; retrying every 200 ms", "stream_id", id, "error", err)
				failing = true
			}
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if failing {
			l.logger.Info("redislog: follower reads again", "stream_id", id)
			failing = false
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
		if epoch == "" || epoch != cur || m.epoch != cur {
			m.mu.Unlock()
			// another history: what XREAD returned may belong to either
			epoch, last, err := l.remoteEpoch(l.ctx, id)
			if err != nil {
				if l.ctx.Err() != nil {
					break
				}
				l.logger.Warn("redislog: follower epoch", "stream_id", id, "error", err)
				time.Sleep(200 * time.Millisecond)
				continue
			}
			m.mu.Lock()
			if m.reset(epoch, last) {
				l.logger.Info("redislog: stream history changed", "stream_id", id, "epoch", epoch, "last", last)
			}
			// a reset by a Read left m.last at that Read's head: read on
			// from there
			cur, after = m.epoch, strconv.FormatInt(m.last, 10)+"-0"
			m.mu.Unlock()
			continue
		}
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

// Epoch names a stream's history: the mirror's for a followed stream (so
// that it names the history Read and Last answer from on this node),
// else Redis's. A stream never appended gets the epoch its first append
// will keep.
func (l *Log) Epoch(ctx context.Context, id string) (string, error) {
	l.mu.Lock()
	m := l.mirrors[id]
	l.mu.Unlock()
	if m != nil {
		m.mu.RLock()
		epoch := m.epoch
		m.mu.RUnlock()
		if epoch != "" {
			return epoch, nil
		}
	}
	epoch, _, err := l.remoteEpoch(ctx, id)
	return epoch, err
}
