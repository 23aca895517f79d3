package store

import "errors"

// ErrUnavailable is wrapped by every error of a backend that did not
// answer (it is down, unreachable, or its circuit breaker is open): the
// request may succeed later, and nothing it asked to write was written
// unless a later read shows it.
var ErrUnavailable = errors.New("store: unavailable")
