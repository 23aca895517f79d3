package spool

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

func recs(from, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = fmt.Appendf(nil, "record-%d", from+i)
	}
	return out
}

func open(t *testing.T, dir string) *Spool {
	t.Helper()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func peekAll(t *testing.T, s *Spool, key string) [][]byte {
	t.Helper()
	got, _, err := s.Peek(key, 1<<30)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func TestAppendPeekConsumeInOrder(t *testing.T) {
	s := open(t, t.TempDir())
	if err := s.Append("a", recs(0, 3)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("a", recs(3, 2)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("b", recs(100, 1)...); err != nil {
		t.Fatal(err)
	}
	if got := s.Keys(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("keys %q", got)
	}
	got, m, err := s.Peek("a", 2)
	if err != nil || !slices.EqualFunc(got, recs(0, 2), bytes.Equal) {
		t.Fatalf("peek: %q %v", got, err)
	}
	if s.Len("a") != 5 {
		t.Fatalf("a holds %d before consuming", s.Len("a"))
	}
	if err := s.Consume("a", m); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume("a", m); err != nil { // the same mark again changes nothing
		t.Fatal(err)
	}
	if got := peekAll(t, s, "a"); !slices.EqualFunc(got, recs(2, 3), bytes.Equal) || s.Len("a") != 3 {
		t.Fatalf("after consuming two: %q (len %d)", got, s.Len("a"))
	}
}

func TestReopenKeepsWhatWasNotConsumed(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append("stream/1", recs(0, 10)...); err != nil {
		t.Fatal(err)
	}
	_, m, _ := s.Peek("stream/1", 4)
	if err := s.Consume("stream/1", m); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Append("stream/1", recs(0, 1)...); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}
	s = open(t, dir)
	if got := peekAll(t, s, "stream/1"); !slices.EqualFunc(got, recs(4, 6), bytes.Equal) {
		t.Fatalf("after reopening: %q", got)
	}
	if s.Len("stream/1") != 6 {
		t.Fatalf("len %d", s.Len("stream/1"))
	}
}

func TestAllConsumedRemovesTheFile(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	if err := s.Append("k", recs(0, 3)...); err != nil {
		t.Fatal(err)
	}
	_, m, _ := s.Peek("k", 10)
	if err := s.Consume("k", m); err != nil {
		t.Fatal(err)
	}
	if files, _ := filepath.Glob(filepath.Join(dir, "*")); len(files) != 0 {
		t.Fatalf("left behind: %v", files)
	}
	if len(s.Keys()) != 0 || s.Len("k") != 0 {
		t.Fatalf("keys %q len %d", s.Keys(), s.Len("k"))
	}
	// a stale mark of the removed file consumes nothing of the new one
	if err := s.Append("k", recs(10, 2)...); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume("k", m); err != nil {
		t.Fatal(err)
	}
	if got := peekAll(t, s, "k"); !slices.EqualFunc(got, recs(10, 2), bytes.Equal) {
		t.Fatalf("after a new append: %q", got)
	}
}

func TestOpenCutsATornTail(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Append("k", recs(0, 3)...); err != nil {
		t.Fatal(err)
	}
	s.Close()
	p := s.path("k")
	// half a frame, as a power cut in the middle of an append leaves
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.Write(AppendFrame(nil, []byte("never finished"))[:11])
	f.Close()
	s = open(t, dir)
	if got := peekAll(t, s, "k"); !slices.EqualFunc(got, recs(0, 3), bytes.Equal) {
		t.Fatalf("after a torn append: %q", got)
	}
	if err := s.Append("k", recs(3, 1)...); err != nil {
		t.Fatal(err)
	}
	if got := peekAll(t, s, "k"); !slices.EqualFunc(got, recs(0, 4), bytes.Equal) {
		t.Fatalf("appending after the cut: %q", got)
	}
}

func TestOpenRefusesAForeignFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "6b.spool"), bytes.Repeat([]byte("x"), 100), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir); err == nil {
		t.Fatal("a file that is not a spool file was taken")
	}
}

func TestConcurrentAppendsKeepEveryRecord(t *testing.T) {
	s := open(t, t.TempDir())
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 50 {
				if err := s.Append(fmt.Sprint("k", w%3), recs(w*1000+i, 1)...); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for _, k := range s.Keys() {
		total += len(peekAll(t, s, k))
	}
	if total != 400 {
		t.Fatalf("%d records of 400", total)
	}
}

func TestAppendRefusesAnOversizedRecord(t *testing.T) {
	s := open(t, t.TempDir())
	if err := s.Append("k", make([]byte, MaxRecord+1)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v", err)
	}
	if s.Len("k") != 0 {
		t.Fatal("an oversized record was kept")
	}
}

// FuzzReadFrame: any bytes read as frames never panic, every record
// returned carries a matching CRC, and frames made by AppendFrame read
// back unchanged.
func FuzzReadFrame(f *testing.F) {
	f.Add(AppendFrame(AppendFrame(nil, []byte("one")), []byte("two")), []byte("x"))
	f.Add([]byte{3, 0, 0, 0, 1, 2, 3, 4, 'a', 'b', 'c'}, []byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff}, []byte("payload"))
	f.Fuzz(func(t *testing.T, data, rec []byte) {
		r := bytes.NewReader(data)
		for {
			got, err := ReadFrame(r)
			if err != nil {
				break
			}
			if len(got) > MaxRecord {
				t.Fatalf("record of %d bytes", len(got))
			}
			frame := AppendFrame(nil, got)
			if !bytes.Contains(data, frame) {
				t.Fatalf("record %q returned without its frame in the input", got)
			}
		}
		back, err := ReadFrame(bytes.NewReader(AppendFrame(nil, rec)))
		if err != nil || !bytes.Equal(back, rec) {
			t.Fatalf("round trip of %q: %q, %v", rec, back, err)
		}
		if _, err := ReadFrame(bytes.NewReader(nil)); !errors.Is(err, io.EOF) {
			t.Fatalf("empty input: %v", err)
		}
	})
}

// A view reads the queue as it was when taken: appends after it are not
// seen, consumes after it (the file's removal included) take nothing from
// it, and a key without records has no view.
func TestViewReadsTheQueueAsTaken(t *testing.T) {
	s := open(t, t.TempDir())
	if v, err := s.View("k"); v != nil || err != nil {
		t.Fatalf("view of an empty key: %v, %v; want none", v, err)
	}
	if err := s.Append("k", recs(0, 3)...); err != nil {
		t.Fatal(err)
	}
	v, err := s.View("k")
	if err != nil || v == nil {
		t.Fatalf("view: %v, %v", v, err)
	}
	defer v.Close()
	if err := s.Append("k", recs(3, 2)...); err != nil {
		t.Fatal(err)
	}
	_, m, err := s.Peek("k", 10)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Consume("k", m); err != nil { // all consumed: the file goes
		t.Fatal(err)
	}
	var got [][]byte
	if err := v.Each(func(rec []byte) bool { got = append(got, rec); return true }); err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(got, recs(0, 3), bytes.Equal) {
		t.Errorf("view read %q, want the 3 records there when it was taken", got)
	}
	n := 0
	if err := v.Each(func([]byte) bool { n++; return n < 2 }); err != nil || n != 2 {
		t.Errorf("a stopped walk read %d records, %v; want 2", n, err)
	}
}
