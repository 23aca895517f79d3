package faultproxy

import (
	"net"
	"sync"
)

// Listener wraps a net.Listener so that a test can cut the connections
// it accepted, for a server the test starts itself on that listener.
type Listener struct {
	net.Listener
	mu    sync.Mutex // guards cut and conns
	cut   bool
	conns map[net.Conn]struct{}
}

// WrapListener returns ln with Cut.
func WrapListener(ln net.Listener) *Listener {
	return &Listener{Listener: ln, conns: map[net.Conn]struct{}{}}
}

// Accept returns the next connection; while cut it closes each one at
// once and waits for the next.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		if l.cut {
			l.mu.Unlock()
			c.Close()
			continue
		}
		l.conns[c] = struct{}{}
		l.mu.Unlock()
		return &conn{Conn: c, l: l}, nil
	}
}

// Cut closes every live connection and each new one at once (true), or
// lets connections through again (false).
func (l *Listener) Cut(v bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cut = v
	if v {
		for c := range l.conns {
			c.Close()
		}
		clear(l.conns)
	}
}

type conn struct {
	net.Conn
	l *Listener
}

func (c *conn) Close() error {
	c.l.mu.Lock()
	delete(c.l.conns, c.Conn)
	c.l.mu.Unlock()
	return c.Conn.Close()
}
