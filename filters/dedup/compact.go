package dedup

import (
	"context"
	"hash/maphash"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Compact is an in-memory window of one node that keeps a 128-bit hash of
// each id instead of the id: about 51 bytes per id at ten million (see
// the package documentation), so that ten million ids fit in 487 MiB. It is
// safe for concurrent use.
//
// Recorded ids sit in a ring in the order they were recorded, each with
// its time; a table of buckets maps a hash to its place in the ring. A
// bucket is one cache line: seven slots and the count of the ids that
// went past it because it was full (an id is stored in the first bucket
// from its home with a free slot, and a look-up goes on past a bucket
// only while that count is not zero). The table is at most half full,
// so nearly every look-up, insertion and eviction reads one line, and
// compares the slots of a bucket in a loop of fixed length rather than
// one whose end depends on the data. The oldest id leaves
// first: once the window holds size ids, or once its TTL has passed. Both
// the ring and the table grow as ids come: a window that holds few ids
// costs little, whatever its size. Claims sit in a map of their own.
type Compact struct {
	ttl   int64 // ns
	lease int64 // ns
	size  uint64
	now   func() time.Time
	s1    maphash.Seed
	s2    maphash.Seed

	mu         sync.Mutex  // guards everything below
	base       time.Time   // times are ns since base
	chunks     [][]centry  // the ring: position p is chunks[p>>chunkBits][p&chunkMask]
	head, tail uint64      // ids recorded, ever, before the oldest and the newest-plus-one: the ring holds [head, tail)
	slots      []uint64    // the table, buckets of bucketSlots: slot 0 empty, else h.b's high 32 bits | position+1; the last of a bucket its overflow count
	mem        *slotBox    // the table's memory when it is not the heap's
	used       int         // slots in use
	empty      atomic.Bool // set while used is 0 (Has answers without the lock); cleared on every insert
	claims     claimTable
	sweepAt    int
	touched    uint64 // the sum of the slots touch read, so that the reads are made
	hbuf       []hkey // RecordAll's hashes, kept between calls
}

// hkey is the 128-bit hash of an id.
type hkey struct{ a, b uint64 }

// centry is one place of the ring.
type centry struct {
	h hkey
	t int64 // when the id was recorded, ns since base; dead: forgotten or recorded again later
}

const (
	chunkBits = 13 // 8,192 places (192 KiB) per chunk of the ring
	chunkSize = 1 << chunkBits
	chunkMask = chunkSize - 1
	dead      = math.MinInt64
	// bucketSlots is a bucket's slots: one cache line of them, the
	// last the bucket's overflow count
	bucketSlots = 8
	bucketIDs   = bucketSlots - 1
	minBuckets  = 128
	tagMask     = ^uint64(math.MaxUint32) // a slot's hash bits
	minSweep    = 1024
	// maxKeptHashes bounds the hashes RecordAll keeps for its next call
	maxKeptHashes = 8192
	// maxCompact keeps a position and a marker in 32 bits.
	maxCompact = math.MaxUint32 - 1
)

var (
	_ Window   = (*Compact)(nil)
	_ Recorder = (*Compact)(nil)
)

// Recorder is a window that can record ids as seen at a past time, as
// pipeline.Warm does when it rebuilds a window from a log: each id then
// expires when it would have, had the window never been rebuilt.
type Recorder interface {
	// RecordAt records ids as seen at time at, unless already recorded
	// (an id keeps its earlier time) or at is older than the TTL. A time
	// later than now counts as now.
	RecordAt(ctx context.Context, at time.Time, ids ...string) error
}

// NewCompact returns a window remembering up to size ids for ttl each;
// zero or negative values mean DefaultSize and DefaultTTL, and size is at
// most 4,294,967,294. Claims last DefaultLease. Memory is allocated as ids
// are recorded, not up front.
func NewCompact(size int, ttl time.Duration) *Compact {
	if size <= 0 {
		size = DefaultSize
	}
	if size > maxCompact {
		size = maxCompact
	}
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	c := &Compact{ttl: int64(ttl), lease: int64(DefaultLease), size: uint64(size), now: time.Now,
		s1: maphash.MakeSeed(), s2: maphash.MakeSeed(), base: time.Now(), sweepAt: minSweep}
	c.empty.Store(true)
	c.mem = &slotBox{}
	runtime.AddCleanup(c, func(b *slotBox) { b.m.free() }, c.mem)
	return c
}

// mappedBytes is the memory of the table when it is mapped on its own,
// outside the Go heap (0 when it is on the heap).
func (c *Compact) mappedBytes() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return uint64(c.mem.m.size())
}

// slotBox holds the memory of a window's table for the cleanup that
// frees it when the window is collected.
type slotBox struct{ m *slotMem }

func (c *Compact) hash(id string) hkey {
	return hkey{maphash.String(c.s1, id), maphash.String(c.s2, id)}
}

// hashes appends the hashes of ids to hs, which grows at most once.
func (c *Compact) hashes(hs []hkey, ids []string) []hkey {
	hs = slices.Grow(hs, len(ids))
	for _, id := range ids {
		hs = append(hs, c.hash(id))
	}
	return hs
}

// clock is now in ns since base; mu must be held.
func (c *Compact) clock() int64 { return int64(c.now().Sub(c.base)) }

// Seen records id and reports whether it was already recorded and not
// expired, or is claimed. It does not block; ctx is unused.
func (c *Compact) Seen(_ context.Context, id string) (bool, error) {
	if id == "" {
		return false, ErrEmptyID
	}
	h := c.hash(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.expire(now)
	if c.state(h, now) != Unseen {
		return true, nil
	}
	c.push(h, now)
	return false, nil
}

// Has reports whether id is recorded and not expired, recording
// nothing. An empty window answers without a lock.
func (c *Compact) Has(id string) bool {
	if id == "" || c.empty.Load() {
		return false
	}
	h := c.hash(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.expire(now)
	if c.used == 0 {
		c.empty.Store(true)
		return false
	}
	return c.state(h, now) == Duplicate
}

// HasEach appends to found the index i of each non-empty ids[i] for
// which Has(prefix+ids[i]) would report true, and returns it. It looks
// them all up under one lock and one look at the clock, the table's
// places of all read first (see ClaimAll), and hashes prefix and id
// without joining them into a string. An empty window answers without a
// lock.
func (c *Compact) HasEach(prefix string, ids []string, found []int) []int {
	if len(ids) == 0 || c.empty.Load() {
		return found
	}
	var buf [64]hkey
	var kbuf [128]byte
	hs, key := slices.Grow(buf[:0], len(ids)), kbuf[:0]
	for _, id := range ids {
		key = append(append(key[:0], prefix...), id...)
		// maphash.Bytes of the bytes is maphash.String of the string
		hs = append(hs, hkey{maphash.Bytes(c.s1, key), maphash.Bytes(c.s2, key)})
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.expire(now)
	if c.used == 0 {
		c.empty.Store(true)
		return found
	}
	c.touch(hs)
	for i, h := range hs {
		if ids[i] != "" && c.state(h, now) == Duplicate {
			found = append(found, i)
		}
	}
	return found
}

// Claim reserves id unless it is recorded or claimed. It does not block;
// ctx is unused.
func (c *Compact) Claim(_ context.Context, id string) (State, error) {
	if id == "" {
		return Unseen, ErrEmptyID
	}
	h := c.hash(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.claim(h, c.clock()), nil
}

// ClaimAll implements Batcher: one lock and one look at the clock
// for all ids, and the table's places for them are read together first,
// so that their cache misses overlap instead of following one another.
func (c *Compact) ClaimAll(_ context.Context, ids []string, states []State) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	var buf [64]hkey
	hs := c.hashes(buf[:0], ids)
	states = states[:len(hs)]
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touch(hs)
	now := c.clock()
	for i, h := range hs {
		states[i] = c.claim(h, now)
	}
	return nil
}

// RecordAll implements Private: Seen for each id under one lock and one
// look at the clock, the table's places of the ids, and of those a full
// window evicts for them, read together first (see ClaimAll). An id
// recorded this way is in the window at once, with its TTL counted from
// now.
func (c *Compact) RecordAll(_ context.Context, ids []string, states []State) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	// hashed under the lock into memory the window keeps: a batch of
	// hundreds would otherwise allocate its hashes in every call
	hs := c.hashes(c.hbuf[:0], ids)
	if cap(hs) <= maxKeptHashes {
		c.hbuf = hs[:0]
	}
	states = states[:len(hs)]
	now := c.clock()
	c.expire(now)
	c.touch(hs)
	c.touchEvictions(len(hs))
	for i, h := range hs {
		if s := c.state(h, now); s != Unseen {
			states[i] = s
			continue
		}
		c.push(h, now)
		states[i] = Unseen
	}
	return nil
}

// claim reserves h unless it is recorded or claimed; mu must be held.
func (c *Compact) claim(h hkey, now int64) State {
	if s := c.state(h, now); s != Unseen {
		return s
	}
	if c.claims.n >= c.sweepAt {
		// Claims outlive their lease only when their holder never
		// finished them: drop those before growing.
		c.claims.sweep(now)
		c.sweepAt = max(minSweep, 2*c.claims.n)
	}
	c.claims.put(h, now+c.lease)
	return Unseen
}

// Done records ids as seen and drops their claims. An id recorded
// already is recorded again: its TTL starts anew.
func (c *Compact) Done(_ context.Context, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
	}
	var buf [64]hkey
	hs := c.hashes(buf[:0], ids)
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	c.expire(now)
	c.touch(hs)
	c.touchEvictions(len(hs))
	for _, h := range hs {
		c.claims.del(h)
		c.record(h, now)
	}
	return nil
}

// RecordAt implements Recorder.
func (c *Compact) RecordAt(_ context.Context, at time.Time, ids ...string) error {
	for _, id := range ids {
		if id == "" {
			return ErrEmptyID
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.clock()
	t := min(int64(at.Sub(c.base)), now)
	if t+c.ttl <= now {
		return nil
	}
	c.expire(now)
	for _, id := range ids {
		h := c.hash(id)
		c.claims.del(h)
		if _, pos, ok := c.find(h); ok && c.entry(pos).t+c.ttl > now {
			continue
		}
		c.remove(h)
		c.push(h, t)
	}
	return nil
}

// Forget removes id's record and claim, so that its next Seen reports
// false.
func (c *Compact) Forget(_ context.Context, id string) error {
	if id == "" {
		return ErrEmptyID
	}
	h := c.hash(id)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.claims.del(h)
	c.remove(h)
	return nil
}

// ForgetAll implements Batcher, under one lock.
func (c *Compact) ForgetAll(_ context.Context, ids ...string) error {
	if err := checkIDs(ids); err != nil {
		return err
	}
	var buf [64]hkey
	hs := c.hashes(buf[:0], ids)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.touch(hs)
	for _, h := range hs {
		c.claims.del(h)
		c.remove(h)
	}
	return nil
}

// Len returns the number of ids recorded, expired ones not yet removed
// included (claims not included).
func (c *Compact) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used
}

// state reports what h is now; mu must be held.
func (c *Compact) state(h hkey, now int64) State {
	if i, pos, ok := c.find(h); ok {
		if c.entry(pos).t+c.ttl > now {
			return Duplicate
		}
		// Expired, behind a younger head (RecordAt): gone now.
		c.entry(pos).t = dead
		c.unslot(i, h.b)
	}
	if end, ok := c.claims.get(h); ok && now < end {
		return InFlight
	}
	return Unseen
}

// entry returns the ring's place pos; mu must be held.
func (c *Compact) entry(pos uint32) *centry {
	return &c.chunks[pos>>chunkBits][pos&chunkMask]
}

// find looks h up in the table: its slot and ring position.
func (c *Compact) find(h hkey) (slot int, pos uint32, ok bool) {
	if len(c.slots) == 0 {
		return 0, 0, false
	}
	mask := c.bucketMask()
	tag := h.b & tagMask
	for b := h.b & mask; ; b = (b + 1) & mask {
		bk := c.bucket(b)
		for j := range bucketIDs {
			if s := bk[j]; s&tagMask == tag && s != 0 {
				p := uint32(s) - 1
				if c.entry(p).h == h {
					return int(b)*bucketSlots + j, p, true
				}
			}
		}
		if bk[bucketIDs] == 0 {
			return 0, 0, false
		}
	}
}

// bucket returns bucket b of the table; mu must be held.
func (c *Compact) bucket(b uint64) []uint64 {
	i := b * bucketSlots
	return c.slots[i : i+bucketSlots : i+bucketSlots]
}

// bucketMask is the number of buckets less one; mu must be held.
func (c *Compact) bucketMask() uint64 { return uint64(len(c.slots))/bucketSlots - 1 }

// home is the bucket of h (whose high 32 bits are a slot's) in a table
// of mask+1 buckets.
func home(hb, mask uint64) uint64 { return hb & mask }

// remove forgets h's record, if any; mu must be held.
func (c *Compact) remove(h hkey) {
	if i, pos, ok := c.find(h); ok {
		c.entry(pos).t = dead
		c.unslot(i, h.b)
	}
}

// push appends h, recorded at t, to the ring, evicting the oldest id when
// the ring is full; mu must be held.
func (c *Compact) push(h hkey, t int64) {
	if c.tail-c.head == c.size {
		c.evict()
	}
	if c.full() {
		c.grow()
	}
	c.insert(h.b&tagMask|uint64(c.place1(h, t)+1), h.b)
	c.used++
	c.empty.Store(false)
}

// record appends h, recorded at t, to the ring, as remove then push
// would: its earlier record, if any, is dropped and its slot pointed at
// the new place; else a slot is taken for it. mu must be held.
func (c *Compact) record(h hkey, t int64) {
	if c.tail-c.head == c.size {
		c.evict()
	}
	if c.full() {
		c.grow()
	}
	if i, old, ok := c.find(h); ok {
		c.entry(old).t = dead
		c.slots[i] = h.b&tagMask | uint64(c.place1(h, t)+1)
		return
	}
	c.insert(h.b&tagMask|uint64(c.place1(h, t)+1), h.b)
	c.used++
	c.empty.Store(false)
}

// place1 puts h, recorded at t, at the ring's tail, which has room, and
// returns its position; the table is left to the caller. mu must be
// held.
func (c *Compact) place1(h hkey, t int64) uint32 {
	pos := c.tail % c.size
	ci := pos >> chunkBits
	if ci >= uint64(len(c.chunks)) {
		c.chunks = append(c.chunks, make([][]centry, ci+1-uint64(len(c.chunks)))...)
	}
	if c.chunks[ci] == nil {
		c.chunks[ci] = make([]centry, chunkSize)
	}
	c.chunks[ci][pos&chunkMask] = centry{h: h, t: t}
	c.tail++
	return uint32(pos)
}

// expire evicts the ids whose TTL has passed from the head of the ring,
// a run of them at a time: the table's places of a run are read together
// before any is dropped; mu must be held.
func (c *Compact) expire(now int64) {
	for c.head < c.tail {
		n := uint64(0)
		for ; n < touchRun && c.head+n < c.tail; n++ {
			if e := c.entry(uint32((c.head + n) % c.size)); e.t != dead && e.t+c.ttl > now {
				break
			}
		}
		c.touchRing(n)
		for range n {
			c.evict()
		}
		if n < touchRun {
			return
		}
	}
}

// touchRun is how many places of the ring expire reads ahead.
const touchRun = 256

// touch reads the home slot of each hash in the table. A look-up in a
// large table is a cache miss (and, past the TLB's reach, a page walk);
// reads that do not depend on one another overlap, so reading the slots
// of a batch first, in a loop that does nothing else, costs about one
// miss for the lot instead of one each in the work that follows. mu must
// be held.
func (c *Compact) touch(hs []hkey) {
	if len(c.slots) == 0 {
		return
	}
	mask := c.bucketMask()
	var x uint64
	for _, h := range hs {
		x += c.slots[home(h.b, mask)*bucketSlots]
	}
	c.touched += x
}

// touchRing reads the home slots of the n ids at the head of the ring,
// those evict drops next; mu must be held.
func (c *Compact) touchRing(n uint64) {
	if len(c.slots) == 0 {
		return
	}
	mask := c.bucketMask()
	var x uint64
	for j := range min(n, c.tail-c.head) {
		if e := c.entry(uint32((c.head + j) % c.size)); e.t != dead {
			x += c.slots[home(e.h.b, mask)*bucketSlots]
		}
	}
	c.touched += x
}

// touchEvictions reads the home slots of the ids that pushing n more
// would evict from a full ring; mu must be held.
func (c *Compact) touchEvictions(n int) {
	if held := c.tail - c.head; held+uint64(n) > c.size {
		c.touchRing(held + uint64(n) - c.size)
	}
}

// evict drops the oldest id of the ring and frees a chunk it leaves
// empty; mu must be held.
func (c *Compact) evict() {
	pos := uint32(c.head % c.size)
	if e := c.entry(pos); e.t != dead {
		c.unslot(c.slotOf(e.h.b, pos), e.h.b)
	}
	c.head++
	next := c.head % c.size
	ci := uint64(pos >> chunkBits)
	if next>>chunkBits != ci && (c.tail%c.size)>>chunkBits != ci {
		c.chunks[ci] = nil // every place in it is behind the head
	}
}

// slotOf returns the slot of the id at ring position pos, whose hash
// has hb as its second half: the first bucket from its home that holds
// pos (positions are unique in the table); mu must be held.
func (c *Compact) slotOf(hb uint64, pos uint32) int {
	mask := c.bucketMask()
	for b := home(hb, mask); ; b = (b + 1) & mask {
		bk := c.bucket(b)
		for j := range bucketIDs {
			if uint32(bk[j]) == pos+1 {
				return int(b)*bucketSlots + j
			}
		}
	}
}

// full reports whether one more id would fill the table past half its
// slots (four ids a bucket of seven on average, as many bytes per id as
// a table of single slots at most half full): a bucket then overflows
// for about 5 % of the ids; mu must be held.
func (c *Compact) full() bool { return (c.used+1)*2 > len(c.slots) }

// insert puts slot value s, of an id whose hash has hb as its second
// half, in the first bucket from its home with a free slot, counting it
// in the overflow count of each full bucket it passes; mu must be held.
func (c *Compact) insert(s, hb uint64) {
	mask := c.bucketMask()
	for b := home(hb, mask); ; b = (b + 1) & mask {
		bk := c.bucket(b)
		for j := range bucketIDs {
			if bk[j] == 0 {
				bk[j] = s
				return
			}
		}
		bk[bucketIDs]++
	}
}

// grow doubles the table and fills it from the ring, oldest first: each
// id still recorded (not dead) goes back in at its place.
func (c *Compact) grow() {
	oldMem := c.mem.m
	n := max(minBuckets, 2*(len(c.slots)/bucketSlots))
	c.slots, c.mem.m = makeSlots(n * bucketSlots)
	for p := c.head; p < c.tail; p++ {
		pos := uint32(p % c.size)
		if e := c.entry(pos); e.t != dead {
			c.insert(e.h.b&tagMask|uint64(pos+1), e.h.b)
		}
	}
	oldMem.free()
}

// unslot empties slot i, of an id whose hash has hb as its second half,
// and takes it out of the overflow counts of the buckets from its home
// to its own; mu must be held.
func (c *Compact) unslot(i int, hb uint64) {
	c.slots[i] = 0
	mask := c.bucketMask()
	for b, own := home(hb, mask), uint64(i/bucketSlots); b != own; b = (b + 1) & mask {
		c.slots[b*bucketSlots+bucketIDs]--
	}
	c.used--
}

// claimTable holds the live claims of a Compact, hash → end of the
// lease: an open-addressing table (linear probing, backward-shift
// deletion) at most half full. It holds a few thousand claims at most
// while their holders work, so it stays in the caches, and unlike a map
// it leaves nothing behind a deletion. mu must be held.
type claimTable struct {
	slots []claimSlot // a power of two of them
	n     int
}

type claimSlot struct {
	h    hkey
	end  int64 // ns since base
	used bool
}

// get returns the end of h's claim.
func (t *claimTable) get(h hkey) (end int64, ok bool) {
	if t.n == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := h.a & mask; t.slots[i].used; i = (i + 1) & mask {
		if t.slots[i].h == h {
			return t.slots[i].end, true
		}
	}
	return 0, false
}

// put sets the end of h's claim.
func (t *claimTable) put(h hkey, end int64) {
	if (t.n+1)*2 > len(t.slots) {
		t.rebuild(max(minClaimSlots, 2*len(t.slots)), math.MinInt64)
	}
	mask := uint64(len(t.slots) - 1)
	i := h.a & mask
	for ; t.slots[i].used; i = (i + 1) & mask {
		if t.slots[i].h == h {
			t.slots[i].end = end
			return
		}
	}
	t.slots[i] = claimSlot{h: h, end: end, used: true}
	t.n++
}

// del drops h's claim, if any.
func (t *claimTable) del(h hkey) {
	if t.n == 0 {
		return
	}
	mask := uint64(len(t.slots) - 1)
	i := h.a & mask
	for ; t.slots[i].h != h; i = (i + 1) & mask {
		if !t.slots[i].used {
			return
		}
	}
	if !t.slots[i].used {
		return
	}
	// Backward shift: move back each later slot of the cluster whose
	// home is not in (i, j].
	for j := (i + 1) & mask; t.slots[j].used; j = (j + 1) & mask {
		home := t.slots[j].h.a & mask
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = claimSlot{}
	t.n--
}

// sweep drops the claims whose lease ended by now, and shrinks the
// table to fit the others.
func (t *claimTable) sweep(now int64) {
	live := 0
	for _, s := range t.slots {
		if s.used && now < s.end {
			live++
		}
	}
	size := minClaimSlots
	for (live+1)*2 > size {
		size *= 2
	}
	t.rebuild(size, now)
}

// rebuild moves the claims whose lease ends after now into a table of
// size slots.
func (t *claimTable) rebuild(size int, now int64) {
	old := t.slots
	t.slots, t.n = make([]claimSlot, size), 0
	for _, s := range old {
		if s.used && now < s.end {
			t.put(s.h, s.end)
		}
	}
}

// minClaimSlots is the size of the smallest claim table.
const minClaimSlots = 64
