package seglog

import (
	"bytes"
	"context"
	"fmt"
	"testing"
)

// BenchmarkAppend measures durable appends from parallel callers, as
// the ingest handlers make them: 100 records of 300 bytes per call, over
// 8 keys, every call waiting for its fsync (group commit).
func BenchmarkAppend(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := bytes.Repeat([]byte("x"), 300)
	b.SetBytes(100 * 300)
	b.SetParallelism(8)
	n := 0
	b.RunParallel(func(pb *testing.PB) {
		n++
		key := fmt.Sprint("k", n%8)
		for pb.Next() {
			recs := make([]Record, 100)
			for i := range recs {
				recs[i] = Record{Key: key, Data: data}
			}
			if err := l.Append(context.Background(), recs); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N*100)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkReadTail measures a follower's read of the newest records.
func BenchmarkReadTail(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	recs := make([]Record, 1000)
	for i := range recs {
		recs[i] = Record{Key: "k", Data: []byte("message")}
	}
	if err := l.Append(context.Background(), recs); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if es, err := l.Read(context.Background(), "k", int64(i%900+1), 100); err != nil || len(es) != 100 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkReadDisk measures a reader far behind: records no longer in
// memory are read from the segment.
func BenchmarkReadDisk(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), KeyMemBytes: 1 << 10})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := bytes.Repeat([]byte("x"), 300)
	for range 100 {
		recs := make([]Record, 100)
		for i := range recs {
			recs[i] = Record{Key: "k", Data: data}
		}
		if err := l.Append(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(100 * 300)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if es, err := l.Read(context.Background(), "k", int64(i%9000+1), 100); err != nil || len(es) != 100 {
			b.Fatal(len(es), err)
		}
	}
}

// BenchmarkAppendAlone measures one caller's appends of one record each,
// as the pipeline appends a message to a stream's log (DeferSync, no
// fsync of its own): what an append costs when nobody appends beside it.
func BenchmarkAppendAlone(b *testing.B) {
	l, err := Open(Config{Dir: b.TempDir(), DeferSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	data := bytes.Repeat([]byte("x"), 400)
	recs := make([]Record, 1)
	for b.Loop() {
		recs[0] = Record{Key: "k", Data: data}
		if err := l.Append(context.Background(), recs); err != nil {
			b.Fatal(err)
		}
	}
}
