package feed

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"sync"
	"sync/atomic"

	"github.com/fleethub/fleethub/hub/event"
)

// cacheSlots is how many decoded messages a partition keeps: enough for
// the readers that follow the head of the log (live event streams,
// consoles polling after their cursor) and for a page of history being
// read by several readers at once, at about 1 KiB a message.
const cacheSlots = 512

// decodedCache keeps the messages of each partition decoded last, so
// that readers of the same part of the log decode each message once
// instead of once per reader. A slot holds one offset of a partition
// (offset modulo cacheSlots) and the hash of the bytes it was decoded
// from: a hit needs both to agree, so a log that started over (the same
// offsets, other messages) is decoded again, not served from the cache.
// Lookups take no lock; the map of partitions is locked once per
// partition and read.
type decodedCache struct {
	seed  maphash.Seed
	mu    sync.Mutex
	parts map[partKey]*slots
}

type partKey struct {
	topic     string
	partition int
}

type slots [cacheSlots]atomic.Pointer[decoded]

// decoded is one message decoded, and its JSON once a reader asked for
// it.
type decoded struct {
	offset int64
	size   int
	sum    uint64
	env    *event.Envelope
	json   atomic.Pointer[[]byte]
}

func newDecodedCache() *decodedCache {
	return &decodedCache{seed: maphash.MakeSeed(), parts: map[partKey]*slots{}}
}

// of is the slots of one partition.
func (c *decodedCache) of(topic string, partition int) *slots {
	c.mu.Lock()
	defer c.mu.Unlock()
	k := partKey{topic, partition}
	s := c.parts[k]
	if s == nil {
		s = new(slots)
		c.parts[k] = s
	}
	return s
}

// decode is the message at offset whose bytes are b: from the cache
// when it holds that message, else decoded and kept.
func (c *decodedCache) decode(s *slots, offset int64, b []byte) (*decoded, error) {
	sum := maphash.Bytes(c.seed, b)
	slot := &s[uint64(offset)%cacheSlots]
	if d := slot.Load(); d != nil && d.offset == offset && d.size == len(b) && d.sum == sum {
		return d, nil
	}
	env, err := event.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	d := &decoded{offset: offset, size: len(b), sum: sum, env: env}
	slot.Store(d)
	return d, nil
}

// messageJSON is the JSON of the message's event or telemetry message,
// encoded by the first reader that asks and shared with the others.
func (d *decoded) messageJSON() ([]byte, error) {
	if b := d.json.Load(); b != nil {
		return *b, nil
	}
	b, err := encodeMessage(d.env)
	if err != nil {
		return nil, err
	}
	d.json.Store(&b)
	return b, nil
}

// encodeMessage is the JSON of env's event or telemetry message.
func encodeMessage(env *event.Envelope) ([]byte, error) {
	var msg any = env.Event
	if env.Telemetry != nil {
		msg = env.Telemetry
	}
	b, err := json.Marshal(msg)
	if err != nil {
		return nil, fmt.Errorf("feed: encode message: %w", err)
	}
	return b, nil
}
