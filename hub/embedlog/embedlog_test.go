package embedlog_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/embedlog"
)

func TestAppendReadWait(t *testing.T) {
	l := embedlog.New(embedlog.Config{})
	ctx := context.Background()
	if last, _ := l.Last(ctx, "s"); last != 0 {
		t.Fatalf("empty last %d", last)
	}
	w := l.Wait("s", 1)
	select {
	case <-w:
		t.Fatal("wait fired before any append")
	default:
	}
	last, err := l.Append(ctx, "s", [][]byte{[]byte("a"), []byte("b"), []byte("c")})
	if err != nil || last != 3 {
		t.Fatalf("append: %d %v", last, err)
	}
	select {
	case <-w:
	case <-time.After(time.Second):
		t.Fatal("wait did not fire")
	}
	ents, _ := l.Read(ctx, "s", 2, 10)
	if len(ents) != 2 || ents[0].Offset != 2 || string(ents[1].Data) != "c" {
		t.Fatalf("read %+v", ents)
	}
	if ents, _ := l.Read(ctx, "s", 4, 10); len(ents) != 0 {
		t.Fatalf("read past the head: %+v", ents)
	}
	if ents, _ := l.Read(ctx, "other", 1, 10); len(ents) != 0 {
		t.Fatal("streams share entries")
	}
}

func TestTrimKeepsOffsets(t *testing.T) {
	l := embedlog.New(embedlog.Config{StreamMemBytes: 10 * (64 + 2)})
	ctx := context.Background()
	for i := 0; i < 25; i++ {
		if _, err := l.Append(ctx, "s", [][]byte{[]byte(fmt.Sprint(i))}); err != nil {
			t.Fatal(err)
		}
	}
	ents, _ := l.Read(ctx, "s", 1, 100)
	if len(ents) < 5 || len(ents) > 10 || ents[len(ents)-1].Offset != 25 || string(ents[0].Data) != fmt.Sprint(ents[0].Offset-1) {
		t.Fatalf("after trim: %d entries from %d; want the newest 5 to 10, ending at 25", len(ents), ents[0].Offset)
	}
	// a reader's slice stays valid while appends go on
	held, _ := l.Read(ctx, "s", 20, 3)
	for i := 0; i < 50; i++ {
		l.Append(ctx, "s", [][]byte{[]byte("x")})
	}
	if held[0].Offset != 20 || string(held[0].Data) != "19" {
		t.Fatalf("held entries changed: %+v", held[0])
	}
}

func TestDurableLogKeepsOffsetsAndEpoch(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	l, err := embedlog.Open(embedlog.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(ctx, "s", [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	epoch, _ := l.Epoch(ctx, "s")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l, err = embedlog.Open(embedlog.Config{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if e, _ := l.Epoch(ctx, "s"); e != epoch {
		t.Errorf("epoch changed across a reopen: %s → %s", epoch, e)
	}
	last, err := l.AppendMany(ctx, []string{"s", "t"}, [][][]byte{{[]byte("c")}, {[]byte("x"), []byte("y")}})
	if err != nil || last[0] != 3 || last[1] != 2 {
		t.Fatalf("AppendMany after reopen: %v %v; want [3 2]", last, err)
	}
	ents, _ := l.Read(ctx, "s", 1, 10)
	if len(ents) != 3 || string(ents[0].Data) != "a" || string(ents[2].Data) != "c" {
		t.Fatalf("read after reopen: %+v", ents)
	}
	other, err := embedlog.Open(embedlog.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if e, _ := other.Epoch(ctx, "s"); e == epoch {
		t.Error("a new directory has the old epoch")
	}
}

// TestMemoryStaysWithinBound feeds 100 streams 2.6 KB messages past the
// memory bound: memory stays within it and every message is still read
// back, the older ones from disk.
func TestMemoryStaysWithinBound(t *testing.T) {
	ctx := context.Background()
	const bound = 4 << 20
	l, err := embedlog.Open(embedlog.Config{Dir: t.TempDir(), MemBytes: bound, StreamMemBytes: bound / 16})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	msg := make([]byte, 2600)
	for range 10 {
		ids := make([]string, 100)
		data := make([][][]byte, 100)
		for s := range ids {
			ids[s] = fmt.Sprint("str_", s)
			data[s] = [][]byte{msg, msg, msg}
		}
		if _, err := l.AppendMany(ctx, ids, data); err != nil {
			t.Fatal(err)
		}
		if st := l.Stats(); st.MemBytes > bound {
			t.Fatalf("%d bytes in memory, bound %d", st.MemBytes, bound)
		}
	}
	for s := range 100 {
		ents, err := l.Read(ctx, fmt.Sprint("str_", s), 1, 100)
		if err != nil || len(ents) != 30 || ents[29].Offset != 30 || len(ents[0].Data) != 2600 {
			t.Fatalf("stream %d: %d entries read back, %v", s, len(ents), err)
		}
	}
}

// TestDeleteDropsOnlyThatStream: a deleted stream's log reads nothing
// (from memory and, with a directory, from disk); another stream keeps
// its entries.
func TestDeleteDropsOnlyThatStream(t *testing.T) {
	for _, dir := range []string{"", t.TempDir()} {
		l, err := embedlog.Open(embedlog.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		for _, id := range []string{"gone", "kept"} {
			if _, err := l.Append(ctx, id, [][]byte{[]byte("a"), []byte("b")}); err != nil {
				t.Fatal(err)
			}
		}
		if err := l.Delete(ctx, "gone"); err != nil {
			t.Fatal(err)
		}
		if ents, _ := l.Read(ctx, "gone", 1, 10); len(ents) != 0 {
			t.Fatalf("dir %q: a deleted log reads %d entries", dir, len(ents))
		}
		if ents, _ := l.Read(ctx, "kept", 1, 10); len(ents) != 2 {
			t.Fatalf("dir %q: the other stream reads %d entries, want 2", dir, len(ents))
		}
		if st := l.Stats(); st.MemBytes <= 0 {
			t.Fatalf("dir %q: memory %d after deleting one of two streams", dir, st.MemBytes)
		}
		l.Close()
		if dir == "" {
			continue
		}
		// reopened, the deleted stream still reads nothing and keeps its offsets
		l, err = embedlog.Open(embedlog.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if ents, _ := l.Read(ctx, "gone", 1, 10); len(ents) != 0 {
			t.Fatalf("reopened: a deleted log reads %d entries", len(ents))
		}
		if ents, _ := l.Read(ctx, "kept", 1, 10); len(ents) != 2 {
			t.Fatalf("reopened: the other stream reads %d entries, want 2", len(ents))
		}
		if last, err := l.Append(ctx, "gone", [][]byte{[]byte("c")}); err != nil || last != 3 {
			t.Fatalf("reopened: an append to the deleted stream got offset %d (%v), want 3", last, err)
		}
		if ents, _ := l.Read(ctx, "gone", 1, 10); len(ents) != 1 || ents[0].Offset != 3 {
			t.Fatalf("reopened: after an append the deleted stream reads %v", ents)
		}
		l.Close()
	}
}
