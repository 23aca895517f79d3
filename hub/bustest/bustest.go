// Package bustest is test support: the contract every hub.Bus passes (and
// the feed's hub/feed.Reader, which every bus implements), run
// by the tests of hub/embedbus and hub/kafkabus so that both buses keep one
// behaviour. A bus's test calls Run with a Factory:
//
//	func TestContract(t *testing.T) {
//		bustest.Run(t, bustest.Factory{
//			Storage: func(t *testing.T, partitions int) func(*testing.T) hub.Bus {
//				dir := t.TempDir()
//				return func(t *testing.T) hub.Bus {
//					b, err := embedbus.Open(embedbus.Config{Dir: dir, Partitions: partitions})
//					if err != nil {
//						t.Fatal(err)
//					}
//					t.Cleanup(func() { b.Close(context.Background()) })
//					return b
//				}
//			},
//			MembersPerBus: true,
//			Restart:       true,
//		})
//	}
//
// Each case is a parallel subtest on storage of its own. Cases wait on what
// the handlers were given, with a deadline against hangs; none sleeps or
// measures time. A bus under test is called from several goroutines at
// once (publishers, and each member's handler goroutine), so the buses
// a Factory makes must be safe for concurrent use.
package bustest

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// Topic is the topic of every case.
const Topic = "bustest"

// waitLimit bounds every wait: a case that waits longer has hung.
const waitLimit = 30 * time.Second

// Factory makes the buses of the cases.
type Factory struct {
	// Storage makes the storage of one case (a fresh directory, a fresh
	// cluster) whose Topic has the given number of partitions, and returns
	// a function that opens a bus over it: every bus opened there sees
	// the same messages and committed offsets. open registers the bus's
	// Close with t.Cleanup; the suite may close it before. Storage is
	// called from parallel subtests.
	Storage func(t *testing.T, partitions int) (open func(t *testing.T) hub.Bus)
	// MembersPerBus: several Subscribe calls of one group and topic share
	// a bus (embedbus), and open is never called while a bus of the storage
	// is open. When false (kafkabus: a bus is one member of a group), each
	// member of a group gets a bus of its own, open beside the others.
	MembersPerBus bool
	// Restart: a bus opened after another closed sees its messages and
	// committed offsets, as after a process restart. False (a bus in
	// memory) skips the restart variants.
	Restart bool
}

// Run runs every case against buses made by f.
func Run(t *testing.T, f Factory) {
	t.Helper()
	for _, c := range []struct {
		name string
		run  func(*testing.T, Factory)
	}{
		{"GroupOfTwoGetsEachMessageOnce", groupOfTwo},
		{"FailedBatchComesBackWhole", failedBatch},
		{"HeldMessage", heldMessage},
		{"ReleasedHoldCommitsWithoutNewMessages", releasedHold},
		{"GroupResumesAfterCommit", groupResumes},
		{"GrouplessReadsFromEarliest", groupless},
		{"ReaderReadsAtOffsets", readerReadsAtOffsets},
		{"ReaderWaitsForANewMessage", readerWaitsForANewMessage},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			c.run(t, f)
		})
	}
}
