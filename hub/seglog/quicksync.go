package seglog

import (
	"sync/atomic"
	"time"
)

// quickSyncBound is how long a log's fdatasyncs may take, on a recent
// mean, to be made as quick system calls (quickSync).
const quickSyncBound = 300 * time.Microsecond

// quickSync chooses how a log's segments are synced. Go's runtime hands
// a blocking system call's processor to another thread once the call
// has lasted a tick of its monitor (20 µs and more), waking one to take
// it, and keeps that monitor waking every 20 µs while such calls go on;
// for a log that syncs thousands of times a second on a disk that takes
// about 100 µs a sync, that is a sixth of the CPU of a small publish.
// While the recent syncs are quick (an exponentially weighted mean under
// quickSyncBound) a sync is made as a system call the scheduler does not
// see: its processor waits with it, as for any other short call. A slow
// disk (a mean above the bound) gets the ordinary blocking call, so that
// the other goroutines do not wait for it. The price: a quick call that
// meets a disk stalling (a volume that stops answering for seconds)
// holds its processor until the disk answers, and a garbage collection
// that starts meanwhile waits for it too; one such sync lifts the mean
// over the bound, so the syncs after it are blocking calls until the
// disk is quick again. Safe for concurrent use.
type quickSync struct {
	mean atomic.Int64 // nanoseconds, weight 1/8 to the newest
}

// quick says whether the next sync may be a quick call.
func (q *quickSync) quick() bool {
	return q != nil && time.Duration(q.mean.Load()) < quickSyncBound
}

// observe counts a sync that took d.
func (q *quickSync) observe(d time.Duration) {
	if q == nil {
		return
	}
	m := q.mean.Load()
	q.mean.Store(m + (int64(d)-m)/8)
}
