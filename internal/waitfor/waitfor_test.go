package waitfor_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/waitfor"
)

func TestPollReturnsOnceTheConditionHolds(t *testing.T) {
	var calls atomic.Int32
	if !waitfor.Poll(time.Minute, func() bool { return calls.Add(1) == 5 }) {
		t.Fatal("Poll gave up on a condition that held")
	}
	if n := calls.Load(); n != 5 {
		t.Fatalf("cond called %d times, want 5", n)
	}
}

func TestPollGivesUpAtTheDeadline(t *testing.T) {
	var calls atomic.Int32
	if waitfor.Poll(20*time.Millisecond, func() bool { calls.Add(1); return false }) {
		t.Fatal("Poll reported a condition that never held")
	}
	if calls.Load() < 2 {
		t.Fatalf("cond called %d times, want it asked again at the deadline", calls.Load())
	}
}

func TestPollAsksAtLeastOnce(t *testing.T) {
	if !waitfor.Poll(0, func() bool { return true }) {
		t.Fatal("a condition that holds at once, with no time to wait")
	}
}
