package seglog

import (
	"bufio"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Files of a log directory:
//
//	00000000000000000001.seg   segments, numbered in writing order
//	00000000000000000001.idx   per sealed segment: each key's offsets in it and scan marks
//	keys                       every key's next offset (survives the deletion of its records)
//	epoch                      the name of this directory's history
//	run                        with DeferSync, while open: the boot of the machine it was opened on
const (
	segExt    = ".seg"
	idxExt    = ".idx"
	keysFile  = "keys"
	epochFile = "epoch"
)

// writeChunk is how many bytes of a round are encoded before they are
// written out.
const writeChunk = 1 << 20

// segmentFile is the writable end of a segment. Its writes go on from
// the last; Sync makes what was written durable (the data and what is
// needed to read it back).
type segmentFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// createSegmentFile creates a segment for writing with size bytes
// allocated ahead where the platform can (Linux: fallocate): the file is
// that long from the start, so a write into it changes no file size and
// its sync need not record one (fdatasync), about a third cheaper than
// an append's fsync on ext4. The unused end reads as zeros, which no
// record starts with: a reopen cuts it as a torn tail, and sealing a
// segment or closing the log truncates it first.
func createSegmentFile(path string, size int64, q *quickSync) (segmentFile, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, err
	}
	return preallocate(f, size, q), nil
}

// trimActive cuts the unused, preallocated end of the segment being
// written and syncs it: its records (DeferSync's too) and the cut are
// durable, and a sealed segment ends with its last record, as a reopen
// reads it. A sync that failed before (DeferSync) fails it. Writer
// goroutine only, or after it ended.
func (l *Log) trimActive() error {
	if l.syncErr != nil {
		return l.syncErr
	}
	seg := l.segs[len(l.segs)-1]
	if err := l.active.Truncate(seg.size); err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	if err := l.syncSegment(); err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	l.unsynced = false
	return nil
}

// syncSegment fsyncs the active segment, counted in Stats.Syncs. The
// round's writer only, or after the writer goroutine ended.
func (l *Log) syncSegment() error {
	l.syncs.Add(1)
	return l.active.Sync()
}

// segment is one segment file, read through its own handle.
type segment struct {
	seq    uint64
	path   string
	size   int64     // durable bytes; mu of the Log
	newest time.Time // newest record time; mu of the Log

	rmu     sync.RWMutex // held by readers; taken to delete
	f       *os.File
	deleted bool
}

var errDeleted = errors.New("seglog: segment deleted")

func (s *segment) close() error {
	s.rmu.Lock()
	defer s.rmu.Unlock()
	s.deleted = true
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}

// read scans a key's records from file position pos up to size and
// returns those with from <= offset <= upto, copying their data.
func (s *segment) read(key string, from, upto, pos, size int64) ([]hub.Entry, error) {
	s.rmu.RLock()
	defer s.rmu.RUnlock()
	if s.deleted || s.f == nil {
		return nil, errDeleted
	}
	fr := frameReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, pos, size-pos), 256<<10), pos: pos}
	var out []hub.Entry
	for {
		f, at, err := fr.next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, fmt.Errorf("seglog: %s: corrupt record at byte %d", s.path, at)
		}
		if f.key != key || f.offset < from {
			continue
		}
		out = append(out, hub.Entry{Offset: f.offset, Time: f.time, Data: append([]byte(nil), f.data...)})
		if f.offset >= upto {
			return out, nil
		}
	}
}

func segPath(dir string, seq uint64) string {
	return filepath.Join(dir, fmt.Sprintf("%020d%s", seq, segExt))
}

// openDir loads a directory: epoch, segments (indexes of sealed ones,
// a scan of the newest, whose torn tail is cut), key offsets; then seals
// the newest segment and starts a new one.
func (l *Log) openDir() error {
	dir := l.cfg.Dir
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	names, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	var seqs []uint64
	for _, n := range names {
		base, ok := strings.CutSuffix(n.Name(), segExt)
		if !ok {
			continue
		}
		seq, err := strconv.ParseUint(base, 10, 64)
		if err != nil {
			return fmt.Errorf("seglog: %s: unexpected segment name", filepath.Join(dir, n.Name()))
		}
		seqs = append(seqs, seq)
	}
	sort.Slice(seqs, func(i, j int) bool { return seqs[i] < seqs[j] })
	if err := l.loadEpoch(len(seqs) > 0); err != nil {
		return err
	}
	if l.cfg.DeferSync {
		if err := l.checkRun(); err != nil {
			return err
		}
	}
	for i, seq := range seqs {
		s := &segment{seq: seq, path: segPath(dir, seq)}
		if s.f, err = os.Open(s.path); err != nil {
			return fmt.Errorf("seglog: %w", err)
		}
		l.segs = append(l.segs, s)
		newest := i == len(seqs)-1
		if !newest && l.loadIndex(s) == nil {
			continue
		}
		if err := l.scan(s, newest); err != nil {
			return err
		}
		if err := l.writeIndex(s); err != nil {
			return err
		}
	}
	if err := l.loadKeys(); err != nil {
		return err
	}
	if err := l.loadDropped(); err != nil {
		return err
	}
	for k, ks := range l.keys {
		ks.assigned = ks.next
		l.hideDropped(k, ks)
		ks.first = ks.next
		if len(ks.spans) > 0 {
			ks.first = ks.spans[0].first
		}
	}
	if err := l.roll(); err != nil {
		return err
	}
	return l.drop(l.retain(l.cfg.Now()))
}

// loadEpoch reads the directory's epoch or names a new history.
func (l *Log) loadEpoch(hasSegments bool) error {
	path := filepath.Join(l.cfg.Dir, epochFile)
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		l.epoch = strings.TrimSpace(string(b))
		return nil
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("seglog: %w", err)
	}
	if hasSegments {
		l.cfg.Logger.Warn("log directory has segments but no epoch file: naming a new history", "dir", l.cfg.Dir)
	}
	l.epoch = newEpoch()
	return writeFileSync(path, []byte(l.epoch+"\n"))
}

func newEpoch() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// scan reads a segment's frames into the key index. A bad frame in the
// newest segment is a torn tail and is cut; in an older one it is
// corruption and opening fails.
func (l *Log) scan(s *segment, newest bool) error {
	st, err := s.f.Stat()
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	var hdr [headerSize]byte
	if _, err := io.ReadFull(s.f, hdr[:]); err != nil {
		if newest && st.Size() < headerSize {
			l.cfg.Logger.Warn("segment log: cutting a segment torn before its header", "file", s.path, "bytes", st.Size())
			return l.cut(s, 0)
		}
		return fmt.Errorf("seglog: %s: %w", s.path, err)
	}
	if err := checkHeader(hdr[:]); err != nil {
		return fmt.Errorf("seglog: %s: %v; refusing to start on it", s.path, err)
	}
	fr := frameReader{r: bufio.NewReaderSize(io.NewSectionReader(s.f, headerSize, st.Size()-headerSize), 1<<20), pos: headerSize}
	for {
		f, at, err := fr.next()
		if err == io.EOF {
			s.size = at
			return nil
		}
		if err != nil {
			if !newest {
				return fmt.Errorf("seglog: %s: corrupt record at byte %d of %d; refusing to start on it (move the file away to start without it and everything after it)", s.path, at, st.Size())
			}
			if zeroAt(s.f, at) {
				// the segment's preallocated end (or a tail torn where
				// nothing had reached the disk yet): no record lost
				l.cfg.Logger.Info("segment log: cut the unused end of the newest segment", "file", s.path, "at_byte", at, "dropped_bytes", st.Size()-at)
			} else {
				l.cfg.Logger.Warn("segment log: cut a torn tail", "file", s.path, "at_byte", at, "dropped_bytes", st.Size()-at)
			}
			return l.cut(s, at)
		}
		ks := l.state(f.key)
		if n := len(ks.spans); n > 0 && ks.spans[n-1].seg == s && f.offset != ks.spans[n-1].last+1 {
			return fmt.Errorf("seglog: %s: key %q jumps from offset %d to %d at byte %d; refusing to start on it", s.path, f.key, ks.spans[n-1].last, f.offset, at)
		}
		l.addSpan(ks, s, f.offset, at)
		ks.next = max64(ks.next, f.offset+1)
		if f.time.After(s.newest) {
			s.newest = f.time
		}
	}
}

// zeroAt reports whether the frame header at byte at is all zeros.
func zeroAt(f io.ReaderAt, at int64) bool {
	var h [frameHeader]byte
	if n, err := f.ReadAt(h[:], at); n < len(h) || (err != nil && err != io.EOF) {
		return false // too short to be a frame's header, or unreadable: not known to be zeros
	}
	return h == [frameHeader]byte{}
}

// cut truncates a segment at byte at (the header is rewritten when at
// is 0).
func (l *Log) cut(s *segment, at int64) error {
	f, err := os.OpenFile(s.path, os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	defer f.Close()
	if at < headerSize {
		at = headerSize
		if _, err := f.WriteAt(segMagic[:], 0); err != nil {
			return fmt.Errorf("seglog: %w", err)
		}
	}
	if err := f.Truncate(at); err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	s.size = at
	return f.Sync()
}

// index is the sidecar of a sealed segment.
type index struct {
	Newest int64                `json:"newest"`
	Keys   map[string]indexSpan `json:"keys"`
}

type indexSpan struct {
	First int64      `json:"first"`
	Last  int64      `json:"last"`
	Marks [][2]int64 `json:"marks"`
}

func (s *segment) idxPath() string { return strings.TrimSuffix(s.path, segExt) + idxExt }

// writeIndex writes a segment's sidecar; mu need not be held by the
// round's writer or at open.
func (l *Log) writeIndex(s *segment) error {
	ix := index{Newest: s.newest.UnixNano(), Keys: map[string]indexSpan{}}
	l.mu.Lock()
	for key, ks := range l.keys {
		for _, sp := range ks.spans {
			if sp.seg != s {
				continue
			}
			is := indexSpan{First: sp.first, Last: sp.last}
			for _, m := range sp.marks {
				is.Marks = append(is.Marks, [2]int64{m.off, m.pos})
			}
			ix.Keys[key] = is
		}
	}
	size := s.size
	l.mu.Unlock()
	b, err := json.Marshal(struct {
		Size int64 `json:"size"`
		index
	}{size, ix})
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	return writeFileSync(s.idxPath(), checksummed(b))
}

// loadIndex reads a sealed segment's sidecar into the key index.
func (l *Log) loadIndex(s *segment) error {
	raw, err := os.ReadFile(s.idxPath())
	if err != nil {
		return err
	}
	b, err := unchecksummed(raw)
	if err != nil {
		l.cfg.Logger.Warn("segment log: index unreadable, scanning the segment", "file", s.idxPath(), "error", err)
		return err
	}
	var ix struct {
		Size int64 `json:"size"`
		index
	}
	if err := json.Unmarshal(b, &ix); err != nil {
		return err
	}
	var hdr [headerSize]byte
	if _, err := s.f.ReadAt(hdr[:], 0); err != nil {
		return fmt.Errorf("seglog: %s: %w", s.path, err)
	}
	if err := checkHeader(hdr[:]); err != nil {
		return fmt.Errorf("seglog: %s: %v; refusing to start on it", s.path, err)
	}
	s.size, s.newest = ix.Size, time.Unix(0, ix.Newest)
	for key, is := range ix.Keys {
		if len(is.Marks) == 0 {
			return errors.New("index span without marks")
		}
		ks := l.state(key)
		sp := span{seg: s, first: is.First, last: is.Last}
		for _, m := range is.Marks {
			sp.marks = append(sp.marks, mark{m[0], m[1]})
		}
		ks.spans = append(ks.spans, sp)
		ks.next = max64(ks.next, is.Last+1)
	}
	return nil
}

// writeKeys records every key's next offset; mu held.
func (l *Log) writeKeys() error {
	m := make(map[string]int64, len(l.keys))
	for k, ks := range l.keys {
		m[k] = ks.next
	}
	b, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	if err := writeFileSync(filepath.Join(l.cfg.Dir, keysFile), checksummed(b)); err != nil {
		return err
	}
	l.dirty = false
	return nil
}

func (l *Log) loadKeys() error {
	raw, err := os.ReadFile(filepath.Join(l.cfg.Dir, keysFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	b, err := unchecksummed(raw)
	if err != nil {
		return fmt.Errorf("seglog: %s: %w; refusing to start on it", filepath.Join(l.cfg.Dir, keysFile), err)
	}
	var m map[string]int64
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("seglog: %s: %w", filepath.Join(l.cfg.Dir, keysFile), err)
	}
	for k, next := range m {
		ks := l.state(k)
		ks.next = max64(ks.next, next)
	}
	return nil
}

// roll seals the segment being written (if any) and starts the next.
func (l *Log) roll() error {
	var seq uint64 = 1
	if n := len(l.segs); n > 0 {
		last := l.segs[n-1]
		if l.active != nil {
			// a sealed segment is on disk whole, and no longer than its
			// records, before its index is
			if err := l.trimActive(); err != nil {
				return err
			}
			if err := l.active.Close(); err != nil {
				return fmt.Errorf("seglog: %w", err)
			}
			l.active = nil
			if err := l.writeIndex(last); err != nil {
				return err
			}
		}
		seq = last.seq + 1
	}
	path := segPath(l.cfg.Dir, seq)
	f, err := l.cfg.create(path, l.cfg.SegmentBytes, l.quick)
	if err != nil {
		return fmt.Errorf("seglog: new segment: %w", err)
	}
	_, err = f.Write(segMagic[:])
	if err == nil {
		err = f.Sync()
	}
	if err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("seglog: new segment: %w", err)
	}
	if err := syncDir(l.cfg.Dir); err != nil {
		f.Close()
		return err
	}
	rf, err := os.Open(path)
	if err != nil {
		f.Close()
		return fmt.Errorf("seglog: %w", err)
	}
	l.active = f
	l.mu.Lock()
	l.segs = append(l.segs, &segment{seq: seq, path: path, size: headerSize, f: rf})
	err = l.writeKeys()
	l.mu.Unlock()
	return err
}

// writeDisk writes a round to the segment being written with one fsync
// (with DeferSync, only when the round asks for one) and returns the
// segment and each record's file position.
func (l *Log) writeDisk(round []*request) (*segment, []int64, error) {
	seg := l.segs[len(l.segs)-1]
	if l.active == nil || seg.size >= l.cfg.SegmentBytes {
		if err := l.roll(); err != nil {
			return nil, nil, err
		}
		seg = l.segs[len(l.segs)-1]
	}
	buf := l.buf[:0]
	var positions []int64
	var written int64
	var err error
	for _, r := range round {
		for i := range r.recs {
			positions = append(positions, seg.size+written+int64(len(buf)))
			buf = appendFrame(buf, &r.recs[i])
			if len(buf) >= writeChunk && err == nil {
				// a large round goes out in pieces, so its buffer stays
				// small; the one fsync still comes at the end
				_, err = l.active.Write(buf)
				written += int64(len(buf))
				buf = buf[:0]
			}
		}
	}
	if err == nil {
		_, err = l.active.Write(buf)
		written += int64(len(buf))
	}
	if err == nil {
		err = l.syncRound(round, written > 0)
	}
	l.buf = buf[:0]
	if err != nil {
		// take back what may have reached the file, so the next round
		// starts on a clean frame boundary
		terr := l.active.Truncate(seg.size)
		if terr == nil {
			_, terr = l.active.Seek(seg.size, io.SeekStart)
		}
		if terr != nil {
			l.cfg.Logger.Error("segment log: cannot take back a failed write; starting a new segment", "file", seg.path, "error", terr)
			if cerr := l.active.Close(); cerr != nil {
				l.cfg.Logger.Warn("segment log: closing the segment of a failed write", "file", seg.path, "error", cerr)
			}
			l.active = nil
		}
		return nil, nil, fmt.Errorf("seglog: write %s: %w", seg.path, err)
	}
	l.mu.Lock()
	seg.size += written
	l.mu.Unlock()
	return seg, positions, nil
}

// retain deletes the oldest segments past the byte budget or the age;
// mu held. The segment being written stays.
func (l *Log) retain(now time.Time) (gone []*segment) {
	var total int64
	for _, s := range l.segs {
		total += s.size
	}
	for len(l.segs) > 1 {
		s := l.segs[0]
		if total <= l.cfg.MaxBytes && now.Sub(s.newest) <= l.cfg.Retention {
			break
		}
		total -= s.size
		l.segs = l.segs[1:]
		gone = append(gone, s)
		for _, ks := range l.keys {
			for len(ks.spans) > 0 && ks.spans[0].seg == s {
				ks.spans = ks.spans[1:]
			}
			switch {
			case len(ks.spans) > 0:
				ks.first = ks.spans[0].first
			default:
				ks.first = ks.next
			}
		}
	}
	return gone
}

// drop removes deleted segments' files, after the keys file recorded
// every key's offsets.
func (l *Log) drop(gone []*segment) error {
	if len(gone) == 0 {
		return nil
	}
	l.mu.Lock()
	err := l.writeKeys()
	if err == nil {
		err = l.forgetDropped()
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	for _, s := range gone {
		if err := s.close(); err != nil {
			l.cfg.Logger.Warn("segment log: closing a segment past retention", "file", s.path, "error", err)
		}
		if err := os.Remove(s.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.cfg.Logger.Warn("segment log: cannot delete a segment past retention", "file", s.path, "error", err)
		}
		if err := os.Remove(s.idxPath()); err != nil && !errors.Is(err, os.ErrNotExist) {
			l.cfg.Logger.Warn("segment log: cannot delete the index of a segment past retention", "file", s.idxPath(), "error", err)
		}
		l.cfg.Logger.Debug("segment log: deleted a segment past retention", "file", s.path)
	}
	return nil
}

// checksummed prefixes b with its CRC-32C.
func checksummed(b []byte) []byte {
	out := binary.LittleEndian.AppendUint32(make([]byte, 0, len(b)+4), crc32.Checksum(b, crcTable))
	return append(out, b...)
}

func unchecksummed(b []byte) ([]byte, error) {
	if len(b) < 4 || crc32.Checksum(b[4:], crcTable) != binary.LittleEndian.Uint32(b) {
		return nil, errors.New("checksum mismatch")
	}
	return b[4:], nil
}

// writeFileSync replaces a file atomically and durably.
func writeFileSync(path string, b []byte) error {
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("seglog: write %s: %w", path, err)
	}
	return syncDir(filepath.Dir(path))
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("seglog: sync %s: %w", dir, err)
	}
	return nil
}
