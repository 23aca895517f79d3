package ws

import (
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// The batcher's frames, read back by a plain RFC 6455 frame parser, over
// TCP (one writev) and over a net.Pipe (the copying path).
func TestBatcherFraming(t *testing.T) {
	long := strings.Repeat("y", 70_000)
	frames := []frame{
		{data: []byte(`{"a":1}`)},
		{data: []byte(strings.Repeat("x", 200))},
		{data: []byte(long), bin: true},
		{data: encodeBatch([][]byte{[]byte(`{"o":1}`), []byte(`{"o":2}`)}, false)},
		{data: encodeBatch([][]byte{{0x81, 0xa1, 'o', 0x01}, {0x81, 0xa1, 'o', 0x02}}, true), bin: true},
		{data: nil},
	}
	want := []struct {
		op      byte
		payload []byte
	}{
		{1, []byte(`{"a":1}`)},
		{1, []byte(strings.Repeat("x", 200))},
		{2, []byte(long)},
		{1, []byte(`[{"o":1},{"o":2}]`)},
		{2, []byte{0x92, 0x81, 0xa1, 'o', 0x01, 0x81, 0xa1, 'o', 0x02}},
		{1, nil},
	}
	pipe := func() (net.Conn, net.Conn) { return net.Pipe() }
	tcp := func() (net.Conn, net.Conn) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		a, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		b, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	for _, n := range []int{125, 126, 65535, 65536} { // the header size boundaries
		p := []byte(strings.Repeat("z", n))
		frames = append(frames, frame{data: p})
		want = append(want, struct {
			op      byte
			payload []byte
		}{1, p})
	}
	for name, mk := range map[string]func() (net.Conn, net.Conn){"tcp": tcp, "pipe": pipe} {
		t.Run(name, func(t *testing.T) {
			w, r := mk()
			defer w.Close()
			defer r.Close()
			b := newBatcher(w, &sync.Pool{New: newBatchBufs})
			b.acquire()
			if b.writev != (name == "tcp") {
				t.Fatalf("writev %v", b.writev)
			}
			errc := make(chan error, 1)
			go func() {
				for i := range frames {
					b.add(&frames[i])
				}
				errc <- b.flush(5*time.Second, false)
			}()
			for i, wf := range want {
				op, payload := readFrame(t, r)
				if op != wf.op || !bytes.Equal(payload, wf.payload) {
					t.Fatalf("frame %d: op %d, %d bytes; want op %d, %d bytes", i, op, len(payload), wf.op, len(wf.payload))
				}
			}
			if err := <-errc; err != nil {
				t.Fatal(err)
			}
		})
	}
}

func readFrame(t *testing.T, r io.Reader) (byte, []byte) {
	t.Helper()
	var h [2]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		t.Fatal(err)
	}
	if h[0]&0x80 == 0 || h[0]&0x70 != 0 || h[1]&0x80 != 0 {
		t.Fatalf("header %x: want FIN, no RSV, no mask", h)
	}
	n := uint64(h[1] & 0x7f)
	switch n {
	case 126:
		var l [2]byte
		_, _ = io.ReadFull(r, l[:])
		n = uint64(binary.BigEndian.Uint16(l[:]))
	case 127:
		var l [8]byte
		_, _ = io.ReadFull(r, l[:])
		n = binary.BigEndian.Uint64(l[:])
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		p = nil
	}
	return h[0] & 0x0f, p
}
