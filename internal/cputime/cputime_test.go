package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Both clocks advance by about the processor time a loop spends, and not
// by time spent asleep.
func TestClocksCountProcessorTimeOnly(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("processor time is read on Linux only")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	t0, ok := Thread()
	p0, ok2 := Process()
	if !ok || !ok2 {
		t.Fatal("clocks not readable on Linux")
	}
	time.Sleep(200 * time.Millisecond)
	t1, _ := Thread()
	if t1-t0 > 50*time.Millisecond {
		t.Fatalf("thread clock advanced %v over a 200 ms sleep", t1-t0)
	}
	x := uint64(1)
	for t2, _ := Thread(); t2-t1 < 100*time.Millisecond; t2, _ = Thread() {
		for range 1000 {
			x = x*6364136223846793005 + 1442695040888963407
		}
	}
	_ = x
	p1, _ := Process()
	if p1-p0 < 100*time.Millisecond {
		t.Fatalf("process clock advanced %v while a thread spent 100 ms", p1-p0)
	}
}
