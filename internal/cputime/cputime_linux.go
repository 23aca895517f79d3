package cputime

import (
	"syscall"
	"time"
	"unsafe"
)

// Linux's clock ids for clock_gettime.
const (
	clockProcessCPU = 2 // CLOCK_PROCESS_CPUTIME_ID
	clockThreadCPU  = 3 // CLOCK_THREAD_CPUTIME_ID
)

// Thread is the processor time the calling thread has used, to the
// nanosecond: clock_gettime's thread clock counts the running slice too,
// where getrusage(RUSAGE_THREAD) advances only at the scheduler's ticks
// (4 ms at 250 Hz). A goroutine reading it twice must keep its thread
// between the two (runtime.LockOSThread).
func Thread() (time.Duration, bool) { return clock(clockThreadCPU) }

// Process is the processor time the whole process has used, every
// thread's together.
func Process() (time.Duration, bool) { return clock(clockProcessCPU) }

func clock(id uintptr) (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, id, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
