package vrp_test

import (
	"github.com/fleethub/fleethub/internal/vrp"
	"testing"
	"time"
)

// BenchmarkSolve solves the fixture and, when the real data is beside the
// repository, Solomon's C101 (100 customers). The budget is generous, so
// each run goes to its local optimum and measures the same work.
func BenchmarkSolve(b *testing.B) {
	for _, tc := range []struct{ name, path string }{
		{"fh12", "testdata/fh12.txt"},
		{"C101", "vrp/solomon/C101.txt"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			path := tc.path
			if tc.name == "C101" {
				path = sharedData(b, path)
			}
			pr := readSolomon(b, path).Problem()
			b.ReportAllocs()
			for b.Loop() {
				if sol := pr.Solve(vrp.Options{TimeLimit: time.Minute}); len(sol.Unassigned) != 0 {
					b.Fatalf("unassigned %v", sol.Unassigned)
				}
			}
		})
	}
}
