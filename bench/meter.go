package bench

import (
	"fmt"
	"math/bits"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// Meter counts what a generator did while it runs, for a live progress
// line: operations (requests, deliveries) with their latency, and errors.
// It is safe for concurrent use and costs a few atomic adds per
// observation; a nil Meter records nothing.
type Meter struct {
	ops, errs atomic.Int64
	hist      [histBuckets]atomic.Int64
}

// Latencies are kept in buckets of about 19 % width: four per power of
// two of nanoseconds.
const (
	histSub     = 2 // bits of sub-bucket: 4 per power of two
	histBuckets = 64 << histSub
)

func histBucket(d time.Duration) int {
	n := uint64(max(d, 1))
	e := bits.Len64(n) - 1 // n in [2^e, 2^(e+1))
	if e < histSub {
		return int(n)
	}
	sub := (n >> (e - histSub)) & (1<<histSub - 1)
	return e<<histSub | int(sub)
}

// histUpper is the largest latency of bucket b.
func histUpper(b int) time.Duration {
	e, sub := b>>histSub, uint64(b&(1<<histSub-1))
	if e < histSub {
		return time.Duration(b)
	}
	lo := uint64(1)<<e | sub<<(e-histSub)
	return time.Duration(lo + uint64(1)<<(e-histSub) - 1)
}

// Observe records one operation that took d.
func (m *Meter) Observe(d time.Duration) {
	if m == nil {
		return
	}
	m.ops.Add(1)
	m.hist[histBucket(d)].Add(1)
}

// Count records n operations without a latency.
func (m *Meter) Count(n int64) {
	if m != nil {
		m.ops.Add(n)
	}
}

// Fail records one error.
func (m *Meter) Fail() {
	if m != nil {
		m.errs.Add(1)
	}
}

// MeterSnapshot is a Meter's totals at one instant; the difference of
// two is what happened between them.
type MeterSnapshot struct {
	Ops, Errors int64
	hist        [histBuckets]int64
}

// Snapshot reads the totals.
func (m *Meter) Snapshot() MeterSnapshot {
	var s MeterSnapshot
	if m == nil {
		return s
	}
	s.Ops, s.Errors = m.ops.Load(), m.errs.Load()
	for i := range m.hist {
		s.hist[i] = m.hist[i].Load()
	}
	return s
}

// Since is what happened from prev to s.
func (s MeterSnapshot) Since(prev MeterSnapshot) MeterSnapshot {
	d := MeterSnapshot{Ops: s.Ops - prev.Ops, Errors: s.Errors - prev.Errors}
	for i := range s.hist {
		d.hist[i] = s.hist[i] - prev.hist[i]
	}
	return d
}

// Quantile is the q-quantile of the latencies observed, as the upper
// bound of its bucket (within about 19 %); 0 when none was.
func (s MeterSnapshot) Quantile(q float64) time.Duration {
	var n int64
	for _, c := range s.hist {
		n += c
	}
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.5)
	var seen int64
	for b, c := range s.hist {
		seen += c
		if seen >= max(rank, 1) {
			return histUpper(b)
		}
	}
	return histUpper(histBuckets - 1)
}

// Proc is what /proc tells of a local process: its CPU time (user and
// system) and resident memory.
type Proc struct {
	CPU time.Duration
	RSS int64 // bytes
}

// clockTicks is the kernel's USER_HZ, the unit of /proc/<pid>/stat's
// times: 100 on every Linux this runs on.
const clockTicks = 100

// ReadProc reads /proc/<pid>/stat (utime and stime) and
// /proc/<pid>/status (VmRSS).
func ReadProc(pid int) (Proc, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Proc{}, fmt.Errorf("bench: server process: %w", err)
	}
	// the command name (field 2) may hold spaces: fields count from the
	// last ')'
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return Proc{}, fmt.Errorf("bench: /proc/%d/stat: no command name", pid)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state); utime and stime are fields 14 and 15
	if len(f) < 13 {
		return Proc{}, fmt.Errorf("bench: /proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return Proc{}, fmt.Errorf("bench: /proc/%d/stat: utime %q, stime %q", pid, f[11], f[12])
	}
	p := Proc{CPU: time.Duration(ut+st) * time.Second / clockTicks}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Proc{}, fmt.Errorf("bench: server process: %w", err)
	}
	for line := range strings.Lines(string(status)) {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				return Proc{}, fmt.Errorf("bench: /proc/%d/status: VmRSS %q", pid, v)
			}
			p.RSS = kb << 10
		}
	}
	return p, nil
}
