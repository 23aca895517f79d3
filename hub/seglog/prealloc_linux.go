package seglog

import (
	"os"
	"syscall"
)

// preallocate allocates size bytes to f and returns it as a segment file
// whose Sync is fdatasync: writes into the allocated space change no
// size, so the data and its extents are all a sync has to record. If
// the file system cannot allocate ahead, f is returned as it is, its
// Sync an fsync.
func preallocate(f *os.File, size int64) segmentFile {
	if size <= 0 {
		return f
	}
	if err := syscall.Fallocate(int(f.Fd()), 0, 0, size); err != nil {
		return f
	}
	return dataSyncFile{f}
}

// dataSyncFile is a preallocated segment: Sync is fdatasync.
type dataSyncFile struct{ *os.File }

func (f dataSyncFile) Sync() error {
	for {
		err := syscall.Fdatasync(int(f.Fd()))
		if err != syscall.EINTR {
			if err != nil {
				return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
			}
			return nil
		}
	}
}
