package ws

import (
	"syscall"
	"unsafe"
)

// rawConn is what the batcher needs of a socket to write to it without
// blocking: *net.TCPConn and *net.UnixConn have it.
type rawConn interface {
	SyscallConn() (syscall.RawConn, error)
}

// directOf returns the raw socket a batcher writes to without blocking,
// or nil when writev is not used.
func directOf(b *batcher) syscall.RawConn {
	rc, ok := b.raw.(rawConn)
	if !ok || !b.writev {
		return nil
	}
	c, err := rc.SyscallConn()
	if err != nil {
		return nil
	}
	return c
}

// writevOnce is the batcher's non-blocking writev: one system call of the
// gathered buffers, whatever it takes; the socket is non-blocking, so a
// full send buffer gives EAGAIN rather than a wait. Run by RawConn.Write,
// which holds the socket's write lock; it returns true so that Write
// never waits for the socket either.
func (b *batcher) writevOnce(fd uintptr) bool {
	m := b.m
	iov := m.iov[:0]
	for _, p := range m.bufs {
		if len(p) == 0 {
			continue
		}
		v := syscall.Iovec{Base: &p[0]}
		v.SetLen(len(p))
		iov = append(iov, v)
	}
	m.iov = iov
	b.wrote, b.werr = 0, nil
	if len(iov) == 0 {
		return true
	}
	n, _, errno := syscall.Syscall(syscall.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
	clear(iov) // the buffers are not kept alive by the pooled vector
	if errno != 0 {
		if errno != syscall.EAGAIN {
			b.werr = errno
		}
		return true
	}
	b.wrote = int(n)
	return true
}

// iovecs is writevOnce's vector, kept with the batcher's pooled buffers.
type iovecs = []syscall.Iovec
