package bench

import (
	"os"
	"testing"
	"time"
)

// A quantile is the upper bound of its bucket: at most about 19 % above
// the latency it stands for, never below it.
func TestMeterQuantiles(t *testing.T) {
	for _, d := range []time.Duration{1, 3, 7, 999, time.Microsecond, 1234567, 40 * time.Millisecond, 3 * time.Second} {
		up := histUpper(histBucket(d))
		if up < d || float64(up) > 1.25*float64(d)+1 {
			t.Errorf("%v falls in a bucket up to %v", d, up)
		}
	}
	m := &Meter{}
	for i := range 1000 {
		m.Observe(time.Duration(i+1) * time.Millisecond)
	}
	m.Fail()
	s := m.Snapshot()
	if s.Ops != 1000 || s.Errors != 1 {
		t.Fatalf("snapshot: %d ops, %d errors", s.Ops, s.Errors)
	}
	if p := s.Quantile(.99); p < 990*time.Millisecond || p > 1200*time.Millisecond {
		t.Fatalf("p99 of 1..1000 ms: %v", p)
	}
	if d := m.Snapshot().Since(s); d.Ops != 0 || d.Quantile(.99) != 0 {
		t.Fatalf("nothing since: %+v", d)
	}
	var none *Meter
	none.Observe(time.Second) // a nil meter records nothing
	none.Fail()
}

// ReadProc reads this process's own CPU time and resident memory.
func TestReadProc(t *testing.T) {
	p, err := ReadProc(os.Getpid())
	if err != nil {
		t.Skipf("no /proc here: %v", err)
	}
	if p.RSS <= 0 || p.CPU < 0 {
		t.Fatalf("ReadProc: %+v", p)
	}
	if _, err := ReadProc(-1); err == nil {
		t.Fatal("ReadProc of no process: no error")
	}
}
