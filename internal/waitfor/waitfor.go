// Package waitfor is for tests: it polls a condition until it holds or a
// deadline passes. It is how a test waits for what nothing tells it of
// (a row in a store, an answer of a server, a key that Redis expires on
// its own clock); a test that can be told, by a channel or a hook,
// waits on that instead.
//
// The package keeps no state and is safe for concurrent use by parallel
// tests. Poll calls the condition on the caller's goroutine, one call at
// a time; a condition that reads what other goroutines write must read it
// safely (an atomic, a mutex, a channel). Until and NoError end the test
// with t.Fatalf, so they belong on the test's own goroutine.
package waitfor

import (
	"testing"
	"time"
)

// The first polls come quickly, for conditions that hold almost at once;
// the interval then doubles up to maxStep, so that a condition that costs
// a request is not asked in a busy loop.
const (
	firstStep = time.Millisecond
	maxStep   = 50 * time.Millisecond
)

// Poll calls cond until it returns true, and reports whether it did
// within d (cond is always called at least once, and once more at the
// deadline).
func Poll(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d)
	step := firstStep
	t := time.NewTimer(step)
	defer t.Stop()
	for {
		if cond() {
			return true
		}
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		t.Reset(min(step, left))
		<-t.C
		step = min(2*step, maxStep)
	}
}

// Until polls cond until it returns true, failing t with what if it has
// not within d.
func Until(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !Poll(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// NoError polls cond until it returns nil, failing t with what and the
// last error if it has not within d.
func NoError(t testing.TB, d time.Duration, what string, cond func() error) {
	t.Helper()
	var err error
	if !Poll(d, func() bool { err = cond(); return err == nil }) {
		t.Fatalf("%s: %v (still after %v)", what, err, d)
	}
}
