// Package storetest is the contract every store backend passes. A backend's
// test calls Run with a function that opens an empty backend:
//
//	func TestContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Backend {
//			s, err := sqlite.Open(t.Context(), sqlite.Config{Dir: t.TempDir()})
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// Adding an aggregate to store means adding a file here with one function
// per aggregate, func(t *testing.T, open Opener), and a line in suite.
//
// The cases run as parallel subtests, each on a backend of its own that
// open makes, and some call one backend from several goroutines (claims
// by two nodes, uploads racing a transition): a backend must be safe for
// concurrent use, as every store in internal/store is.
package storetest

import (
	"testing"

	"github.com/fleethub/fleethub/internal/store"
)

// Opener opens an empty backend, independent of every other one it opened,
// and registers its Close with t.Cleanup. The suite calls it once per
// subtest, from parallel subtests, so it must be safe for concurrent use.
type Opener func(t *testing.T) store.Backend

// suite lists the contract of each aggregate, run in this order as
// subtests of Run.
var suite = []struct {
	name string
	run  func(t *testing.T, open Opener)
}{
	{"Backend", backend},
	{"Keys", keys},
	{"Secrets", secrets},
	{"Trips", trips},
	{"Deliveries", deliveries},
	{"Devices", devices},
	{"Geofences", geofences},
	{"Incidents", incidents},
	{"Alerts", alerts},
	{"Optimizations", optimizations},
	{"Contacts", contacts},
	{"AlertSchedule", alertSchedule},
	{"Notifications", notifications},
	{"Vehicles", vehicles},
	{"Tokens", tokens},
	{"SpeedingSummaries", speedingSummaries},
}

// Run runs the whole contract against backends made by open.
func Run(t *testing.T, open func(t *testing.T) store.Backend) {
	t.Helper()
	for _, a := range suite {
		t.Run(a.name, func(t *testing.T) { a.run(t, open) })
	}
}

// backend checks the lifecycle methods every backend has.
func backend(t *testing.T, open Opener) {
	t.Run("Ping", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		if err := s.Ping(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
	})
	t.Run("Stats", func(t *testing.T) {
		t.Parallel()
		s := open(t)
		if err := s.Ping(t.Context()); err != nil {
			t.Fatalf("Ping: %v", err)
		}
		st := s.Stats()
		if st.Driver == "" {
			t.Error("Stats().Driver is empty")
		}
		if st.OpenConnections < 0 || st.InUse < 0 || st.InUse > st.OpenConnections {
			t.Errorf("Stats() = %+v: want 0 <= InUse <= OpenConnections", st)
		}
	})
}
