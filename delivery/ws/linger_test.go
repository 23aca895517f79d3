package ws_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/delivery/ws"
	"github.com/fleethub/fleethub/hub"
)

// A connection whose last two writes came within WriteLinger of each
// other, and which gets a frame within WriteLinger of the last, holds it
// and what comes next until WriteLinger after that write, then writes it
// all, in order. Off (negative), every frame goes out as it comes.
func TestWriteLinger(t *testing.T) {
	const linger = 300 * time.Millisecond
	for _, tc := range []struct {
		name   string
		linger time.Duration
	}{{"held", linger}, {"off", -1}} {
		t.Run(tc.name, func(t *testing.T) {
			var ahead atomic.Int64 // what the test moved the Server's clock forward
			now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
			f := newFixture(t, ws.Config{WriteLinger: tc.linger, Now: now}, hub.StreamInfo{ID: "s1"})
			c := f.mustDial("stream_id=s1")
			expectControl(t, c, "subscribed", "")
			ahead.Add(int64(2 * linger)) // the subscribed reply's write is long past
			from := int64(1)
			// A round's frames are held only if the push finds no writer:
			// on a loaded machine the writer goroutine of the round's
			// second write may still hold the role when the third comes,
			// and write it at once. So a round tries up to five times and
			// fails only if no try was held (with the linger off, none is).
			for round := range 2 {
				var took time.Duration
				for try := 0; try < 5; try++ {
					f.appendN("s1", 1, 0) // written at once: nothing was written for 2 × linger
					readOffsets(t, c, "s1", from, 1)
					began := time.Now()
					f.appendN("s1", 1, 0) // written at once: one write came shortly before, not two
					readOffsets(t, c, "s1", from+1, 1)
					f.appendN("s1", 50, 0) // the third within the linger: held, then written together
					readOffsets(t, c, "s1", from+2, 50)
					from += 52
					ahead.Add(int64(2 * linger))
					if took = time.Since(began); tc.linger <= 0 || took >= linger {
						break
					}
				}
				if tc.linger > 0 && took < linger {
					t.Fatalf("round %d: in five tries the 50 frames after the second came %v after it was appended, before the linger of its write (%v) ended", round, took, linger)
				}
			}
		})
	}
}
