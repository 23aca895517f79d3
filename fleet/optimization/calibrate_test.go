package optimization

import (
	"runtime"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/vrp"
)

// A search's work follows the rate measured on this machine, not the
// default, once Calibrate has run; a configured rate or Work is kept.
func TestCalibrateSetsTheWorkBudget(t *testing.T) {
	s := New(Config{}, nil, nil, nil)
	b := &built{timeLimit: 2 * time.Second}
	if got := s.searchOptions(b, 0).Work; got != 2*vrp.WorkPerSecond {
		t.Fatalf("work before calibrating %d, want the default's %d", got, 2*vrp.WorkPerSecond)
	}
	measured, perSecond := s.Calibrate()
	if runtime.GOOS != "linux" {
		if measured != 0 || perSecond != vrp.WorkPerSecond {
			t.Fatalf("measured %v, %d a second, where no thread clock exists", measured, perSecond)
		}
		t.Skip("the rate is measured on Linux only")
	}
	if measured <= 0 || perSecond != int64(measured*RateShare) {
		t.Fatalf("measured %.0f, %d a second of the limit", measured, perSecond)
	}
	if got := s.searchOptions(b, 500*time.Millisecond).Work; got != 2*perSecond {
		t.Fatalf("work after calibrating %d, want %d (the whole limit's, whatever was spent)", got, 2*perSecond)
	}
	rate := New(Config{WorkPerSecond: 5_000_000}, nil, nil, nil) // --solver-work-rate
	if got := rate.searchOptions(b, 0).Work; got != 10_000_000 {
		t.Fatalf("work at a fixed rate of 5 million a second %d, want 10 million", got)
	}
	fixed := New(Config{Work: 12345}, nil, nil, nil)
	fixed.Calibrate()
	if got := fixed.searchOptions(b, 0).Work; got != 12345 {
		t.Fatalf("configured work %d, want 12345", got)
	}
}
