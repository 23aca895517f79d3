package seglog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

func open(t *testing.T, cfg Config) *Log {
	t.Helper()
	l, err := Open(cfg)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

func appendN(t *testing.T, l *Log, key string, from, n int) []int64 {
	t.Helper()
	recs := make([]Record, n)
	for i := range recs {
		recs[i] = Record{Key: key, Data: fmt.Appendf(nil, "%s-%d", key, from+i)}
	}
	if err := l.Append(context.Background(), recs); err != nil {
		t.Fatalf("Append: %v", err)
	}
	offs := make([]int64, n)
	for i := range recs {
		offs[i] = recs[i].Offset
	}
	return offs
}

// readAll reads a key from offset from to its end.
func readAll(t *testing.T, l *Log, key string, from int64) []string {
	t.Helper()
	var out []string
	for {
		es, err := l.Read(context.Background(), key, from, 100)
		if err != nil {
			t.Fatalf("Read(%s, %d): %v", key, from, err)
		}
		if len(es) == 0 {
			return out
		}
		if len(out) == 0 && es[0].Offset > from {
			from = es[0].Offset // the older ones are past retention
		}
		for _, e := range es {
			if e.Offset != from {
				t.Fatalf("Read(%s) gave offset %d, want %d", key, e.Offset, from)
			}
			out = append(out, string(e.Data))
			from++
		}
	}
}

func want(key string, from, n int) []string {
	var out []string
	for i := range n {
		out = append(out, fmt.Sprintf("%s-%d", key, from+i))
	}
	return out
}

func equal(t *testing.T, what string, got, want []string) {
	t.Helper()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("%s: got %d records %v…, want %d %v…", what, len(got), head(got), len(want), head(want))
	}
}

func head(s []string) []string { return s[:min(len(s), 5)] }

func TestOffsetsAndRecordsSurviveReopen(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	epoch := l.Epoch()
	if offs := appendN(t, l, "a", 0, 3); offs[0] != 1 || offs[2] != 3 {
		t.Fatalf("first offsets %v, want 1..3", offs)
	}
	appendN(t, l, "b", 0, 2)
	appendN(t, l, "a", 3, 2)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	l = open(t, Config{Dir: dir})
	if l.Epoch() != epoch {
		t.Errorf("epoch changed across a reopen: %s → %s", epoch, l.Epoch())
	}
	equal(t, "a after reopen", readAll(t, l, "a", 1), want("a", 0, 5))
	equal(t, "b after reopen", readAll(t, l, "b", 0), want("b", 0, 2))
	if offs := appendN(t, l, "a", 5, 1); offs[0] != 6 {
		t.Errorf("offset after reopen %d, want 6", offs[0])
	}
	equal(t, "a tail", readAll(t, l, "a", 4), want("a", 3, 3))
	if first, last := l.Bounds("a"); first != 1 || last != 6 {
		t.Errorf("Bounds(a) = %d, %d; want 1, 6", first, last)
	}
}

func TestNewDirectoryIsNewEpoch(t *testing.T) {
	a := open(t, Config{Dir: t.TempDir()})
	b := open(t, Config{Dir: t.TempDir()})
	if a.Epoch() == b.Epoch() || a.Epoch() == "" {
		t.Errorf("two directories share epoch %q", a.Epoch())
	}
}

// logBuffer collects a logger's lines.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (w *logBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *logBuffer) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

func segments(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*"+segExt))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestTornTailIsCut(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, "k", 0, 10)
	l.Close()
	segs := segments(t, dir)
	last := segs[len(segs)-1]
	// a frame cut in the middle, as a crash during a write leaves it
	var frame []byte
	frame = appendFrame(frame, &Record{Key: "k", Offset: 11, Time: time.Now(), Data: []byte("never acknowledged")})
	f, err := os.OpenFile(last, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(frame[:len(frame)-5])
	f.Close()

	var logs logBuffer
	l = open(t, Config{Dir: dir, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	equal(t, "records before the torn frame", readAll(t, l, "k", 1), want("k", 0, 10))
	if !strings.Contains(logs.String(), "torn tail") {
		t.Errorf("no log line about the cut tail: %q", logs.String())
	}
	if offs := appendN(t, l, "k", 10, 1); offs[0] != 11 {
		t.Errorf("offset after the cut %d, want 11", offs[0])
	}
}

func TestCorruptSealedSegmentRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir, SegmentBytes: 1 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		appendN(t, l, "k", i*10, 10)
	}
	l.Close()
	segs := segments(t, dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want several", len(segs))
	}
	b, _ := os.ReadFile(segs[0])
	b[len(b)-3] ^= 0xff
	os.WriteFile(segs[0], b, 0o644)
	os.Remove(strings.TrimSuffix(segs[0], segExt) + idxExt)
	_, err = Open(Config{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), filepath.Base(segs[0])) || !strings.Contains(err.Error(), "corrupt") {
		t.Fatalf("Open on a corrupt sealed segment: %v; want an error naming %s", err, filepath.Base(segs[0]))
	}
}

func TestOtherFormatVersionRefusesToOpen(t *testing.T) {
	dir := t.TempDir()
	hdr := segMagic
	hdr[5] = Version + 1
	os.WriteFile(filepath.Join(dir, "00000000000000000001"+segExt), hdr[:], 0o644)
	os.WriteFile(filepath.Join(dir, "00000000000000000002"+segExt), segMagic[:], 0o644)
	_, err := Open(Config{Dir: dir})
	if err == nil || !strings.Contains(err.Error(), "version") {
		t.Fatalf("Open on a segment of another version: %v", err)
	}
}

func TestRetentionDeletesWholeSegmentsAndKeepsOffsets(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: 4 << 10, MaxBytes: 16 << 10}
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		appendN(t, l, "old", i*10, 10)
	}
	first, last := l.Bounds("old")
	if first == 1 || last != 1000 {
		t.Fatalf("Bounds(old) = %d, %d after 1000 records in a 16 KiB budget; want a later first, 1000", first, last)
	}
	if st := l.Stats(); st.DiskBytes > cfg.MaxBytes+cfg.SegmentBytes+4<<10 {
		t.Errorf("disk %d bytes, budget %d", st.DiskBytes, cfg.MaxBytes)
	}
	got := readAll(t, l, "old", 1)
	equal(t, "retained", got, want("old", int(first)-1, 1000-int(first)+1))
	// push every record of "old" out, then reopen: its offsets go on
	for i := range 100 {
		appendN(t, l, "new", i*10, 10)
	}
	if first, _ := l.Bounds("old"); first != 1001 {
		t.Fatalf("Bounds(old) first = %d once all is deleted, want 1001", first)
	}
	l.Close()
	l = open(t, cfg)
	if offs := appendN(t, l, "old", 1000, 1); offs[0] != 1001 {
		t.Errorf("offset of old after its records were deleted and a reopen: %d, want 1001", offs[0])
	}
}

func TestMemoryOnlyRetention(t *testing.T) {
	l := open(t, Config{KeyMemBytes: 10 * (entryOverhead + 8)})
	appendN(t, l, "k", 0, 100)
	first, last := l.Bounds("k")
	if last != 100 || first < 80 {
		t.Fatalf("Bounds = %d, %d; want the newest ~10 of 100", first, last)
	}
	equal(t, "memory", readAll(t, l, "k", 0), want("k", int(first)-1, 100-int(first)+1))
}

func TestMemoryBoundedReadsFromDisk(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, MemBytes: 64 << 10, KeyMemBytes: 16 << 10, SegmentBytes: 256 << 10}
	l := open(t, cfg)
	data := bytes.Repeat([]byte("x"), 2600)
	for k := range 20 {
		for range 20 {
			recs := make([]Record, 5)
			for i := range recs {
				recs[i] = Record{Key: fmt.Sprint("s", k), Data: data}
			}
			if err := l.Append(context.Background(), recs); err != nil {
				t.Fatal(err)
			}
		}
	}
	if st := l.Stats(); st.MemBytes > cfg.MemBytes {
		t.Errorf("memory %d bytes, cap %d", st.MemBytes, cfg.MemBytes)
	}
	for k := range 20 {
		es, err := l.Read(context.Background(), fmt.Sprint("s", k), 1, 1000)
		n := 0
		for err == nil && len(es) > 0 {
			for _, e := range es {
				n++
				if e.Offset != int64(n) || !bytes.Equal(e.Data, data) {
					t.Fatalf("s%d: record %d has offset %d / %d bytes", k, n, e.Offset, len(e.Data))
				}
			}
			es, err = l.Read(context.Background(), fmt.Sprint("s", k), int64(n+1), 1000)
		}
		if err != nil || n != 100 {
			t.Fatalf("s%d: read %d of 100 records: %v", k, n, err)
		}
	}
}

// faultFile wraps a segment file to count syncs and fail writes.
type faultFile struct {
	segmentFile
	syncs *atomic.Int64
	fail  *atomic.Bool
}

func (f faultFile) Write(p []byte) (int, error) {
	if f.fail.Load() {
		// half of it reaches the file, as on a disk that filled up
		n, _ := f.segmentFile.Write(p[:len(p)/2])
		return n, syscall.ENOSPC
	}
	return f.segmentFile.Write(p)
}

func (f faultFile) Sync() error {
	f.syncs.Add(1)
	return f.segmentFile.Sync()
}

func faulty(cfg *Config) (syncs *atomic.Int64, fail *atomic.Bool) {
	syncs, fail = new(atomic.Int64), new(atomic.Bool)
	cfg.create = func(path string, size int64, q *quickSync) (segmentFile, error) {
		f, err := createSegmentFile(path, size, q)
		if err != nil {
			return nil, err
		}
		return faultFile{f, syncs, fail}, nil
	}
	return syncs, fail
}

func TestGroupCommit(t *testing.T) {
	cfg := Config{Dir: t.TempDir()}
	syncs, _ := faulty(&cfg)
	l := open(t, cfg)
	before := syncs.Load()
	const writers, each = 32, 50
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if err := l.Append(context.Background(), []Record{{Key: fmt.Sprint("k", w%4), Data: []byte{byte(i)}}}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	n := syncs.Load() - before
	t.Logf("%d appends, %d fsyncs", writers*each, n)
	if n >= writers*each {
		t.Errorf("%d fsyncs for %d appends: no group commit", n, writers*each)
	}
	// Stats counts the same: every record, in rounds of several, one
	// fsync a round
	st := l.Stats()
	if st.Records != writers*each || st.Rounds >= st.Records || st.Syncs != n || st.Rounds != st.Syncs {
		t.Errorf("Stats: %d records in %d rounds, %d syncs; want %d records in fewer rounds, one sync a round (%d)",
			st.Records, st.Rounds, st.Syncs, writers*each, n)
	}
	for k := range 4 {
		if _, last := l.Bounds(fmt.Sprint("k", k)); last != writers/4*each {
			t.Errorf("k%d has %d records, want %d", k, last, writers/4*each)
		}
	}
}

// Appends written by their callers and by the writer goroutine, with
// Close in the middle: Close returns, every append acknowledged before
// it is there after a reopen, in each key's order, and the rest are
// refused with ErrClosed.
func TestCloseDuringAppends(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	const writers = 8
	var wg sync.WaitGroup
	acked := make([]atomic.Int64, writers) // each writer's key: records acknowledged
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				err := l.Append(context.Background(), []Record{{Key: fmt.Sprint("k", w), Data: []byte(fmt.Sprint(i))}})
				if errors.Is(err, ErrClosed) {
					return
				}
				if err != nil {
					t.Error(err)
					return
				}
				acked[w].Add(1)
			}
		}()
	}
	// Close once every writer has appended a while
	if !waitfor.Poll(10*time.Second, func() bool {
		for w := range writers {
			if acked[w].Load() < 20 {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the writers did not append 20 records each")
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	l = open(t, Config{Dir: dir})
	for w := range writers {
		key := fmt.Sprint("k", w)
		got := readAll(t, l, key, 1)
		if n := acked[w].Load(); int64(len(got)) < n {
			t.Fatalf("%s: %d records after reopen, %d acknowledged", key, len(got), n)
		}
		for i, d := range got { // readAll checks the offsets follow each other from 1
			if d != fmt.Sprint(i) {
				t.Fatalf("%s: record %d is %q", key, i, d)
			}
		}
	}
}

func TestFullDiskAcknowledgesNothingUnwritten(t *testing.T) {
	cfg := Config{Dir: t.TempDir()}
	_, fail := faulty(&cfg)
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	appendN(t, l, "k", 0, 3)
	fail.Store(true)
	err = l.Append(context.Background(), []Record{{Key: "k", Data: []byte("lost")}})
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append on a full disk: %v, want ENOSPC", err)
	}
	if _, last := l.Bounds("k"); last != 3 {
		t.Errorf("a failed append is visible: last %d", last)
	}
	fail.Store(false)
	if offs := appendN(t, l, "k", 3, 2); offs[0] != 4 {
		t.Errorf("offset after the failure %d, want 4 (no gap)", offs[0])
	}
	l.Close()
	l = open(t, Config{Dir: cfg.Dir})
	equal(t, "after a full disk and a reopen", readAll(t, l, "k", 1), want("k", 0, 5))
}

func TestWait(t *testing.T) {
	l := open(t, Config{Dir: t.TempDir()})
	ch := l.Wait("k", 1)
	select {
	case <-ch:
		t.Fatal("Wait closed before any record")
	default:
	}
	appendN(t, l, "k", 0, 1)
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatal("Wait not closed after an append")
	}
	select {
	case <-l.Wait("k", 1):
	default:
		t.Fatal("Wait for an existing offset is not closed")
	}
}

func TestClosedLogRefusesAppends(t *testing.T) {
	l, err := Open(Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	if err := l.Append(context.Background(), []Record{{Key: "k"}}); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v", err)
	}
}

// TestDropSurvivesReopenUntilRetention: a dropped key reads nothing,
// after a reopen too, and keeps its offsets; the drop is forgotten once
// retention deleted every segment that held its records.
func TestDropSurvivesReopenUntilRetention(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Dir: dir, SegmentBytes: 4 << 10, MaxBytes: 16 << 10}
	l := open(t, cfg)
	appendN(t, l, "gone", 0, 20)
	appendN(t, l, "kept", 0, 20)
	if err := l.Drop("gone"); err != nil {
		t.Fatal(err)
	}
	equal(t, "dropped", readAll(t, l, "gone", 1), nil)
	// appended after the drop, in the same segment as the dropped records
	if offs := appendN(t, l, "gone", 20, 1); offs[0] != 21 {
		t.Fatalf("offset after the drop: %d, want 21", offs[0])
	}
	equal(t, "appended after the drop", readAll(t, l, "gone", 1), want("gone", 20, 1))
	l.Close()
	l = open(t, cfg)
	equal(t, "dropped, reopened", readAll(t, l, "gone", 1), want("gone", 20, 1))
	equal(t, "kept, reopened", readAll(t, l, "kept", 1), want("kept", 0, 20))
	for i := range 100 { // retention deletes the segments that held the dropped records
		appendN(t, l, "kept", 20+i*10, 10)
	}
	l.mu.Lock()
	_, remembered := l.dropped["gone"]
	l.mu.Unlock()
	if remembered {
		t.Fatal("the drop is still kept once no segment holds the dropped records")
	}
}
