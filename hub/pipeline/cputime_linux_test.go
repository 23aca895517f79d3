package pipeline

import (
	"syscall"
	"testing"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD.
const rusageThread = 1

// threadCPU is the processor time the calling thread has used. Unlike
// cpuTime it leaves out the collector's background workers and every
// other thread, and unlike the elapsed time the time the thread waited
// for a processor: on a loaded machine it is the steadiest measure of
// the work one call did.
func threadCPU(b *testing.B) (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
