package vrp

import (
	"syscall"
	"time"
	"unsafe"
)

// clockThreadCPU is Linux's CLOCK_THREAD_CPUTIME_ID.
const clockThreadCPU = 3

// threadCPU is the processor time the calling thread has used, to the
// nanosecond: clock_gettime's thread clock counts the running slice too,
// where getrusage(RUSAGE_THREAD) advanced only at the scheduler's ticks
// (4 ms at 250 Hz, a sixth of one of MeasureRate's runs).
func threadCPU() (time.Duration, bool) {
	var ts syscall.Timespec
	if _, _, e := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPU, uintptr(unsafe.Pointer(&ts)), 0); e != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
