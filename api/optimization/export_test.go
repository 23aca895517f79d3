package optimization

// SetWork gives each of s's searches a budget of work units instead of
// one set by the time limit (vrp.Options.Work).
func SetWork(s *Service, work int64) { s.work = work }
