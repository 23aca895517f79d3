package hub

import (
	"context"
	"errors"
	"time"
)

// Stream kinds and states.
const (
	KindTelemetry = "telemetry"
	KindEvents    = "events"

	StateActive  = "active"
	StatePaused  = "paused"
	StateStopped = "stopped"
)

// ErrStreamNotFound is returned for a stream missing or outside the scope.
var ErrStreamNotFound = errors.New("hub: stream not found")

// StreamInfo is what a sink needs to know about a stream.
type StreamInfo struct {
	ID    string
	Org   string
	Env   string
	Kind  string // telemetry or events
	State string // active, paused, stopped
	// Delivery is websocket or webhook.
	Delivery string
	// WebhookURL is where a webhook stream delivers.
	WebhookURL string
	// BatchEvents groups messages into arrays of up to BatchSize, sent
	// after MaxWait at the latest.
	BatchEvents bool
	BatchSize   int
	MaxWait     time.Duration
	// Compression asks for permessage-deflate.
	Compression bool
	// LagNotice is how many messages a websocket subscriber may fall
	// behind the stream's newest before it is told (a lag notice); 0: the
	// sink's default (a telemetry stream's buffer_size).
	LagNotice int64
	// AtLeastOnce: the client acknowledges offsets; a reconnect without
	// last_offset resumes after the last acknowledged one.
	AtLeastOnce bool
	// Version changes with every configuration change.
	Version int64
}

// Streams looks streams up for sinks. Lookups answer from memory.
type Streams interface {
	// Stream returns a stream of the scope; ok is false when it does not
	// exist there (another organization's stream is missing too).
	Stream(org, env, id string) (StreamInfo, bool)
}

// Versioned is a Streams that tells when any of its streams changed:
// Version moves on whenever one is installed, changed or dropped
// (streams.Registry).
type Versioned interface {
	Version() uint64
}

// StreamCache remembers what Streams.Stream answered for one stream
// and asks again only once the streams' Version has moved; it asks on
// every call of Streams that are not Versioned, and for a stream that
// was not found. A sink that looks its stream up on every wake-up (a
// websocket subscription, an SSE response) keeps one. The zero value is
// ready; not safe for concurrent use.
type StreamCache struct {
	info StreamInfo
	ver  uint64
	ok   bool // info holds a found stream, read at ver
}

// Stream answers as s.Stream(org, env, id) would; a cache serves one
// stream, so org, env and id are the same in every call.
func (c *StreamCache) Stream(s Streams, org, env, id string) (StreamInfo, bool) {
	v, versioned := s.(Versioned)
	var ver uint64
	if versioned {
		// read before the look-up: a change made during it moves the
		// version past the one kept
		if ver = v.Version(); c.ok && ver == c.ver {
			return c.info, true
		}
	}
	info, ok := s.Stream(org, env, id)
	c.info, c.ver, c.ok = info, ver, ok && versioned
	return info, ok
}

// Counter records what sinks did with a stream's messages.
type Counter interface {
	// Count adds n to the named counter of a stream: delivered,
	// dropped, failed, dead_lettered, pending.
	Count(streamID, name string, n int64)
	// Connected adjusts the number of connected clients of a stream.
	Connected(streamID string, delta int)
}

// Entry is one message of a stream's log: the encoded message (JSON of
// the Event or Telemetry message) and its per-stream offset.
type Entry struct {
	Offset int64
	Time   time.Time // when it was appended
	Data   []byte    // JSON of the message; shared, never modify
}

// Log is the per-stream ordered, retained log of matched messages. Its
// offsets are the per-stream monotonic offsets clients resume from.
type Log interface {
	// Append adds messages to a stream and returns the offset of the
	// last one. Offsets start at 1 and have no gaps.
	Append(ctx context.Context, streamID string, data [][]byte) (last int64, err error)
	// Read returns up to max retained entries with Offset >= from, in
	// order. Entries older than retention are gone: the first returned
	// may be later than from.
	Read(ctx context.Context, streamID string, from int64, max int) ([]Entry, error)
	// Last is the newest offset of a stream, 0 when empty.
	Last(ctx context.Context, streamID string) (int64, error)
	// Wait returns a channel closed once the stream has an entry with
	// Offset >= from (at once if it already has one).
	Wait(streamID string, from int64) <-chan struct{}
	// Epoch names the stream's history. It changes only when the
	// stream's offsets start again (a wiped data directory, a flushed
	// Redis): a client holding offsets of another epoch cannot resume
	// from them.
	Epoch(ctx context.Context, streamID string) (string, error)
}
