//go:build unix

package webhook_test

import (
	"fmt"
	"syscall"
	"testing"
)

// refusingURL is the URL of a receiver that is down: its port is bound
// by a socket that does not listen, so connections to it are refused,
// and no listener can take the port while the test runs. (A port freed
// by closing a listener may be taken by a test running beside this one,
// which would then answer in the dead receiver's place.)
func refusingURL(t testing.TB) string {
	t.Helper()
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatalf("bind: %v", err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatalf("getsockname: %v", err)
	}
	return fmt.Sprintf("http://127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
