package ws

import (
	"github.com/fleethub/fleethub/hub"

	"time"
)

// Config of a Server. Zero fields take the defaults below, applied in New.
type Config struct {
	QueueBytes     int           // per-connection send queue limit, default 4 MiB
	WriteTimeout   time.Duration // a write must end within WriteTimeout/2 to WriteTimeout of its start (deadlines are renewed once half used), default 10s
	PingInterval   time.Duration // default 20s
	ReadTimeout    time.Duration // default 60s, extended by any frame or pong; keep it above PingInterval
	MaxMessageSize int64         // largest client frame, default 64 KiB
	// LagNotice: a subscription this many messages behind the log head
	// gets a {"type":"lag"} notice (at most one per LagNoticeEvery),
	// unless its stream sets its own (hub.StreamInfo.LagNotice).
	LagNotice int64 // default 1000
	// MaxLag: a subscription further behind than this for longer than
	// LagGrace closes the connection with 4008 "slow consumer".
	MaxLag    int64         // default 100,000
	LagGrace  time.Duration // default 30s
	ReadBatch int           // entries read from the log per pump step, default 256
	// WriteLinger: a frame pushed within this long of the connection's
	// last write, itself within twice this long of the write before, is
	// held with what comes meanwhile until this long after the last
	// write, then written with them (one writev); any other push is
	// written at once (conn.pushed). Default 5 ms; negative: every push
	// is written at once.
	WriteLinger time.Duration
	// Now is the clock WriteLinger reads; default time.Now (tests move
	// it forward).
	Now func() time.Time
	// MaxSubscriptions bounds the streams one connection follows, in the
	// query and through subscribe frames together.
	MaxSubscriptions int // default 100
	// Acks stores acknowledged offsets per (key, stream). Default: an
	// in-memory store of this process (NewMemoryAcks); a cluster passes a
	// shared one.
	Acks Acks
	// Plans gives each key's plan, which caps the websocket connections
	// open at once per key (KeyCaps) and per organization (OrgCapFactor
	// times the key cap of the connecting key's plan). Over a cap the
	// upgrade is refused with 429 too_many_connections. Nil: no caps.
	Plans Plans
	// KeyCaps: connections per key by plan; missing plans take the
	// defaults (starter 100, professional 1,000, enterprise 10,000) and
	// plans without an entry (test, custom) take starter's.
	KeyCaps map[string]int
	// OrgCapFactor: an organization's cap is this many times its key
	// cap, default 10.
	OrgCapFactor int
	// Conns counts connections against the caps. Default: this process
	// only (NewMemoryConns); a cluster passes NewRedisConns.
	Conns Conns
	// Counter counts what each stream delivered. Default: the Streams
	// given to New when it counts too (hub.Counter), else nothing.
	Counter hub.Counter
	// Feed lets a connection follow the organization's feed
	// (feedsub.go). Nil: a feed subscription is refused with
	// not_implemented.
	Feed *FeedSource
	// KeptHijackedConns says that the fasthttp server calling Serve runs
	// with KeepHijackedConns: a connection then runs in a goroutine of its
	// own and fasthttp's hijack handler returns at once, which frees the
	// upgrade request's context (about 4 KiB) for the connection's life;
	// the connection closes its socket itself. Without it the connection
	// runs in the hijack handler, and a server that does not keep
	// hijacked connections closes the socket when it returns.
	KeptHijackedConns bool
}

// Defaults and fixed limits, in one place.
const (
	DefaultQueueBytes       = 4 << 20
	DefaultWriteTimeout     = 10 * time.Second
	DefaultPingInterval     = 20 * time.Second
	DefaultReadTimeout      = 60 * time.Second
	DefaultMaxMessageSize   = 64 << 10
	DefaultLagNotice        = 1000
	DefaultMaxLag           = 100_000
	DefaultLagGrace         = 30 * time.Second
	DefaultReadBatch        = 256
	DefaultWriteLinger      = 5 * time.Millisecond
	DefaultMaxSubscriptions = 100

	// DefaultBatchSize and DefaultMaxWait apply to a stream with
	// BatchEvents set and no (or a non-positive) BatchSize or MaxWait.
	DefaultBatchSize = 100
	DefaultMaxWait   = time.Second

	// stateCheckEvery: a pump looks at its stream's state (paused,
	// stopped) and its lag at least this often, even with no new entries.
	stateCheckEvery = time.Second
	// lagNoticeEvery: at most one lag notice per subscription per period.
	lagNoticeEvery = 5 * time.Second
	// maxInvalidFrames: more malformed client frames than this in a row
	// close the connection with 1008.
	maxInvalidFrames = 10
	// controlSlack: control frames (replies, notices) may take the queue
	// this far past QueueBytes; beyond it the client is a slow consumer.
	controlSlack = 64 << 10
	// closeWait bounds the close handshake: the close frame's write and
	// the wait for the client's close reply.
	closeWait = time.Second
	// acksTimeout bounds one call to the Acks store.
	acksTimeout = 5 * time.Second
	// cacheSlots is the number of entries of a stream whose encoded
	// frames are kept while several subscriptions follow it (power of
	// two): a 128 KiB table plus the frames, per shared stream. It covers
	// the spread of pumps that each run up to a 4 MiB queue ahead (doc.go).
	cacheSlots = 16384
	// readBufferSize is gorilla's read buffer per connection. Client
	// frames are small control frames; gorilla needs room for a control
	// frame's payload (125 bytes) and a header, and reads a larger
	// message past the buffer.
	readBufferSize = 256
)

func (c Config) withDefaults() Config {
	if c.QueueBytes <= 0 {
		c.QueueBytes = DefaultQueueBytes
	}
	if c.WriteLinger == 0 {
		c.WriteLinger = DefaultWriteLinger
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.WriteTimeout <= 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.PingInterval <= 0 {
		c.PingInterval = DefaultPingInterval
	}
	if c.ReadTimeout <= 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.MaxMessageSize <= 0 {
		c.MaxMessageSize = DefaultMaxMessageSize
	}
	if c.LagNotice <= 0 {
		c.LagNotice = DefaultLagNotice
	}
	if c.MaxLag <= 0 {
		c.MaxLag = DefaultMaxLag
	}
	if c.LagGrace <= 0 {
		c.LagGrace = DefaultLagGrace
	}
	if c.ReadBatch <= 0 {
		c.ReadBatch = DefaultReadBatch
	}
	if c.MaxSubscriptions <= 0 {
		c.MaxSubscriptions = DefaultMaxSubscriptions
	}
	if c.Acks == nil {
		c.Acks = NewMemoryAcks()
	}
	caps := DefaultKeyCaps()
	for plan, n := range c.KeyCaps {
		if n > 0 {
			caps[plan] = n
		}
	}
	c.KeyCaps = caps
	if c.OrgCapFactor <= 0 {
		c.OrgCapFactor = DefaultOrgCapFactor
	}
	if c.Conns == nil {
		c.Conns = NewMemoryConns()
	}
	return c
}
