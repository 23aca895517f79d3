package ws

import (
	"encoding/json"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/fasthttp/websocket"

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
}

type slots [cacheSlots]atomic.Pointer[entryFrames]

func newRing(id string) *ring {
	q, _ := json.Marshal(id)
	return &ring{id: id, quoted: q}
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

// shared reports whether the ring caches.
func (r *ring) shared() bool { return r.table.Load() != nil }

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
	pmOnce   [2]sync.Once
	pm       [2]*websocket.PreparedMessage // [0] text JSON, [1] binary msgpack
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
	f.jsonOnce.Do(func() {
		msg := f.data
		if len(msg) == 0 {
			msg = jsonNull
		}
		q := f.ring.quoted
		b := make([]byte, 0, len(wrapHead)+len(q)+len(wrapOffset)+20+len(wrapMsg)+len(msg)+1)
		b = append(b, wrapHead...)
		b = append(b, q...)
		b = append(b, wrapOffset...)
		b = strconv.AppendInt(b, f.off, 10)
		b = append(b, wrapMsg...)
		b = append(b, msg...)
		f.json = append(b, '}')
	})
	return f.json
}

// msgpack converts the entry's JSON to msgpack once. An entry that is not
// valid JSON (never expected from the hub) travels as a msgpack string.
func (f *entryFrames) msgpack() []byte {
	f.mpOnce.Do(func() {
		msg, err := jsonToMsgpack(f.data)
		if err != nil {
			msg = appendStr(nil, string(f.data))
		}
		b := make([]byte, 0, len(msg)+len(f.ring.id)+40)
		b = append(b, 0x83) // a map of three
		b = appendStr(b, "stream_id")
		b = appendStr(b, f.ring.id)
		b = appendStr(b, "offset")
		b = appendInt(b, f.off)
		b = appendStr(b, "message")
		f.mp = append(b, msg...)
	})
	return f.mp
}

// prepared returns the wrapper as a websocket.PreparedMessage, which
// compresses it once for every connection that writes it compressed.
func (f *entryFrames) prepared(bin bool) *websocket.PreparedMessage {
	i, typ := 0, websocket.TextMessage
	if bin {
		i, typ = 1, websocket.BinaryMessage
	}
	f.pmOnce[i].Do(func() {
		pm, err := websocket.NewPreparedMessage(typ, f.wrapper(bin))
		if err != nil {
			// it fails only for a message type other than text and binary
			panic("ws: preparing a frame: " + err.Error())
		}
		f.pm[i] = pm
	})
	return f.pm[i]
}

// acquireRing returns the ring of a stream, creating it for the first
// subscription; releaseRing drops it with the last.
func (s *Server) acquireRing(id string) *ring {
	s.ringsMu.Lock()
	defer s.ringsMu.Unlock()
	r := s.rings[id]
	if r == nil {
		r = newRing(id)
		r.off = s.noCache
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
