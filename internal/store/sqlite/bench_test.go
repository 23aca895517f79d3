package sqlite_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/store/storebench"
)

func openBench(b *testing.B) store.Backend {
	s, err := sqlite.Open(b.Context(), sqlite.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s
}

func BenchmarkDeliveries(b *testing.B) { storebench.Deliveries(b, openBench) }

func BenchmarkAppendPoints(b *testing.B) { storebench.AppendPoints(b, openBench) }

func BenchmarkAppendPointsParallel(b *testing.B) { storebench.AppendPointsParallel(b, openBench) }

func BenchmarkReads(b *testing.B) { storebench.Reads(b, openBench) }
