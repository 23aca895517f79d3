package faultproxy_test

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/faultproxy"
)

// echoServer answers every connection with what it reads.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()
	return ln
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roundTrip writes msg and reads as many bytes back.
func roundTrip(c net.Conn, msg string) error {
	if err := c.SetDeadline(time.Now().Add(10 * time.Second)); err != nil {
		return err
	}
	if _, err := c.Write([]byte(msg)); err != nil {
		return err
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		return err
	}
	if !bytes.Equal(got, []byte(msg)) {
		return errors.New("echoed " + string(got))
	}
	return nil
}

func TestProxy(t *testing.T) {
	p, err := faultproxy.New(echoServer(t).Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })

	c := dial(t, p.Addr())
	if err := roundTrip(c, "before"); err != nil {
		t.Fatalf("through the proxy: %v", err)
	}

	p.Cut(true)
	if err := roundTrip(c, "cut"); err == nil {
		t.Fatal("a connection the cut closed still answered")
	}
	// the proxy's port still accepts, and closes the connection at once
	if c, err := net.Dial("tcp", p.Addr()); err == nil {
		if err := roundTrip(c, "refused"); err == nil {
			t.Fatal("a new connection answered while cut")
		}
		c.Close()
	}

	p.Cut(false)
	c = dial(t, p.Addr())
	if err := roundTrip(c, "after"); err != nil {
		t.Fatalf("after Cut(false): %v", err)
	}

	p.Hang(true)
	if _, err := c.Write([]byte("held")); err != nil {
		t.Fatal(err)
	}
	// nothing arrives while the proxy hangs
	if err := c.SetReadDeadline(time.Now().Add(100 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if n, err := c.Read(got); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read while hung: %d bytes %q, %v", n, got[:n], err)
	}
	p.Hang(false)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
		t.Fatalf("after Hang(false): %q %v", got, err)
	}

	// a hung connection is released by a cut
	p.Hang(true)
	if _, err := c.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	p.Cut(true)
	if err := c.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Read(got); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from a hung connection after the cut: %v", err)
	}

	// Close returns with a connection held
	p.Hang(false)
	p.Cut(false)
	c = dial(t, p.Addr())
	if err := roundTrip(c, "last"); err != nil {
		t.Fatal(err)
	}
	p.Hang(true)
	if _, err := c.Write([]byte("y")); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestListener(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l := faultproxy.WrapListener(ln)
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); _, _ = io.Copy(c, c) }()
		}
	}()

	c := dial(t, l.Addr().String())
	if err := roundTrip(c, "before"); err != nil {
		t.Fatal(err)
	}
	l.Cut(true)
	if err := roundTrip(c, "cut"); err == nil {
		t.Fatal("a connection the cut closed still answered")
	}
	if err := roundTrip(dial(t, l.Addr().String()), "refused"); err == nil {
		t.Fatal("a new connection answered while cut")
	}
	l.Cut(false)
	if err := roundTrip(dial(t, l.Addr().String()), "after"); err != nil {
		t.Fatalf("after Cut(false): %v", err)
	}
}

// Slow holds the replies of the connections open when it was called and
// lets those of later connections through: the slow one's reply is not
// there within a deadline its held time exceeds, comes whole after it,
// and a new connection answers meanwhile.
func TestSlow(t *testing.T) {
	p, err := faultproxy.New(echoServer(t).Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	slow := dial(t, p.Addr())
	if err := roundTrip(slow, "before"); err != nil {
		t.Fatal(err)
	}
	p.Slow(time.Second)
	if _, err := slow.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	quick := dial(t, p.Addr())
	if err := roundTrip(quick, "quick"); err != nil {
		t.Fatalf("a connection opened after Slow: %v", err)
	}
	if err := slow.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 4)
	if n, err := slow.Read(got); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read from the slowed connection: %d bytes %q, %v", n, got[:n], err)
	}
	if err := slow.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := io.ReadFull(slow, got); err != nil || string(got) != "late" {
		t.Fatalf("the slowed reply: %q %v", got, err)
	}
}
