package order

import (
	"errors"
	"hash/maphash"
	"slices"
	"sync"
	"time"
)

// Defaults of a zero Config.
const (
	DefaultMaxBuffered = 1024
	DefaultMaxWait     = 2 * time.Second
	DefaultIdleTimeout = 5 * time.Minute
	DefaultMaxSources  = 100_000
)

// ErrInvalid is returned by New for negative limits.
var ErrInvalid = errors.New("order: invalid config")

// Config bounds a Sequencer; zero fields take the defaults.
type Config struct {
	// MaxBuffered is the most items buffered per source.
	MaxBuffered int
	// MaxWait is how long an item waits for a gap before it to fill.
	MaxWait time.Duration
	// IdleTimeout is how long a source with nothing buffered is
	// remembered after its last Push.
	IdleTimeout time.Duration
	// MaxSources is the most sources remembered. A Push from a new
	// source beyond it forgets the source pushed to least recently,
	// releasing what it buffered first.
	MaxSources int
}

// Item is a released item.
type Item[T any] struct {
	Source string
	Seq    int64
	Value  T
	// Late is set on an item whose sequence number was below the next
	// expected one: it is released out of order.
	Late bool
	// Skipped counts the sequence numbers given up on just before this
	// item.
	Skipped int64
}

// Sequencer is a reorder buffer per source.
type Sequencer[T any] struct {
	cfg Config

	mu        sync.Mutex
	sources   sourceTable[T]        // mu must be held
	waiting   map[string]*stream[T] // sources with buffered items; mu must be held
	recent    stream[T]             // the ring of sources, most recently pushed first after it; mu must be held
	nextSweep time.Time             // when Expire next looks for idle sources
	found     []*stream[T]          // AppendPushAll's memory; mu must be held
	hashes    []uint64              // AppendPushAll's memory; mu must be held
	touched   uint64                // the sum of what AppendPushAll read ahead, so that the reads are made
	keep      func(T) T             // KeepWith's; nil: values are buffered as pushed
}

type stream[T any] struct {
	name string
	next int64        // next expected sequence number
	buf  []pending[T] // sorted by seq (copies of one seq in push order), every seq >= next
	last time.Time    // last Push
	// newer and older link the sources in the order of their last Push
	// (Sequencer.recent); a stream's own fields, so that a Push touches
	// no other record of its source
	newer, older *stream[T]
	gone         bool   // forgotten
	hash         uint64 // of name, in Sequencer.sources
	waiting      bool   // in Sequencer.waiting
}

type pending[T any] struct {
	seq int64
	v   T
	at  time.Time // when it was pushed
}

// New returns a Sequencer; zero fields of cfg take the defaults.
func New[T any](cfg Config) (*Sequencer[T], error) {
	if cfg.MaxBuffered < 0 || cfg.MaxWait < 0 || cfg.IdleTimeout < 0 || cfg.MaxSources < 0 {
		return nil, ErrInvalid
	}
	if cfg.MaxBuffered == 0 {
		cfg.MaxBuffered = DefaultMaxBuffered
	}
	if cfg.MaxWait == 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.MaxSources == 0 {
		cfg.MaxSources = DefaultMaxSources
	}
	s := &Sequencer[T]{cfg: cfg, sources: newSourceTable[T](), waiting: make(map[string]*stream[T])}
	s.recent.newer, s.recent.older = &s.recent, &s.recent
	return s, nil
}

// KeepWith has the Sequencer buffer keep(v) instead of each value v it
// buffers (an item pushed ahead of a gap); an item released by its own
// push is returned as pushed. A caller whose values live in memory it
// reuses copies them there. Call it before the first push.
func (s *Sequencer[T]) KeepWith(keep func(T) T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.keep = keep
}

// front puts st first in the order of pushes (it may be in it already);
// s.mu must be held.
func (s *Sequencer[T]) front(st *stream[T]) {
	if s.recent.older == st {
		return
	}
	if st.older != nil {
		st.unlink()
	}
	st.newer, st.older = &s.recent, s.recent.older
	s.recent.older.newer = st
	s.recent.older = st
}

// unlink takes st out of the order of pushes.
func (st *stream[T]) unlink() {
	st.newer.older, st.older.newer = st.older, st.newer
	st.newer, st.older = nil, nil
}

// Push adds an item from source and returns the items it releases, in
// order: the item itself if it is the next expected one (or late), with
// the buffered items that follow it. A Push from a new source beyond
// MaxSources first releases what the least recently pushed source
// buffered and forgets it.
func (s *Sequencer[T]) Push(source string, seq int64, v T, now time.Time) []Item[T] {
	return s.AppendPush(nil, source, seq, v, now)
}

// AppendPush is Push appending the items released to dst: a caller that
// reuses dst allocates nothing for an item released at once.
func (s *Sequencer[T]) AppendPush(dst []Item[T], source string, seq int64, v T, now time.Time) []Item[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.sources.hash(source)
	return s.push(dst, s.sources.get(source, h), h, source, seq, v, now)
}

// Pushed is an item for AppendPushAll.
type Pushed[T any] struct {
	Source string
	Seq    int64
	Value  T
}

// AppendPushAll pushes items in turn, as Push would each, under one lock,
// appending the items they release to dst; it appends to ends, for each
// item, the length of dst once that item's push was done, so that what
// items[i] released is dst[ends[i-1]:ends[i]] (from the length of dst as
// passed for the first). It looks every source up and reads its record
// before it pushes any item: for a batch of items from many sources those
// reads, most of them cache misses, overlap instead of each waiting for
// the one before.
func (s *Sequencer[T]) AppendPushAll(dst []Item[T], ends []int, items []Pushed[T], now time.Time) ([]Item[T], []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	hs := s.hashes[:0]
	for _, it := range items {
		hs = append(hs, s.sources.hash(it.Source))
	}
	s.touched += s.sources.touch(hs)
	sts := s.found[:0]
	for i, it := range items {
		sts = append(sts, s.sources.get(it.Source, hs[i]))
	}
	var x int64
	for _, st := range sts {
		if st != nil {
			x += st.next + st.newer.next + st.older.next // the records front touches
		}
	}
	s.touched += uint64(x)
	out := dst
	for i, it := range items {
		st := sts[i]
		if st == nil || st.gone {
			// new, or forgotten by a push before: looked up again
			st = s.sources.get(it.Source, hs[i])
		}
		out = s.push(out, st, hs[i], it.Source, it.Seq, it.Value, now)
		ends = append(ends, len(out))
	}
	clear(sts)
	s.found, s.hashes = sts[:0], hs[:0]
	return out, ends
}

// push is AppendPush with s.mu held; st is source's record, nil for a
// source not remembered, and h the hash of its name.
func (s *Sequencer[T]) push(out []Item[T], st *stream[T], h uint64, source string, seq int64, v T, now time.Time) []Item[T] {
	if st == nil {
		if s.sources.n >= s.cfg.MaxSources {
			out = s.evict(out)
		}
		st = &stream[T]{name: source, next: seq, hash: h}
		s.sources.put(st)
	}
	s.front(st)
	st.last = now
	switch {
	case seq < st.next:
		return append(out, Item[T]{Source: source, Seq: seq, Value: v, Late: true})
	case seq == st.next:
		st.next++
		out = append(out, Item[T]{Source: source, Seq: seq, Value: v})
		return s.drain(source, st, out)
	}
	// after every buffered copy of seq: copies leave in push order
	i, _ := slices.BinarySearchFunc(st.buf, seq+1, func(p pending[T], seq int64) int {
		switch {
		case p.seq < seq:
			return -1
		case p.seq > seq:
			return 1
		}
		return 0
	})
	if s.keep != nil {
		v = s.keep(v)
	}
	st.buf = slices.Insert(st.buf, i, pending[T]{seq: seq, v: v, at: now})
	if !st.waiting {
		s.waiting[source], st.waiting = st, true
	}
	for len(st.buf) > s.cfg.MaxBuffered {
		out = s.releaseThrough(source, st, st.buf[0].seq, out)
	}
	return out
}

// Expire gives up on gaps that held an item for MaxWait and returns the
// items released, in order per source and by source name. It also forgets
// sources idle for IdleTimeout.
func (s *Sequencer[T]) Expire(now time.Time) []Item[T] {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Item[T]
	if len(s.waiting) > 0 {
		cutoff := now.Add(-s.cfg.MaxWait)
		names := make([]string, 0, len(s.waiting))
		for name := range s.waiting {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			st := s.waiting[name]
			// The newest item that has waited MaxWait; everything before
			// it goes too.
			through, expired := int64(0), false
			for _, p := range st.buf {
				if !p.at.After(cutoff) {
					through, expired = p.seq, true
				}
			}
			if expired {
				out = s.releaseThrough(name, st, through, out)
			}
		}
	}
	if !now.Before(s.nextSweep) {
		var idle []*stream[T]
		s.sources.each(func(st *stream[T]) {
			if len(st.buf) == 0 && now.Sub(st.last) >= s.cfg.IdleTimeout {
				idle = append(idle, st)
			}
		})
		for _, st := range idle {
			st.unlink()
			st.gone = true
			s.sources.del(st)
		}
		s.nextSweep = now.Add(s.cfg.IdleTimeout / 4)
	}
	return out
}

// Buffered returns the number of items held.
func (s *Sequencer[T]) Buffered() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, st := range s.waiting {
		n += len(st.buf)
	}
	return n
}

// Sources returns the number of sources remembered.
func (s *Sequencer[T]) Sources() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sources.n
}

// evict forgets the least recently pushed source, releasing what it
// buffered; s.mu must be held.
func (s *Sequencer[T]) evict(out []Item[T]) []Item[T] {
	st := s.recent.newer // the oldest
	if st == &s.recent {
		return out
	}
	if len(st.buf) > 0 {
		out = s.releaseThrough(st.name, st, st.buf[len(st.buf)-1].seq, out)
	}
	st.unlink()
	st.gone = true
	s.sources.del(st)
	if st.waiting {
		delete(s.waiting, st.name)
		st.waiting = false
	}
	return out
}

// releaseThrough releases every buffered item with seq <= through,
// skipping the gaps, then the items that follow without a gap; s.mu must
// be held.
func (s *Sequencer[T]) releaseThrough(source string, st *stream[T], through int64, out []Item[T]) []Item[T] {
	n := 0
	for n < len(st.buf) && st.buf[n].seq <= through {
		p := &st.buf[n]
		it := Item[T]{Source: source, Seq: p.seq, Value: p.v}
		if p.seq >= st.next { // not a copy of the one just released
			it.Skipped = p.seq - st.next
			st.next = p.seq + 1
		}
		out = append(out, it)
		n++
	}
	st.buf = shift(st.buf, n)
	return s.drain(source, st, out)
}

// drain releases the buffered items that follow st.next without a gap,
// with the copies of each; s.mu must be held.
func (s *Sequencer[T]) drain(source string, st *stream[T], out []Item[T]) []Item[T] {
	n := 0
	for n < len(st.buf) && st.buf[n].seq <= st.next {
		if st.buf[n].seq == st.next {
			st.next++
		}
		out = append(out, Item[T]{Source: source, Seq: st.buf[n].seq, Value: st.buf[n].v})
		n++
	}
	st.buf = shift(st.buf, n)
	if len(st.buf) == 0 && st.waiting {
		delete(s.waiting, source)
		st.waiting = false
	}
	return out
}

// shift drops the first n items, zeroing them so released values are not
// kept alive.
func shift[T any](buf []pending[T], n int) []pending[T] {
	if n == 0 {
		return buf
	}
	m := copy(buf, buf[n:])
	clear(buf[m:])
	return buf[:m]
}

// sourceTable finds a source's record by name: an open-addressing table
// (linear probing, backward-shift deletion) of the 64-bit hash of each
// name beside its record, at most half full, names compared on a hash
// match. Unlike a map of strings, a look-up reads one line of the table
// and the record, not also the key's bytes elsewhere, and the slots of a
// run of look-ups can be read ahead (touch).
type sourceTable[T any] struct {
	seed  maphash.Seed
	slots []sourceSlot[T] // a power of two of them
	n     int
}

type sourceSlot[T any] struct {
	h  uint64
	st *stream[T] // nil: empty
}

const minSourceSlots = 64

func newSourceTable[T any]() sourceTable[T] {
	return sourceTable[T]{seed: maphash.MakeSeed(), slots: make([]sourceSlot[T], minSourceSlots)}
}

func (t *sourceTable[T]) hash(name string) uint64 { return maphash.String(t.seed, name) }

// touch reads the home slot of each hash and returns their sum.
func (t *sourceTable[T]) touch(hs []uint64) uint64 {
	mask := uint64(len(t.slots) - 1)
	var x uint64
	for _, h := range hs {
		x += t.slots[h&mask].h
	}
	return x
}

// get returns the record of name, whose hash is h; nil if none.
func (t *sourceTable[T]) get(name string, h uint64) *stream[T] {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; t.slots[i].st != nil; i = (i + 1) & mask {
		if t.slots[i].h == h && t.slots[i].st.name == name {
			return t.slots[i].st
		}
	}
	return nil
}

// put adds st, whose name is not in t.
func (t *sourceTable[T]) put(st *stream[T]) {
	if (t.n+1)*2 > len(t.slots) {
		old := t.slots
		t.slots = make([]sourceSlot[T], 2*len(old))
		for _, s := range old {
			if s.st != nil {
				t.place(s)
			}
		}
	}
	t.place(sourceSlot[T]{h: st.hash, st: st})
	t.n++
}

func (t *sourceTable[T]) place(s sourceSlot[T]) {
	mask := uint64(len(t.slots) - 1)
	i := s.h & mask
	for t.slots[i].st != nil {
		i = (i + 1) & mask
	}
	t.slots[i] = s
}

// del removes st, moving back each later slot of its cluster whose home
// is not between (backward shift).
func (t *sourceTable[T]) del(st *stream[T]) {
	mask := uint64(len(t.slots) - 1)
	i := st.hash & mask
	for ; t.slots[i].st != st; i = (i + 1) & mask {
		if t.slots[i].st == nil {
			return
		}
	}
	for j := (i + 1) & mask; t.slots[j].st != nil; j = (j + 1) & mask {
		home := t.slots[j].h & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = sourceSlot[T]{}
	t.n--
}

// each calls f with every record.
func (t *sourceTable[T]) each(f func(*stream[T])) {
	for _, s := range t.slots {
		if s.st != nil {
			f(s.st)
		}
	}
}
