package redislog_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub/redislog"
	"github.com/redis/go-redis/v9"
)

func newLog(t *testing.T, prefix string) *redislog.Log {
	t.Helper()
	return newLogOn(t, newClient(t), prefix)
}

// newClient connects to the test Redis, or skips the test without one.
func newClient(t *testing.T) *redis.Client {
	t.Helper()
	u := os.Getenv("FLEETHUB_TEST_REDIS_URL")
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("FLEETHUB_TEST_REDIS_URL is not set but CI=true")
		}
		t.Skip("FLEETHUB_TEST_REDIS_URL not set: skipping Redis stream log tests")
	}
	opt, err := redis.ParseURL(u)
	if err != nil {
		t.Fatal(err)
	}
	rdb := redis.NewClient(opt)
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func newLogOn(t *testing.T, rdb *redis.Client, prefix string) *redislog.Log {
	t.Helper()
	l := redislog.New(redislog.Config{Prefix: prefix}, rdb, slog.New(slog.NewTextHandler(io.Discard, nil)))
	t.Cleanup(func() { l.Close() })
	return l
}

// TestFollowerSeesEveryAppend reads like a websocket pump while another
// goroutine (or node) appends: every offset arrives once, in order.
func TestFollowerSeesEveryAppend(t *testing.T) {
	p := fmt.Sprintf("fleethub:test:%d:", time.Now().UnixNano())
	writer, reader := newLog(t, p), newLog(t, p)
	ctx := context.Background()
	_ = writer
	const total = 3000
	got := make(chan int64, total)
	following := make(chan struct{}) // closed once the reader waits on s1
	var once sync.Once
	follow := func() { once.Do(func() { close(following) }) }
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer follow() // an early return must not leave the writer waiting
		next := int64(1)
		deadline := time.Now().Add(20 * time.Second)
		for next <= total && time.Now().Before(deadline) {
			ents, err := reader.Read(ctx, "s1", next, 256)
			if err != nil {
				t.Error(err)
				return
			}
			for _, e := range ents {
				got <- e.Offset
				next = e.Offset + 1
			}
			if len(ents) == 0 {
				wait := reader.Wait("s1", next)
				follow()
				select {
				case <-wait:
				case <-time.After(time.Second):
				}
			}
		}
	}()
	<-following
	for i := 0; i < total; i += 50 {
		data := make([][]byte, 50)
		for j := range data {
			data[j] = []byte(fmt.Sprintf(`{"n":%d}`, i+j+1))
		}
		if _, err := writer.Append(ctx, "s1", data); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	close(got)
	want := int64(1)
	for off := range got {
		if off != want {
			t.Fatalf("offset %d, want %d", off, want)
		}
		want++
	}
	if want != total+1 {
		t.Fatalf("read %d of %d", want-1, total)
	}
}

// TestReadWhileMirrorBehind: entries appended by another node are
// readable once this node's follower mirrored them, Wait says when, and
// Last never runs ahead of what Read returns.
func TestReadWhileMirrorBehind(t *testing.T) {
	p := fmt.Sprintf("fleethub:test:%d:", time.Now().UnixNano())
	writer, reader := newLog(t, p), newLog(t, p)
	ctx := context.Background()
	if _, err := writer.Append(ctx, "s", [][]byte{[]byte("a"), []byte("b")}); err != nil {
		t.Fatal(err)
	}
	<-reader.Wait("s", 1) // starts the follower after offset 2
	if _, err := writer.Append(ctx, "s", [][]byte{[]byte("c"), []byte("d"), []byte("e")}); err != nil {
		t.Fatal(err)
	}
	for {
		last, _ := reader.Last(ctx, "s")
		ents, err := reader.Read(ctx, "s", 3, 10)
		if err != nil {
			t.Fatal(err)
		}
		// the mirror may move on between the two calls: Read may see more
		// than Last said, never less
		if int64(len(ents)) < max(0, last-2) {
			t.Fatalf("last %d but read %d entries from 3", last, len(ents))
		}
		if last == 5 {
			if string(ents[2].Data) != "e" || ents[0].Offset != 3 {
				t.Fatalf("entries %+v", ents)
			}
			break
		}
		select {
		case <-reader.Wait("s", last+1):
		case <-time.After(5 * time.Second):
			t.Fatal("follower never caught up")
		}
	}
	// offsets older than the mirror come from Redis
	old, err := reader.Read(ctx, "s", 1, 10)
	if err != nil || len(old) != 5 || string(old[0].Data) != "a" {
		t.Fatalf("old entries: %v %d", err, len(old))
	}
}

// TestDeleteDropsTheLog: a deleted stream reads nothing on the node that
// followed it and on another, its Redis keys are gone, another stream
// keeps its entries.
func TestDeleteDropsTheLog(t *testing.T) {
	p := fmt.Sprintf("fleethub:test:%d:", time.Now().UnixNano())
	rdb := newClient(t)
	a, b := newLogOn(t, rdb, p), newLogOn(t, rdb, p)
	ctx := context.Background()
	for _, id := range []string{"gone", "kept"} {
		if _, err := a.Append(ctx, id, [][]byte{[]byte("a"), []byte("b")}); err != nil {
			t.Fatal(err)
		}
	}
	<-a.Wait("gone", 2) // a mirrors the stream
	if err := a.Delete(ctx, "gone"); err != nil {
		t.Fatal(err)
	}
	for name, l := range map[string]*redislog.Log{"deleting node": a, "other node": b} {
		if ents, err := l.Read(ctx, "gone", 1, 10); err != nil || len(ents) != 0 {
			t.Fatalf("%s: a deleted log reads %d entries (%v)", name, len(ents), err)
		}
		if ents, err := l.Read(ctx, "kept", 1, 10); err != nil || len(ents) != 2 {
			t.Fatalf("%s: the other stream reads %d entries (%v), want 2", name, len(ents), err)
		}
	}
	if n, err := rdb.Exists(ctx, p+"{gone}:log").Result(); err != nil || n != 0 {
		t.Fatalf("the deleted stream's Redis stream exists: %d %v", n, err)
	}
}
