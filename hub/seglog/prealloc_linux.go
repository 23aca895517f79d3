package seglog

import (
	"os"
	"syscall"
	"time"
)

// preallocate allocates size bytes to f and returns it as a segment file
// whose Sync is fdatasync: writes into the allocated space change no
// size, so the data and its extents are all a sync has to record. If
// the file system cannot allocate ahead, f is returned as it is, its
// Sync an fsync.
func preallocate(f *os.File, size int64, q *quickSync) segmentFile {
	if size <= 0 {
		return f
	}
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		return f
	}
	return dataSyncFile{f, q}
}

// dataSyncFile is a preallocated segment: Sync is fdatasync, a quick
// call while q says the disk syncs quickly (nil: always the blocking
// call).
type dataSyncFile struct {
	*os.File
	q *quickSync
}

func (f dataSyncFile) Sync() error {
	for {
		var err error
		start := time.Now()
		if f.q.quick() {
			if _, _, e := syscall.RawSyscall(syscall.SYS_FDATASYNC, f.Fd(), 0, 0); e != 0 {
				err = e
			}
		} else {
			err = syscall.Fdatasync(int(f.Fd()))
		}
		f.q.observe(time.Since(start))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
