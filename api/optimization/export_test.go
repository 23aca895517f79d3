package optimization

import "time"

// SetWork gives each of s's searches a budget of work units instead of
// one set by the time limit (vrp.Options.Work).
func SetWork(s *Service, work int64) { s.work = work }

// SetClock replaces s's clock.
func SetClock(s *Service, now func() time.Time) { s.now = now }
