package seglog

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"syscall"
	"testing"
	"time"
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

// BenchmarkAppendSync measures single-record durable appends from
// callers callers, with the syncs made as quick calls (quickSync) and as
// blocking calls. cpu-µs/append is the process's CPU per append
// (getrusage: user and system), which the scheduler's hand-overs around
// a blocking call add to.
func BenchmarkAppendSync(b *testing.B) {
	for _, c := range []struct {
		mode    string
		callers int
	}{{"quick", 1}, {"blocking", 1}, {"quick", 4}, {"blocking", 4}} {
		mode := c.mode
		b.Run(fmt.Sprintf("%s/callers=%d", c.mode, c.callers), func(b *testing.B) {
			l, err := Open(Config{Dir: b.TempDir(), blockingSync: mode == "blocking"})
			if err != nil {
				b.Fatal(err)
			}
			defer l.Close()
			data := bytes.Repeat([]byte("x"), 400)
			b.SetParallelism((c.callers + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
			start, switched := processCPU(), threadSwitches()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := l.Append(context.Background(), []Record{{Key: "k", Data: data}}); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(processCPU()-start)/float64(time.Microsecond)/float64(b.N), "cpu-µs/append")
			b.ReportMetric(float64(threadSwitches()-switched)/float64(b.N), "switches/append")
			if st := l.Stats(); st.Syncs > 0 {
				b.ReportMetric(float64(st.Records)/float64(st.Syncs), "appends/sync")
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "appends/s")
		})
	}
}

// threadSwitches is how many times the process's threads gave up their
// processor (getrusage: voluntary and involuntary context switches).
func threadSwitches() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Nvcsw + ru.Nivcsw
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
