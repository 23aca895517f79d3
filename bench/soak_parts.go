package bench

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// soakProxy forwards TCP to target; it can cut (close every connection
// and refuse new ones) or hang (hold every byte, as a stopped server).
type soakProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{}
	hang  atomic.Bool
	wg    sync.WaitGroup
}

func newSoakProxy(target string) (*soakProxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &soakProxy{ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			p.mu.Lock()
			if p.cut || err != nil {
				p.mu.Unlock()
				c.Close()
				if up != nil {
					up.Close()
				}
				continue
			}
			p.conns[c], p.conns[up] = struct{}{}, struct{}{}
			p.mu.Unlock()
			p.wg.Add(2)
			go func() { defer p.wg.Done(); p.pipe(up, c) }()
			go func() { defer p.wg.Done(); p.pipe(c, up) }()
		}
	}()
	return p, nil
}

func (p *soakProxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		for p.hang.Load() {
			time.Sleep(5 * time.Millisecond)
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				break
			}
		}
		if err != nil {
			break
		}
	}
	dst.Close()
}

func (p *soakProxy) setCut(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = v
	if v {
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
	}
}

func (p *soakProxy) close() {
	p.hang.Store(false)
	p.ln.Close()
	p.setCut(true)
	p.wg.Wait()
}

// withHost returns rawURL with its host replaced.
func withHost(rawURL, host string) (string, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("bench: soak: %q is not a URL with a host", rawURL)
	}
	u.Host = host
	return u.String(), nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// soakProc is a child process with its output in a file.
type soakProc struct {
	name string
	args []string
	out  string
	cmd  *exec.Cmd
}

func (p *soakProc) start() error {
	f, err := os.OpenFile(p.out, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	p.cmd = exec.Command(p.args[0], p.args[1:]...)
	p.cmd.Stdout, p.cmd.Stderr = f, f
	if err := p.cmd.Start(); err != nil {
		f.Close()
		return fmt.Errorf("bench: soak: start %s: %w", p.name, err)
	}
	go func() { _ = p.cmd.Wait(); f.Close() }()
	return nil
}

func (p *soakProc) signal(sig syscall.Signal) {
	if p.cmd != nil && p.cmd.Process != nil {
		_ = p.cmd.Process.Signal(sig)
	}
}

// waitReady polls base/readyz until it answers 200.
func waitReady(ctx context.Context, base string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		req, _ := http.NewRequestWithContext(ctx, "GET", base+"/readyz", nil)
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	return fmt.Errorf("bench: soak: %s not ready within %s", base, within)
}
