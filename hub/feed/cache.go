package feed

import (
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

// decoded is one message decoded.
type decoded struct {
	offset int64
	size   int
	sum    uint64
	env    *event.Envelope
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

// decode is the envelope of the message at offset whose bytes are b:
// from the cache when it holds that message, else decoded and kept.
func (c *decodedCache) decode(s *slots, offset int64, b []byte) (*event.Envelope, error) {
	sum := maphash.Bytes(c.seed, b)
	slot := &s[uint64(offset)%cacheSlots]
	if d := slot.Load(); d != nil && d.offset == offset && d.size == len(b) && d.sum == sum {
		return d.env, nil
	}
	env, err := event.Unmarshal(b)
	if err != nil {
		return nil, err
	}
	slot.Store(&decoded{offset: offset, size: len(b), sum: sum, env: env})
	return env, nil
}
