package bench

import (
	"math"
	"testing"
)

// TestHistogramQuantile: quantiles of a histogram read from /metrics are
// interpolated within their bucket, past the last finite bound they are
// that bound, and a run's figures are the difference of two readings.
func TestHistogramQuantile(t *testing.T) {
	inf := math.Inf(1)
	before := &histogram{le: []float64{1, 5, 10, inf}, cum: []float64{10, 10, 10, 10}, count: 10}
	after := &histogram{le: []float64{1, 5, 10, inf}, cum: []float64{10, 60, 110, 120}, count: 120}
	h := after.minus(before) // 0 in (0,1], 50 in (1,5], 50 in (5,10], 10 beyond
	for _, c := range []struct{ q, want float64 }{{0.25, 1 + 4*27.5/50}, {0.5, 5 + 5*5.0/50}, {0.99, 10}} {
		if got := h.quantile(c.q); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("quantile %v = %v, want %v", c.q, got, c.want)
		}
	}
	if got := h.within(5); math.Abs(got-50.0/110) > 1e-9 {
		t.Errorf("within 5 = %v, want %v", got, 50.0/110)
	}
	if got := h.within(7); got != 0 {
		t.Errorf("within a value that is no bound = %v, want 0", got)
	}
}
