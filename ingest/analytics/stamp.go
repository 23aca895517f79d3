package analytics

import (
	"math"
	"time"
)

// stamp is a time as whole seconds and nanoseconds since the Unix epoch;
// its differences are a few integer operations, where time.Time.Sub costs
// 10 ns (it checks for overflow with an Add and an Equal).
type stamp struct {
	sec  int64
	nsec int64
}

func stampOf(t time.Time) stamp { return stamp{t.Unix(), int64(t.Nanosecond())} }

const maxStampSec = int64(math.MaxInt64/time.Second) - 1

// since is s−u, saturated like time.Time.Sub.
func (s stamp) since(u stamp) time.Duration {
	ds := s.sec - u.sec
	switch {
	case ds > maxStampSec || (u.sec < 0 && ds < s.sec):
		return math.MaxInt64
	case ds < -maxStampSec || (u.sec > 0 && ds > s.sec):
		return math.MinInt64
	}
	return time.Duration(ds)*time.Second + time.Duration(s.nsec-u.nsec)
}
