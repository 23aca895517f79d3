package faultproxy

import (
	"net"
	"sync"
	"time"
)

// Proxy forwards TCP connections from its own address to a target.
type Proxy struct {
	ln     net.Listener
	target string
	wg     sync.WaitGroup

	mu     sync.Mutex
	held   *sync.Cond // broadcast when hang turns off or connections close
	cut    bool
	hang   bool
	closed bool
	conns  map[net.Conn]struct{} // both ends of every live connection
	// slow holds what these target-side connections send for their
	// duration before it is passed on (Slow)
	slow map[net.Conn]time.Duration
	ups  map[net.Conn]struct{} // the target-side ends of conns
}

// New listens on a free port of 127.0.0.1 and forwards each connection it
// accepts to target.
func New(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}, slow: map[net.Conn]time.Duration{}, ups: map[net.Conn]struct{}{}}
	p.held = sync.NewCond(&p.mu)
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the proxy's host:port, to be used in place of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Cut closes every connection the proxy carries and closes each new one
// at once (true), or lets new connections through again (false).
func (p *Proxy) Cut(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cut = v
	if v {
		p.dropAll()
	}
}

// Hang holds every byte read from either side (true) until Hang(false),
// Cut(true) or Close; connections are still accepted, as the kernel of a
// stopped server still accepts them.
func (p *Proxy) Hang(v bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.hang = v
	if !v {
		p.held.Broadcast()
	}
}

// Slow holds each reply the target sends on the connections open now for
// d before passing it on, while their requests go through at once: the
// target does what it was asked, and its client waits longer for the
// answer (a command that runs but whose reply comes after the client's
// read timeout). Connections opened later are not held.
func (p *Proxy) Slow(d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for up := range p.ups {
		p.slow[up] = d
	}
}

// Close stops accepting, closes every connection and waits for the
// proxy's goroutines.
func (p *Proxy) Close() error {
	err := p.ln.Close()
	p.mu.Lock()
	p.closed, p.hang = true, false
	p.dropAll()
	p.mu.Unlock()
	p.wg.Wait()
	return err
}

// dropAll closes every live connection; p.mu is held.
func (p *Proxy) dropAll() {
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
	p.held.Broadcast()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(c net.Conn) {
	defer p.wg.Done()
	p.mu.Lock()
	refuse := p.cut || p.closed
	p.mu.Unlock()
	if refuse {
		c.Close()
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		c.Close()
		up.Close()
		return
	}
	p.conns[c], p.conns[up] = struct{}{}, struct{}{}
	p.ups[up] = struct{}{}
	p.mu.Unlock()
	p.wg.Add(1)
	go func() { defer p.wg.Done(); p.pipe(c, up) }()
	p.pipe(up, c)
}

// pipe copies src to dst, holding the bytes while the proxy hangs, and
// closes dst when src ends.
func (p *Proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		p.mu.Lock()
		delay := p.slow[src]
		p.mu.Unlock()
		if n > 0 && delay > 0 {
			time.Sleep(delay)
		}
		p.mu.Lock()
		for p.hang {
			if _, live := p.conns[src]; !live {
				break
			}
			p.held.Wait()
		}
		p.mu.Unlock()
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
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.ups, src)
	delete(p.slow, src)
	p.held.Broadcast()
	p.mu.Unlock()
}
