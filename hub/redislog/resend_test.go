package redislog_test

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowFirst is a TCP proxy to Redis that, once armed, holds every reply
// of the first connection it carries for delay before passing it on;
// the commands reach Redis at once, so Redis runs a command whose reply
// its client gives up on.
type slowFirst struct {
	ln     net.Listener
	target string
	delay  time.Duration
	n      atomic.Int32
	armed  atomic.Bool
	wg     sync.WaitGroup
}

func newSlowFirst(t *testing.T, target string, delay time.Duration) *slowFirst {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &slowFirst{ln: ln, target: target, delay: delay}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(func() {
		ln.Close()
		p.wg.Wait()
	})
	return p
}

func (p *slowFirst) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		r, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		slow := p.n.Add(1) == 1
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			_, _ = io.Copy(r, c)
			r.Close()
		}()
		go func() {
			defer p.wg.Done()
			buf := make([]byte, 32<<10)
			for {
				n, err := r.Read(buf)
				if n > 0 {
					if slow && p.armed.Load() {
						time.Sleep(p.delay)
					}
					if _, werr := c.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			c.Close()
		}()
	}
}

// An append whose reply comes after the client's read timeout was run by
// Redis all the same; go-redis sends it again on a new connection. The
// second run answers the first's offsets and appends nothing, so no
// entry is in the stream twice (Append and AppendUnique, an entry
// without an id among them).
func TestAppendSentAgainAppendsOnce(t *testing.T) {
	ctx := context.Background()
	direct := newClient(t)
	prefix := "test:resend:" + time.Now().Format("150405.000000") + ":"
	warm := newLogOn(t, direct, prefix)
	// the scripts in Redis's cache, so that the first command through the
	// proxy is the append itself
	if _, err := warm.Append(ctx, "warm", [][]byte{[]byte("w")}); err != nil {
		t.Fatal(err)
	}
	if _, err := warm.AppendUnique(ctx, "warm", [][]byte{[]byte("w")}, []string{"w"}, time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, unique := range []bool{false, true} {
		opt := *direct.Options()
		proxy := newSlowFirst(t, direct.Options().Addr, 400*time.Millisecond)
		opt.Addr = proxy.ln.Addr().String()
		opt.ReadTimeout, opt.PoolSize, opt.MinIdleConns, opt.MaxRetries = 150*time.Millisecond, 1, 0, 3
		opt.MinRetryBackoff, opt.MaxRetryBackoff = time.Millisecond, 2*time.Millisecond
		slow := redis.NewClient(&opt)
		t.Cleanup(func() { slow.Close() })
		l := newLogOn(t, slow, prefix)
		if err := slow.Ping(ctx).Err(); err != nil { // the first connection, made
			t.Fatal(err)
		}
		proxy.armed.Store(true)
		id := "plain"
		if unique {
			id = "unique"
		}
		data := [][]byte{[]byte("a"), []byte("b")}
		if unique {
			offs, err := l.AppendUnique(ctx, id, data, []string{"", "m1"}, time.Minute)
			if err != nil || len(offs) != 2 || offs[0] != 1 || offs[1] != 2 {
				t.Fatalf("AppendUnique sent again: offsets %v, %v; want [1 2]", offs, err)
			}
		} else if last, err := l.Append(ctx, id, data); err != nil || last != 2 {
			t.Fatalf("Append sent again: last offset %d, %v; want 2 (%d connections)", last, err, proxy.n.Load())
		}
		time.Sleep(500 * time.Millisecond) // the held reply passed on
		n, err := direct.XLen(ctx, prefix+"{"+id+"}:log").Result()
		if err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Errorf("%s: the stream holds %d entries, want the 2 appended once", id, n)
		}
	}
}
