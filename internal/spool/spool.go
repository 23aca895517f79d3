// Package spool keeps append-only queues of records on disk, one file per
// key, consumed from the front.
//
// An append is one write of the records' frames at the end of the key's
// file: no page to read back, no index to keep, no journal. It survives
// the process being killed as soon as Append returns (the kernel holds
// it); Sync flushes the files written since the last Sync to the disk,
// for a power cut, as a WAL database in synchronous=NORMAL mode does at
// its checkpoints.
//
// A file is a header (a magic and the consumed offset, rewritten in
// place by Consume) and frames: a length, a CRC-32C of the record, the
// record. Open drops a torn frame at a file's end, the trace of a power
// cut in the middle of an append. A file whose records are all consumed
// is removed.
//
// A Spool is safe for concurrent use: the set of keys is guarded by one
// mutex and each key's queue by its own, so appends to different keys run
// at once and the operations on one key run one at a time; Sync flushes a
// file without holding its queue's lock. Peek does not take records away:
// each key is meant to have one consumer at a time, which Peeks, then
// Consumes up to the Mark.
package spool

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

const (
	magic      = "FHSPOOL1"
	headerSize = 16 // magic, consumed offset (uint64, little endian)
	frameHead  = 8  // length (uint32), CRC-32C (uint32), little endian
	ext        = ".spool"

	// MaxRecord is the largest record a spool takes.
	MaxRecord = 16 << 20
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ErrTooLarge is returned by Append for a record over MaxRecord.
var ErrTooLarge = errors.New("spool: record too large")

// Spool is a directory of queues.
type Spool struct {
	dir string

	mu     sync.Mutex       // guards files and closed
	files  map[string]*file // keys with records not yet consumed
	closed bool
}

// ErrClosed is returned after Close.
var ErrClosed = errors.New("spool: closed")

// file is one key's queue.
type file struct {
	mu    sync.Mutex
	f     *os.File
	path  string
	start int64 // consumed offset: the first record not yet consumed
	end   int64 // where the next append goes
	n     int   // records between start and end
	dirty bool  // written since the last Sync
	gone  bool  // removed (all consumed): a new append makes a new file
}

// Mark is a position in a key's queue returned by Peek, to Consume up to.
type Mark struct {
	f   *file
	off int64
	n   int
}

// Open opens the spool in dir (created if missing), checking every file:
// a torn frame at a file's end is cut off.
func Open(dir string) (*Spool, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	names, err := filepath.Glob(filepath.Join(dir, "*"+ext))
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	s := &Spool{dir: dir, files: map[string]*file{}}
	for _, p := range names {
		raw, err := hex.DecodeString(strings.TrimSuffix(filepath.Base(p), ext))
		if err != nil {
			continue // not one of ours
		}
		f, err := openFile(p)
		if err != nil {
			s.Close()
			return nil, err
		}
		if f == nil {
			continue // nothing left in it
		}
		s.files[string(raw)] = f
	}
	return s, nil
}

// openFile opens an existing queue file and finds its records; nil when
// it holds none (it is removed).
func openFile(path string) (*file, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("spool: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: %w", err)
	}
	var h [headerSize]byte
	if st.Size() <= headerSize {
		// made but never appended to (or cut short while being made)
		f.Close()
		return nil, os.Remove(path)
	}
	if _, err := f.ReadAt(h[:], 0); err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: %w", err)
	}
	if string(h[:8]) != magic {
		f.Close()
		return nil, fmt.Errorf("spool: %s is not a spool file", path)
	}
	start := int64(binary.LittleEndian.Uint64(h[8:]))
	start = min(max(start, headerSize), st.Size())
	q := &file{f: f, path: path, start: start}
	end, n, err := scan(io.NewSectionReader(f, start, st.Size()-start), start)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("spool: %s: %w", path, err)
	}
	if end < st.Size() {
		if err := f.Truncate(end); err != nil {
			f.Close()
			return nil, fmt.Errorf("spool: %w", err)
		}
	}
	q.end, q.n = end, n
	if n == 0 {
		f.Close()
		return nil, os.Remove(path)
	}
	return q, nil
}

// scan reads frames from r (which starts at offset at) and returns the
// offset past the last whole, intact one and how many there are.
func scan(r io.Reader, at int64) (int64, int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		rec, err := ReadFrame(br)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, errTorn) {
				return at, n, nil
			}
			return at, n, err
		}
		at += int64(frameHead + len(rec))
		n++
	}
}

// errTorn is a frame cut short or failing its CRC.
var errTorn = errors.New("spool: torn frame")

// ReadFrame reads one frame from r and returns its record: io.EOF at a
// clean end, an error for a frame cut short, too large or whose CRC does
// not match.
func ReadFrame(r io.Reader) ([]byte, error) {
	var h [frameHead]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, errTorn
		}
		return nil, err
	}
	size := binary.LittleEndian.Uint32(h[:4])
	if size > MaxRecord {
		return nil, fmt.Errorf("%w: length %d", errTorn, size)
	}
	rec := make([]byte, size)
	if _, err := io.ReadFull(r, rec); err != nil {
		return nil, errTorn
	}
	if crc32.Checksum(rec, castagnoli) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, fmt.Errorf("%w: checksum", errTorn)
	}
	return rec, nil
}

// AppendFrame appends rec's frame to dst.
func AppendFrame(dst, rec []byte) []byte {
	dst = binary.LittleEndian.AppendUint32(dst, uint32(len(rec)))
	dst = binary.LittleEndian.AppendUint32(dst, crc32.Checksum(rec, castagnoli))
	return append(dst, rec...)
}

// path of key's file.
func (s *Spool) path(key string) string {
	return filepath.Join(s.dir, hex.EncodeToString([]byte(key))+ext)
}

// get returns key's queue with its lock held, made if missing and
// create is set; nil if missing otherwise.
func (s *Spool) get(key string, create bool) (*file, error) {
	for {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return nil, ErrClosed
		}
		q := s.files[key]
		if q == nil {
			if !create {
				s.mu.Unlock()
				return nil, nil
			}
			p := s.path(key)
			f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
			if err != nil {
				s.mu.Unlock()
				return nil, fmt.Errorf("spool: %w", err)
			}
			var h [headerSize]byte
			copy(h[:], magic)
			binary.LittleEndian.PutUint64(h[8:], headerSize)
			if _, err := f.WriteAt(h[:], 0); err != nil {
				f.Close()
				s.mu.Unlock()
				return nil, fmt.Errorf("spool: %w", err)
			}
			q = &file{f: f, path: p, start: headerSize, end: headerSize, dirty: true}
			s.files[key] = q
		}
		s.mu.Unlock()
		q.mu.Lock()
		if !q.gone {
			return q, nil
		}
		q.mu.Unlock() // removed meanwhile: look again
	}
}

// Append adds records at the end of key's queue in one write.
func (s *Spool) Append(key string, recs ...[]byte) error {
	if len(recs) == 0 {
		return nil
	}
	size := 0
	for _, r := range recs {
		if len(r) > MaxRecord {
			return ErrTooLarge
		}
		size += frameHead + len(r)
	}
	buf := make([]byte, 0, size)
	for _, r := range recs {
		buf = AppendFrame(buf, r)
	}
	q, err := s.get(key, true)
	if err != nil {
		return err
	}
	defer q.mu.Unlock()
	if _, err := q.f.WriteAt(buf, q.end); err != nil {
		// a part written is not a record
		if terr := q.f.Truncate(q.end); terr != nil {
			return fmt.Errorf("spool: append: %w (and taking back the part written: %w)", err, terr)
		}
		return fmt.Errorf("spool: append: %w", err)
	}
	q.end += int64(len(buf))
	q.n += len(recs)
	q.dirty = true
	return nil
}

// Keys lists the keys with records, sorted.
func (s *Spool) Keys() []string {
	s.mu.Lock()
	out := make([]string, 0, len(s.files))
	for k := range s.files {
		out = append(out, k)
	}
	s.mu.Unlock()
	slices.Sort(out)
	return out
}

// Len is how many records key's queue holds.
func (s *Spool) Len(key string) int {
	q, err := s.get(key, false)
	if err != nil || q == nil { // closed, or no queue of key
		return 0
	}
	defer q.mu.Unlock()
	return q.n
}

// Peek returns up to max of key's oldest records, and the mark past
// them for Consume. They stay in the queue until consumed.
func (s *Spool) Peek(key string, max int) ([][]byte, Mark, error) {
	q, err := s.get(key, false)
	if q == nil || err != nil || max <= 0 {
		return nil, Mark{}, err
	}
	defer q.mu.Unlock()
	br := bufio.NewReaderSize(io.NewSectionReader(q.f, q.start, q.end-q.start), 64<<10)
	var out [][]byte
	off := q.start
	for len(out) < max {
		rec, err := ReadFrame(br)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, Mark{}, fmt.Errorf("spool: %s at %d: %w", q.path, off, err)
		}
		out = append(out, rec)
		off += int64(frameHead + len(rec))
	}
	return out, Mark{f: q, off: off, n: len(out)}, nil
}

// Consume drops the records of key's queue before m (from Peek). A mark
// of a queue consumed meanwhile changes nothing. A queue left empty is
// removed.
func (s *Spool) Consume(key string, m Mark) error {
	if m.f == nil || m.n == 0 {
		return nil
	}
	q, err := s.get(key, false)
	if q == nil || err != nil {
		return err
	}
	defer q.mu.Unlock()
	if q != m.f || m.off <= q.start {
		return nil
	}
	if m.off >= q.end {
		// all consumed: the file goes
		s.mu.Lock()
		delete(s.files, key)
		s.mu.Unlock()
		q.gone = true
		q.f.Close()
		if err := os.Remove(q.path); err != nil {
			return fmt.Errorf("spool: %w", err)
		}
		return nil
	}
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(m.off))
	if _, err := q.f.WriteAt(b[:], 8); err != nil {
		return fmt.Errorf("spool: consume: %w", err)
	}
	q.start = m.off
	q.n -= m.n
	q.dirty = true
	return nil
}

// Sync flushes to the disk every file written since the last Sync.
func (s *Spool) Sync() error {
	s.mu.Lock()
	qs := make([]*file, 0, len(s.files))
	for _, q := range s.files {
		qs = append(qs, q)
	}
	s.mu.Unlock()
	var errs []error
	for _, q := range qs {
		// the flush runs without the queue's lock: an append meanwhile
		// waits for nothing (it is flushed now or next time)
		q.mu.Lock()
		f, dirty := q.f, q.dirty && !q.gone
		q.dirty = false
		q.mu.Unlock()
		if !dirty {
			continue
		}
		if err := f.Sync(); err != nil {
			q.mu.Lock()
			gone := q.gone // consumed and removed meanwhile: nothing to flush
			if !gone {
				q.dirty = true
			}
			q.mu.Unlock()
			if !gone {
				errs = append(errs, fmt.Errorf("spool: sync: %w", err))
			}
		}
	}
	return errors.Join(errs...)
}

// Close syncs and closes every file.
func (s *Spool) Close() error {
	err := s.Sync()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for k, q := range s.files {
		q.mu.Lock()
		q.gone = true
		if cerr := q.f.Close(); cerr != nil {
			err = errors.Join(err, cerr)
		}
		q.mu.Unlock()
		delete(s.files, k)
	}
	return err
}

// View is a read-only look at a key's queue as it was when View was
// taken: the records appended since are not in it, and the ones consumed
// since still are. It reads through a file handle of its own (a removed
// file stays readable through it), so appends and consumes go on while
// it is read. Close it.
type View struct {
	f          *os.File
	path       string
	start, end int64
}

// View takes a view of key's queue; nil (and no error) when key has no
// records.
func (s *Spool) View(key string) (*View, error) {
	q, err := s.get(key, false)
	if q == nil || err != nil {
		return nil, err
	}
	defer q.mu.Unlock()
	f, err := os.Open(q.path)
	if err != nil {
		return nil, fmt.Errorf("spool: view: %w", err)
	}
	return &View{f: f, path: q.path, start: q.start, end: q.end}, nil
}

// Each calls fn with each record of the view, oldest first, until fn
// returns false. The record is fn's to keep.
func (v *View) Each(fn func(rec []byte) bool) error {
	return v.EachAt(func(_ int64, rec []byte) bool { return fn(rec) })
}

// EachAt is Each with each record's position in the key's file: larger
// for a later record, and unchanged while the record stays in the queue
// (a queue consumed to its end starts a new file, whose positions start
// again).
func (v *View) EachAt(fn func(at int64, rec []byte) bool) error {
	br := bufio.NewReaderSize(io.NewSectionReader(v.f, v.start, v.end-v.start), 64<<10)
	off := v.start
	for {
		rec, err := ReadFrame(br)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("spool: %s at %d: %w", v.path, off, err)
		}
		if !fn(off, rec) {
			return nil
		}
		off += int64(frameHead + len(rec))
	}
}

// Close closes the view's file handle.
func (v *View) Close() error { return v.f.Close() }
