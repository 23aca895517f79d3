//go:build !unix

package webhook_test

import "testing"

// refusingURL is the URL of a receiver that is down: a listener's,
// closed (its port may be taken again by a test running beside).
func refusingURL(t testing.TB) string {
	t.Helper()
	rc := newReceiver(t, nil)
	rc.Close()
	return rc.URL
}
