//go:build !linux

package ws

import "syscall"

// directOf: writing without blocking is only done on Linux; elsewhere the
// writer goroutine writes every frame.
func directOf(*batcher) syscall.RawConn { return nil }

func (b *batcher) writevOnce(uintptr) bool { return true }

type iovecs = struct{}
