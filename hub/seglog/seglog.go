// Package seglog is a keyed, append-only record log: per key (a bus
// partition, a stream) a sequence of records with offsets that start at 1
// and grow by one without gaps. The newest records of every key are kept
// in memory, bounded by bytes, so readers that follow the tail never touch
// the disk.
//
// With a directory the log is durable: every key's records go to one
// sequence of segment files (CRC-framed records, see format.go), written
// one round at a time: a caller that finds no round being written writes
// the queue itself, and a writer goroutine group-commits whatever callers
// queued while a round was written: one write and one fsync per round,
// never one per record. On Linux a segment is synced with fdatasync,
// made as a call the Go scheduler does not hand its processor away for
// while the disk's recent syncs take under 300 µs (quicksync.go). Append
// returns only after its records are on disk, and a record becomes
// visible to readers only then, so an offset a reader has seen is
// never given to another record after a crash. A log whose records can be
// made again from elsewhere may defer its fsyncs (Config.DeferSync): its
// records are visible once written, which a process's death does not
// undo, are fsynced when its owner calls Sync, and a machine's restart
// before they were starts a new history (a new epoch) instead. Segments are deleted whole,
// oldest first, past the retention age or byte budget. Opening the
// directory cuts a torn tail of the newest segment and refuses, with an
// error naming the file, a corrupt older segment or one of another format
// version. Without a directory the same log lives in memory only and the
// memory bounds are its retention.
package seglog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Defaults of Config.
const (
	DefaultSegmentBytes = 64 << 20
	DefaultMaxBytes     = 4 << 30
	DefaultRetention    = 24 * time.Hour
	DefaultMemBytes     = 128 << 20
	DefaultKeyMemBytes  = 8 << 20
)

// ErrClosed is returned by Append on a closed log.
var ErrClosed = errors.New("seglog: closed")

// Config of a log. Zero fields take the defaults.
type Config struct {
	// Dir holds the segments; "" keeps the log in memory only.
	Dir string
	// SegmentBytes is the size at which the writer starts a new segment.
	SegmentBytes int64
	// MaxBytes and Retention bound what is kept on disk: the oldest
	// segments are deleted while the total is above MaxBytes or their
	// newest record is older than Retention. The segment being written
	// is never deleted.
	MaxBytes  int64
	Retention time.Duration
	// MemBytes bounds the records kept in memory over all keys,
	// KeyMemBytes those of one key. Without Dir these are the retention.
	MemBytes    int64
	KeyMemBytes int64
	// DeferSync writes each round without an fsync: its records are
	// visible at once and outlive the process (the kernel holds them),
	// but they reach the disk only at Sync, at the end of a segment and
	// at Close. For a log whose records can be made again from a durable
	// source (a stream log, rebuilt from the bus), whose owner calls
	// Sync before it records how far it has read that source. A
	// directory whose last run did not Close on an earlier boot of the
	// machine (power lost, the kernel crashed: unsynced records may be
	// gone) opens as a new history, a new epoch, so that no reader
	// takes an offset it saw for a record that now has another.
	DeferSync bool
	// Now is the clock (default time.Now); Logger gets recovery notes.
	Now    func() time.Time
	Logger *slog.Logger

	// create opens a segment for writing, size bytes allocated ahead,
	// its syncs chosen by q (nil: the blocking call); tests swap it to
	// inject faults.
	create func(path string, size int64, q *quickSync) (segmentFile, error)
	// blockingSync makes every sync the blocking system call (benchmarks
	// compare it with quickSync).
	blockingSync bool
}

// Record is one record to append. Append sets Offset; Time defaults to
// the writer's clock.
type Record struct {
	Key    string
	Offset int64
	Time   time.Time
	Data   []byte
}

// Log is a keyed record log.
type Log struct {
	cfg   Config
	epoch string

	mu       sync.Mutex // guards keys, segs, memBytes, diskBytes
	keys     map[string]*keyState
	segs     []*segment // oldest first; the last one is written
	memBytes int64
	dirty    bool                // key offsets changed since the last keys file
	dropped  map[string]dropMark // keys Drop made unreadable whose records a segment may hold (with Dir, kept in droppedFile)
	touched  []*keyState         // publish's keys of the round, kept for the next round's use

	qmu   sync.Mutex // guards queue, spare, writing and closed
	qcond *sync.Cond // the writer goroutine waits on it
	reqs  sync.Pool  // *request of Append, back once answered (a request and its channel per call otherwise)
	queue []*request
	spare []*request // the last round's slice, for the next queue
	// writing says a round is being written, by the writer goroutine or
	// by a caller of submit; rounds are written one at a time, in order
	writing bool
	closed  bool
	done    chan struct{}

	quick *quickSync // how segments sync; nil: the blocking call

	// the round's writer only (writing), or after the writer goroutine ended
	active   segmentFile
	buf      []byte
	unsynced bool  // DeferSync: the active segment has writes not yet fsynced
	syncErr  error // DeferSync: the fsync that failed (it sticks)

	// what the log has written since it opened (Stats)
	rounds, records, syncs atomic.Int64
}

// keyState is what the log knows of one key.
type keyState struct {
	assigned int64 // next offset the writer gives (writer only, or mu at open)
	next     int64 // next offset once durable: the newest visible is next-1
	first    int64 // oldest retained offset
	tail     []hub.Entry
	tailSize int64
	spans    []span        // on disk, oldest first
	notify   chan struct{} // closed by the next publish of the key; nil until Wait asks for it
	touched  bool          // in Log.touched: publish met it in the round (mu)
}

// span is a key's records in one segment.
type span struct {
	seg         *segment
	first, last int64
	marks       []mark // positions to start a scan from, ascending
}

// mark is the file position of a key's record.
type mark struct{ off, pos int64 }

// markEvery is how many bytes of a segment may separate two marks of a
// key, which bounds how far a read from disk scans before its first
// record.
const markEvery = 256 << 10

type request struct {
	recs []Record
	sync bool // Sync: fsync whatever the log wrote without one
	done chan error
}

// Open opens (or creates) a log.
func Open(cfg Config) (*Log, error) {
	if cfg.SegmentBytes <= 0 {
		cfg.SegmentBytes = DefaultSegmentBytes
	}
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Retention <= 0 {
		cfg.Retention = DefaultRetention
	}
	if cfg.MemBytes <= 0 {
		cfg.MemBytes = DefaultMemBytes
	}
	if cfg.KeyMemBytes <= 0 {
		cfg.KeyMemBytes = DefaultKeyMemBytes
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.create == nil {
		cfg.create = createSegmentFile
	}
	l := &Log{cfg: cfg, keys: map[string]*keyState{}, done: make(chan struct{})}
	l.qcond = sync.NewCond(&l.qmu)
	if !cfg.blockingSync {
		l.quick = new(quickSync)
	}
	if cfg.Dir == "" {
		l.epoch = newEpoch()
	} else if err := l.openDir(); err != nil {
		l.closeFiles()
		return nil, err
	}
	go l.writeLoop()
	return l, nil
}

// Epoch names the log's history: it is kept in the directory, so it
// changes only with a new directory (or, in memory, a new log), or with
// DeferSync when the machine restarted while the log was open.
func (l *Log) Epoch() string { return l.epoch }

// Append adds records and returns once they are durable (in memory only:
// once they are visible), with each record's Offset set.
func (l *Log) Append(ctx context.Context, recs []Record) error {
	if len(recs) == 0 {
		return nil
	}
	r, _ := l.reqs.Get().(*request)
	if r == nil {
		r = &request{done: make(chan error, 1)}
	}
	r.recs = recs
	held, err := l.submit(ctx, r, "append")
	if !held {
		r.recs = nil
		l.reqs.Put(r)
	}
	return err
}

// submit queues r for the writer and waits for its answer; ErrClosed on
// a closed log. The request is not abandoned when ctx ends: a caller
// that stops waiting only loses the answer, the records may still be
// written: held says so (the writer may still answer r).
//
// When no round is being written, the caller writes the queue itself
// (its own request and whatever queued with it) and returns: an append
// with nobody beside it costs no hand-over to the writer goroutine and
// back. Requests that come while a round is written wait for the writer
// goroutine, which takes the next round once that one is done.
func (l *Log) submit(ctx context.Context, r *request, what string) (held bool, err error) {
	l.qmu.Lock()
	if l.closed {
		l.qmu.Unlock()
		return false, ErrClosed
	}
	l.queue = append(l.queue, r)
	if !l.writing {
		round := l.takeRound()
		l.qmu.Unlock()
		l.writeRound(round)
		return false, <-r.done
	}
	l.qcond.Signal()
	l.qmu.Unlock()
	select {
	case err := <-r.done:
		return false, err
	case <-ctx.Done():
		return true, fmt.Errorf("seglog: %s: %w", what, ctx.Err())
	}
}

// state returns a key's state, creating it; mu must be held.
func (l *Log) state(key string) *keyState {
	ks := l.keys[key]
	if ks == nil {
		ks = &keyState{assigned: 1, next: 1, first: 1}
		l.keys[key] = ks
	}
	return ks
}

// Bounds returns the oldest retained and the newest offset of a key;
// first > last when it has none.
func (l *Log) Bounds(key string) (first, last int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ks := l.keys[key]
	if ks == nil {
		return 1, 0
	}
	return ks.first, ks.next - 1
}

// Wait returns a channel closed once the key has a record with
// Offset >= from (at once if it has one).
func (l *Log) Wait(key string, from int64) <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	ks := l.state(key)
	if from < ks.next {
		return closedChan
	}
	if ks.notify == nil {
		ks.notify = make(chan struct{})
	}
	return ks.notify
}

var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Read returns up to max records of a key with Offset >= from, in order.
// Records past retention are gone: the first returned may be later than
// from. Entries read from memory share their Data with the log: never
// modify it.
func (l *Log) Read(ctx context.Context, key string, from int64, max int) ([]hub.Entry, error) {
	var out []hub.Entry
	for len(out) < max {
		es, err := l.read(key, from, max-len(out))
		if err != nil {
			return out, err
		}
		if len(es) == 0 {
			break
		}
		if out == nil {
			out = es
		} else {
			out = append(out[:len(out):len(out)], es...)
		}
		from = es[len(es)-1].Offset + 1
	}
	return out, nil
}

// read returns records from the memory tail or from one segment.
func (l *Log) read(key string, from int64, max int) ([]hub.Entry, error) {
	for range 3 { // a segment deleted under a read is retried
		l.mu.Lock()
		ks := l.keys[key]
		if ks == nil || max <= 0 {
			l.mu.Unlock()
			return nil, nil
		}
		from = max64(from, ks.first)
		if from >= ks.next {
			l.mu.Unlock()
			return nil, nil
		}
		if len(ks.tail) > 0 && from >= ks.tail[0].Offset {
			i := int(from - ks.tail[0].Offset)
			end := min(len(ks.tail), i+max)
			out := ks.tail[i:end:end]
			l.mu.Unlock()
			return out, nil
		}
		var sp *span
		for i := range ks.spans {
			if ks.spans[i].last >= from {
				sp = &ks.spans[i]
				break
			}
		}
		if sp == nil {
			l.mu.Unlock()
			return nil, nil
		}
		seg, pos, upto, size := sp.seg, sp.marks[0].pos, min(sp.last, from+int64(max)-1), sp.seg.size
		for _, m := range sp.marks {
			if m.off > from {
				break
			}
			pos = m.pos
		}
		l.mu.Unlock()
		out, err := seg.read(key, from, upto, pos, size)
		if errors.Is(err, errDeleted) {
			continue
		}
		return out, err
	}
	return nil, fmt.Errorf("seglog: read %q from %d: segments deleted under the read", key, from)
}

// Close writes what is queued and stops the writer.
func (l *Log) Close() error {
	l.qmu.Lock()
	if !l.closed {
		l.closed = true
		l.qcond.Signal()
	}
	l.qmu.Unlock()
	<-l.done
	l.mu.Lock()
	defer l.mu.Unlock()
	var err error
	if l.cfg.Dir != "" && l.dirty {
		err = l.writeKeys()
	}
	if l.cfg.Dir != "" && l.active != nil {
		// the writer has stopped: what it wrote goes to disk now, the
		// segment ends with its last record, and (DeferSync) the run is
		// marked closed only if all of it did
		if err = errors.Join(err, l.trimActive()); err == nil && l.cfg.DeferSync {
			err = l.closedCleanly()
		}
	}
	return errors.Join(err, l.closeFiles())
}

func (l *Log) closeFiles() error {
	var errs []error
	if l.active != nil {
		errs = append(errs, l.active.Close())
		l.active = nil
	}
	for _, s := range l.segs {
		errs = append(errs, s.close())
	}
	return errors.Join(errs...)
}

// writeLoop is the single writer: it takes everything queued, writes it
// with one fsync and makes it visible.
func (l *Log) writeLoop() {
	defer close(l.done)
	for {
		l.qmu.Lock()
		for (l.writing || len(l.queue) == 0) && !(l.closed && !l.writing) {
			l.qcond.Wait()
		}
		if len(l.queue) == 0 {
			l.qmu.Unlock()
			return // closed, and the last round written
		}
		round := l.takeRound()
		l.qmu.Unlock()
		l.writeRound(round)
	}
}

// takeRound takes the queue as the next round to write; qmu held, and
// no round being written. Whoever takes it writes it (writeRound).
func (l *Log) takeRound() []*request {
	round := l.queue
	l.queue = l.spare[:0]
	l.spare = nil
	l.writing = true
	return round
}

// writeRound writes a round taken by takeRound, answers its requests and
// lets the next round be taken: by the writer goroutine when requests
// queued meanwhile (or the log closes), else by the next caller.
func (l *Log) writeRound(round []*request) {
	err := l.write(round)
	for _, r := range round {
		r.done <- err
	}
	clear(round)
	l.qmu.Lock()
	l.writing = false
	l.spare = round
	if len(l.queue) > 0 || l.closed {
		l.qcond.Signal()
	}
	l.qmu.Unlock()
}

// write assigns offsets to a round, writes it, and publishes it.
func (l *Log) write(round []*request) error {
	now := l.cfg.Now()
	l.mu.Lock()
	for _, r := range round {
		for i := range r.recs {
			rec := &r.recs[i]
			ks := l.state(rec.Key)
			rec.Offset = ks.assigned
			ks.assigned++
			if rec.Time.IsZero() {
				rec.Time = now
			}
		}
	}
	l.mu.Unlock()
	var positions []int64
	var seg *segment
	if l.cfg.Dir != "" {
		var err error
		if seg, positions, err = l.writeDisk(round); err != nil {
			l.mu.Lock()
			for _, r := range round {
				for i := range r.recs {
					if ks := l.keys[r.recs[i].Key]; ks.assigned > r.recs[i].Offset {
						ks.assigned = r.recs[i].Offset
					}
				}
			}
			l.mu.Unlock()
			return err
		}
	}
	n := 0
	for _, r := range round {
		n += len(r.recs)
	}
	if n > 0 { // not a round of Sync requests alone
		l.rounds.Add(1)
		l.records.Add(int64(n))
	}
	gone := l.publish(round, seg, positions, now)
	if len(gone) > 0 {
		if err := l.drop(gone); err != nil {
			l.cfg.Logger.Error("segment log: cannot record key offsets before deleting segments", "error", err)
		}
	}
	return nil
}

// publish makes a written round visible and wakes its readers; it
// returns the segments retention let go.
func (l *Log) publish(round []*request, seg *segment, positions []int64, now time.Time) []*segment {
	l.mu.Lock()
	defer l.mu.Unlock()
	touched := l.touched[:0]
	n := 0
	for _, r := range round {
		for i := range r.recs {
			rec := &r.recs[i]
			ks := l.keys[rec.Key]
			size := int64(len(rec.Data) + entryOverhead)
			ks.tail = append(ks.tail, hub.Entry{Offset: rec.Offset, Time: rec.Time, Data: rec.Data})
			ks.tailSize += size
			l.memBytes += size
			ks.next = rec.Offset + 1
			if seg != nil {
				l.addSpan(ks, seg, rec.Offset, positions[n])
				if rec.Time.After(seg.newest) {
					seg.newest = rec.Time
				}
			}
			n++
			if !ks.touched {
				ks.touched = true
				touched = append(touched, ks)
			}
		}
	}
	for _, ks := range touched {
		ks.touched = false
		if ks.tailSize > l.cfg.KeyMemBytes {
			l.evict(ks, ks.tailSize-l.cfg.KeyMemBytes*3/4)
		}
		if seg == nil {
			l.expire(ks, now)
		}
		if ks.notify != nil {
			close(ks.notify)
			ks.notify = nil // made again when a reader waits: most publishes have none
		}
	}
	clear(touched)
	l.touched = touched[:0]
	if l.memBytes > l.cfg.MemBytes {
		l.evictAll()
	}
	l.dirty = true
	if seg == nil {
		return nil
	}
	return l.retain(now)
}

// expire drops a memory-only key's records older than the retention.
func (l *Log) expire(ks *keyState, now time.Time) {
	var n int64
	for _, e := range ks.tail {
		if now.Sub(e.Time) <= l.cfg.Retention {
			break
		}
		n += int64(len(e.Data)) + entryOverhead
	}
	if n > 0 {
		l.evict(ks, n)
	}
}

// entryOverhead approximates the memory of a tail entry beside its bytes.
const entryOverhead = 64

func (l *Log) addSpan(ks *keyState, seg *segment, off, pos int64) {
	if n := len(ks.spans); n > 0 && ks.spans[n-1].seg == seg {
		sp := &ks.spans[n-1]
		sp.last = off
		if pos-sp.marks[len(sp.marks)-1].pos >= markEvery {
			sp.marks = append(sp.marks, mark{off, pos})
		}
		return
	}
	ks.spans = append(ks.spans, span{seg: seg, first: off, last: off, marks: []mark{{off, pos}}})
}

// evict drops at least n bytes of a key's oldest in-memory records; mu
// held. In memory only they are gone; with a directory they stay on disk.
func (l *Log) evict(ks *keyState, n int64) {
	drop, freed := 0, int64(0)
	for drop < len(ks.tail) && freed < n {
		freed += int64(len(ks.tail[drop].Data)) + entryOverhead
		drop++
	}
	if drop == 0 {
		return
	}
	// copy when most is dropped so the old array can be collected;
	// readers hold capped slices of the old one, never modified in place
	if drop > len(ks.tail)/2 {
		ks.tail = append([]hub.Entry(nil), ks.tail[drop:]...)
	} else {
		ks.tail = ks.tail[drop:]
	}
	ks.tailSize -= freed
	l.memBytes -= freed
	if l.cfg.Dir == "" {
		if len(ks.tail) > 0 {
			ks.first = ks.tail[0].Offset
		} else {
			ks.first = ks.next
		}
	}
}

// evictAll halves every key's memory until the total is within bounds.
func (l *Log) evictAll() {
	target := l.cfg.MemBytes * 3 / 4
	for l.memBytes > target {
		before := l.memBytes
		for _, ks := range l.keys {
			if ks.tailSize > 0 {
				l.evict(ks, ks.tailSize/2+1)
			}
		}
		if l.memBytes == before {
			return
		}
	}
}

// Stats are the log's sizes, and what it has written since it opened:
// Records in Rounds (one write each, so Records/Rounds is how many
// records a write carried) and the fsyncs of its segments.
type Stats struct {
	Keys      int
	MemBytes  int64
	DiskBytes int64
	Segments  int
	Rounds    int64
	Records   int64
	Syncs     int64
}

// Stats returns the log's sizes and counts.
func (l *Log) Stats() Stats {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := Stats{Keys: len(l.keys), MemBytes: l.memBytes, Segments: len(l.segs),
		Rounds: l.rounds.Load(), Records: l.records.Load(), Syncs: l.syncs.Load()}
	for _, seg := range l.segs {
		s.DiskBytes += seg.size
	}
	return s
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}
