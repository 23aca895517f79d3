package optimization

import (
	"context"
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

// Calibrate runs again over a server's first minutes and keeps the
// highest rate measured: a measurement in a busy moment (the server's own
// start, another process) never lowers the work a second of a limit buys.
func TestCalibrationKeepsTheHighestRate(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the rate is measured on Linux only")
	}
	s := New(Config{CalibrateAt: []time.Duration{0, 0, 0}}, nil, nil, nil)
	var got []float64
	var rates []int64
	s.RunCalibration(context.Background(), func(measured float64, perSecond int64) {
		got = append(got, measured)
		rates = append(rates, perSecond)
	})
	if len(got) != 3 {
		t.Fatalf("%d measurements, want 3", len(got))
	}
	best := 0.0
	for i, m := range got {
		best = max(best, m)
		if want := int64(best * RateShare); rates[i] != want {
			t.Fatalf("after measuring %.0f (highest so far %.0f) the rate is %d a second, want %d", m, best, rates[i], want)
		}
	}
	b := &built{timeLimit: time.Second}
	if work := s.searchOptions(b, 0).Work; work != rates[2] {
		t.Fatalf("a 1 s limit buys %d units, want the highest rate's %d", work, rates[2])
	}

	// a measurement falls due while a search runs: it waits for the
	// search to end rather than take a core from it
	s.searching.Add(1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	measured := make(chan float64, 3)
	go func() {
		defer close(done)
		s.RunCalibration(ctx, func(m float64, _ int64) { measured <- m })
	}()
	select {
	case m := <-measured:
		t.Fatalf("measured %.0f while a search ran", m)
	case <-time.After(1500 * time.Millisecond):
	}
	s.searching.Add(-1)
	<-done
	cancel()
	if len(measured) != 3 {
		t.Fatalf("%d measurements once the search ended, want 3", len(measured))
	}
}

// A measurement after the first waits while the server is busy (here a
// goroutine that keeps a core), since it would take half a second of a
// core from that work and come out low; it runs once a second passes
// quietly.
func TestCalibrationWaitsForAQuietServer(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the rate is measured on Linux only")
	}
	s := New(Config{CalibrateAt: []time.Duration{0, 0}}, nil, nil, nil)
	// a hundredth of a core: the spinning goroutine keeps more than that
	// however loaded the machine, an idle test process less
	s.quiet = 0.01
	stop := make(chan struct{})
	spun := make(chan struct{})
	go func() {
		defer close(spun)
		x := uint64(1)
		for {
			select {
			case <-stop:
				_ = x
				return
			default:
			}
			for range 10000 {
				x = x*6364136223846793005 + 1442695040888963407
			}
		}
	}()
	measured := make(chan float64, 2)
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.RunCalibration(context.Background(), func(m float64, _ int64) { measured <- m })
	}()
	deadline := time.After(10 * time.Second)
	select {
	case <-measured: // the first, at once, busy or not
	case <-deadline:
		t.Fatal("no first measurement")
	}
	select {
	case m := <-measured:
		t.Fatalf("measured %.0f again while the process kept a core busy", m)
	case <-time.After(2500 * time.Millisecond):
	}
	close(stop)
	<-spun
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("no second measurement once the process was quiet")
	}
	if len(measured) != 1 {
		t.Fatalf("%d measurements after the quiet second, want 1", len(measured))
	}
}
