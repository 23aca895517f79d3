package ws

import (
	"bytes"
	"compress/flate"
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/fleethub/fleethub/hub"
)

// ring keeps the encoded frames of a stream's most recent entries, shared
// by every subscription of that stream on this server: an entry is wrapped
// once per wire format, however many connections follow the stream.
//
// Slot i holds the entry with offset ≡ i (mod cacheSlots) of one epoch
// (the stream's history: after a lost history, offsets start again at 1
// and an old frame of the same offset is another message). Within an
// epoch a slot only ever moves forward: a subscription replaying old
// entries encodes them for itself and does not evict what the
// subscriptions near the head use; a frame of another epoch is replaced.
// Readers take slots without a lock; two pumps racing on one new entry
// may both encode it and one result is kept, which is harmless.
//
// A stream followed by one subscription gains nothing from the cache, so
// a ring has its table (128 KiB of slots, then the frames they hold) only
// while at least two subscriptions on this node share it; it drops the
// table when it is down to one.
type ring struct {
	id     string
	quoted []byte // id as a JSON string
	refs   int    // subscriptions using the ring; Server.ringsMu must be held
	off    bool   // no caching (benchmarks measure the cache's worth)
	table  atomic.Pointer[slots]
	flate  *sync.Pool // the server's *flate.Writer pool
	lot    lot        // the stream's parked pumps (park.go)
}

type slots [cacheSlots]atomic.Pointer[entryFrames]

func newRing(id string, flaters *sync.Pool) *ring {
	q, _ := json.Marshal(id)
	return &ring{id: id, quoted: q, flate: flaters}
}

// get returns the frames of entry e of history epoch, from the cache
// when it holds them.
func (r *ring) get(e hub.Entry, epoch string) *entryFrames {
	t := r.table.Load()
	if t == nil {
		return &entryFrames{off: e.Offset, data: e.Data, ring: r}
	}
	slot := &t[e.Offset&(cacheSlots-1)]
	cur := slot.Load()
	if cur.holds(e, epoch) {
		return cur
	}
	f := &entryFrames{off: e.Offset, epoch: epoch, data: e.Data, ring: r}
	if cur != nil && cur.off > e.Offset && cur.epoch == epoch {
		return f
	}
	if !slot.CompareAndSwap(cur, f) {
		if won := slot.Load(); won.holds(e, epoch) {
			return won
		}
	}
	return f
}

// resize gives the ring its table when shared, or drops it; ringsMu held.
func (r *ring) resize() {
	switch {
	case r.refs >= 2 && !r.off && r.table.Load() == nil:
		r.table.Store(new(slots))
	case r.refs < 2:
		r.table.Store(nil)
	}
}

// entryFrames are the wire forms of one entry, each built on first use.
// The byte slices are immutable once built and are shared by every
// connection's queue.
type entryFrames struct {
	off   int64
	epoch string // of the history the entry belongs to, when cached
	data  []byte
	ring  *ring

	jsonOnce sync.Once
	json     []byte // {"stream_id":…,"offset":…,"message":…}
	mpOnce   sync.Once
	mp       []byte // msgpack map {stream_id, offset, message}
	zOnce    [2]sync.Once
	z        [2][]byte // the wrapper deflated: [0] JSON, [1] msgpack
	// batch is the last batch frame built from this entry on, per
	// encoding: the subscriptions that cut the same batch share it
	batch [2]atomic.Pointer[batchFrame]
}

// batchFrame is the payload of a batch frame: the array of the wrappers
// of its entries, built once, and deflated on first use.
type batchFrame struct {
	last  int64 // offset of its last entry
	n     int   // entries
	data  []byte
	zOnce sync.Once
	z     []byte
}

// deflated returns the batch deflated for permessage-deflate.
func (b *batchFrame) deflated(p *sync.Pool) []byte {
	b.zOnce.Do(func() { b.z = deflate(p, b.data) })
	return b.z
}

var (
	wrapHead   = []byte(`{"stream_id":`)
	wrapOffset = []byte(`,"offset":`)
	wrapMsg    = []byte(`,"message":`)
	jsonNull   = []byte(`null`)
)

// holds reports whether f (nil or not) is the cached form of entry e of
// history epoch.
func (f *entryFrames) holds(e hub.Entry, epoch string) bool {
	return f != nil && f.off == e.Offset && f.epoch == epoch && len(f.data) == len(e.Data)
}

// wrapper returns the wrapper of the entry in the connection's encoding.
func (f *entryFrames) wrapper(bin bool) []byte {
	if bin {
		return f.msgpack()
	}
	return f.jsonWrapper()
}

// jsonWrapper is built by concatenation: the entry's JSON goes in as is.
func (f *entryFrames) jsonWrapper() []byte {
	f.jsonOnce.Do(func() { f.json = f.ring.jsonWrap(f.off, f.data) })
	return f.json
}

// msgpack converts the entry's JSON to msgpack once.
func (f *entryFrames) msgpack() []byte {
	f.mpOnce.Do(func() { f.mp = f.ring.msgpackWrap(f.off, f.data) })
	return f.mp
}

// wrap returns the wrapper of entry e in the connection's encoding,
// built for one subscription: a stream followed once on this node needs
// no entryFrames around it.
func (r *ring) wrap(e hub.Entry, bin bool) []byte {
	if bin {
		return r.msgpackWrap(e.Offset, e.Data)
	}
	return r.jsonWrap(e.Offset, e.Data)
}

// jsonWrap builds {"stream_id":…,"offset":…,"message":…}.
func (r *ring) jsonWrap(off int64, msg []byte) []byte {
	if len(msg) == 0 {
		msg = jsonNull
	}
	q := r.quoted
	b := make([]byte, 0, len(wrapHead)+len(q)+len(wrapOffset)+20+len(wrapMsg)+len(msg)+1)
	b = append(b, wrapHead...)
	b = append(b, q...)
	b = append(b, wrapOffset...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, wrapMsg...)
	b = append(b, msg...)
	return append(b, '}')
}

// msgpackWrap builds the msgpack map {stream_id, offset, message}. An
// entry that is not valid JSON (never expected from the hub) travels as
// a msgpack string.
func (r *ring) msgpackWrap(off int64, data []byte) []byte {
	msg, err := jsonToMsgpack(data)
	if err != nil {
		msg = appendStr(nil, string(data))
	}
	b := make([]byte, 0, len(msg)+len(r.id)+40)
	b = append(b, 0x83) // a map of three
	b = appendStr(b, "stream_id")
	b = appendStr(b, r.id)
	b = appendStr(b, "offset")
	b = appendInt(b, off)
	b = appendStr(b, "message")
	return append(b, msg...)
}

// shared reports whether the ring caches (two or more subscriptions).
func (r *ring) shared() bool { return r.table.Load() != nil }

// deflated returns the wrapper compressed as a permessage-deflate
// message (no context takeover), once for every connection that writes
// it compressed.
func (f *entryFrames) deflated(bin bool) []byte {
	i := 0
	if bin {
		i = 1
	}
	f.zOnce[i].Do(func() { f.z[i] = deflate(f.ring.flate, f.wrapper(bin)) })
	return f.z[i]
}

// batchOf returns the batch frame of the wrappers parts (the entries
// from f's on, the last one at offset last), shared with the other
// subscriptions that cut the same batch.
func (f *entryFrames) batchOf(parts [][]byte, last int64, bin bool) *batchFrame {
	i := 0
	if bin {
		i = 1
	}
	if b := f.batch[i].Load(); b != nil && b.last == last && b.n == len(parts) {
		return b
	}
	b := &batchFrame{last: last, n: len(parts), data: encodeBatch(parts, bin)}
	f.batch[i].Store(b)
	return b
}

// encodeBatch builds a batch frame's payload: a JSON array of the
// wrappers, or a msgpack array.
func encodeBatch(parts [][]byte, bin bool) []byte {
	n := len(parts) + 5
	for _, p := range parts {
		n += len(p)
	}
	b := make([]byte, 0, n)
	if bin {
		b = appendArrayHeader(b, len(parts))
		for _, p := range parts {
			b = append(b, p...)
		}
		return b
	}
	b = append(b, '[')
	for i, p := range parts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, p...)
	}
	return append(b, ']')
}

// deflate compresses a message the way permessage-deflate without
// context takeover sends it: raw DEFLATE at the fastest level, flushed,
// without the flush's final empty block (00 00 ff ff), which the
// receiver adds back (RFC 7692 7.2.1).
//
// It returns nil when the compressor fails (it cannot, into memory at a
// valid level): the message then goes uncompressed, which
// permessage-deflate allows for any message.
func deflate(pool *sync.Pool, msg []byte) []byte {
	var buf bytes.Buffer
	buf.Grow(len(msg)/2 + 64)
	fw, _ := pool.Get().(*flate.Writer) // a type assertion: nil for an empty pool
	if fw == nil {
		var err error
		if fw, err = flate.NewWriter(&buf, flate.BestSpeed); err != nil {
			return nil
		}
	} else {
		fw.Reset(&buf)
	}
	if _, err := fw.Write(msg); err != nil {
		return nil
	}
	if err := fw.Flush(); err != nil {
		return nil
	}
	pool.Put(fw)
	out := buf.Bytes()
	return out[:len(out)-4]
}

// acquireRing returns the ring of a stream, creating it for the first
// subscription; releaseRing drops it with the last.
func (s *Server) acquireRing(id string) *ring {
	s.ringsMu.Lock()
	defer s.ringsMu.Unlock()
	r := s.rings[id]
	if r == nil {
		r = newRing(id, &s.flaters)
		r.off = s.noCache
		r.lot.init(s, id)
		s.rings[id] = r
	}
	r.refs++
	r.resize()
	return r
}

func (s *Server) releaseRing(r *ring) {
	s.ringsMu.Lock()
	defer s.ringsMu.Unlock()
	r.refs--
	r.resize()
	if r.refs == 0 && s.rings[r.id] == r {
		delete(s.rings, r.id)
	}
}
