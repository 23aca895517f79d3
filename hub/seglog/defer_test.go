package seglog

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"testing"
)

// syncFailFile fails its fsyncs while fail is set.
type syncFailFile struct {
	segmentFile
	syncs *atomic.Int64
	fail  *atomic.Bool
}

func (f syncFailFile) Sync() error {
	f.syncs.Add(1)
	if f.fail.Load() {
		return syscall.EIO
	}
	return f.segmentFile.Sync()
}

func deferred(t *testing.T, dir string) (Config, *atomic.Int64, *atomic.Bool) {
	t.Helper()
	cfg := Config{Dir: dir, DeferSync: true}
	syncs, fail := new(atomic.Int64), new(atomic.Bool)
	cfg.create = func(path string, size int64, q *quickSync) (segmentFile, error) {
		f, err := createSegmentFile(path, size, q)
		if err != nil {
			return nil, err
		}
		return syncFailFile{f, syncs, fail}, nil
	}
	return cfg, syncs, fail
}

// With DeferSync appends are visible at once and cost no fsync; Sync
// makes one for all of them, none when nothing was written since; Close
// syncs what is left, and the records and the epoch are there after a
// reopen.
func TestDeferSyncWritesWithoutFsync(t *testing.T) {
	dir := t.TempDir()
	cfg, syncs, _ := deferred(t, dir)
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	epoch := l.Epoch()
	base := syncs.Load() // the new segment's header
	appendN(t, l, "k", 0, 20)
	if n := syncs.Load() - base; n != 0 {
		t.Fatalf("%d fsyncs for 20 deferred appends, want none", n)
	}
	equal(t, "visible before Sync", readAll(t, l, "k", 1), want("k", 0, 20))
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := l.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load() - base; n != 1 {
		t.Fatalf("%d fsyncs for two Syncs with writes only before the first, want 1", n)
	}
	appendN(t, l, "k", 20, 5)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if n := syncs.Load() - base; n != 2 {
		t.Fatalf("%d fsyncs after Close with unsynced writes, want 2", n)
	}
	if _, err := os.Stat(filepath.Join(dir, runFile)); !os.IsNotExist(err) {
		t.Fatalf("run file after a clean Close: %v", err)
	}
	l = open(t, Config{Dir: dir, DeferSync: true})
	if l.Epoch() != epoch {
		t.Errorf("epoch %s after a clean Close, want %s", l.Epoch(), epoch)
	}
	equal(t, "after reopen", readAll(t, l, "k", 1), want("k", 0, 25))
	if err := l.Sync(context.Background()); err != nil {
		t.Errorf("Sync on a fresh log: %v", err)
	}
}

// A run that did not Close keeps its history when the machine did not
// restart (the kernel still had every write) and starts a new epoch
// when it did.
func TestDeferSyncNewEpochAfterMachineRestart(t *testing.T) {
	for _, c := range []struct {
		name     string
		boot     string
		newEpoch bool
	}{
		{"process died, same boot", bootID(), false},
		{"machine restarted", "an-earlier-boot", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			if bootID() == "" {
				t.Skip("no boot id here (" + bootIDPath + "): every unclosed run counts as a restart")
			}
			dir := t.TempDir()
			l, err := Open(Config{Dir: dir, DeferSync: true})
			if err != nil {
				t.Fatal(err)
			}
			epoch := l.Epoch()
			appendN(t, l, "k", 0, 3)
			if err := l.Close(); err != nil {
				t.Fatal(err)
			}
			// the run file as a run that never closed leaves it
			if err := os.WriteFile(filepath.Join(dir, runFile), []byte(c.boot+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			l = open(t, Config{Dir: dir, DeferSync: true})
			if got := l.Epoch() != epoch; got != c.newEpoch {
				t.Errorf("new epoch %v (%s → %s), want %v", got, epoch, l.Epoch(), c.newEpoch)
			}
			equal(t, "records", readAll(t, l, "k", 1), want("k", 0, 3))
			l.Close()
			l = open(t, Config{Dir: dir, DeferSync: true})
			if c.newEpoch && l.Epoch() == epoch {
				t.Errorf("the new epoch was not kept")
			}
		})
	}
}

// A failed fsync sticks: the kernel may have dropped what it could not
// write, so no later Sync may report it durable.
func TestDeferSyncFailureSticks(t *testing.T) {
	cfg, _, fail := deferred(t, t.TempDir())
	l, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	appendN(t, l, "k", 0, 3)
	fail.Store(true)
	if err := l.Sync(context.Background()); err == nil {
		t.Fatal("Sync with a failing fsync: nil")
	}
	fail.Store(false)
	appendN(t, l, "k", 3, 1)
	if err := l.Sync(context.Background()); err == nil {
		t.Fatal("Sync after a failed fsync: nil, want the failure again")
	}
}

// copyDir copies a log directory as it is on disk now: what a crash
// would leave (the kernel keeps what the process wrote).
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	ents, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(to, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A segment is allocated ahead on Linux (its sync then records no size):
// while it is written the file is a whole segment long; a copy taken
// then (a crash) opens with every record and the zeros cut; sealing and
// closing trim it to its records.
func TestPreallocatedSegment(t *testing.T) {
	dir := t.TempDir()
	const segBytes = 64 << 10
	l := open(t, Config{Dir: dir, SegmentBytes: segBytes})
	appendN(t, l, "k", 0, 100)
	segs := segments(t, dir)
	active := segs[len(segs)-1]
	st, err := os.Stat(active)
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS == "linux" && st.Size() != segBytes {
		t.Errorf("the segment being written is %d bytes, want %d allocated ahead", st.Size(), segBytes)
	}
	crashed := filepath.Join(t.TempDir(), "copy")
	copyDir(t, dir, crashed)
	c := open(t, Config{Dir: crashed, SegmentBytes: segBytes})
	equal(t, "after a crash", readAll(t, c, "k", 1), want("k", 0, 100))
	appendN(t, c, "k", 100, 1)
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if st, err = os.Stat(active); err != nil || st.Size() >= segBytes {
		t.Fatalf("closed: the segment is %d bytes (%v), want its records only", st.Size(), err)
	}
	l = open(t, Config{Dir: dir, SegmentBytes: segBytes})
	equal(t, "after a clean close", readAll(t, l, "k", 1), want("k", 0, 100))
	// a sealed segment is trimmed too, and read back whole
	for i := 0; i < 40; i++ {
		appendN(t, l, "k", 100+i*100, 100) // over 100 KiB in all: two segments sealed
	}
	segs = segments(t, dir)
	if len(segs) < 3 {
		t.Fatalf("%d segments, want some sealed", len(segs))
	}
	for _, name := range segs[:len(segs)-1] {
		st, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		// a round that starts below the size may end past it; none is
		// left with the zeros of its allocation
		if f, _ := os.ReadFile(name); st.Size() == segBytes && bytes.HasSuffix(f, make([]byte, 64)) {
			t.Errorf("sealed %s keeps its allocated end", name)
		}
	}
	l.Close()
	l = open(t, Config{Dir: dir, SegmentBytes: segBytes})
	equal(t, "across sealed segments", readAll(t, l, "k", 1), want("k", 0, 4100))
}
