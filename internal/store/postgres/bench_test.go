package postgres_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/storebench"
)

func openBench(b *testing.B) store.Backend { return open(b, freshSchema(b)) }

func BenchmarkDeliveries(b *testing.B) { storebench.Deliveries(b, openBench) }

func BenchmarkReads(b *testing.B) { storebench.Reads(b, openBench) }
