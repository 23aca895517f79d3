package hub

import "testing"

// countingStreams answers one stream and counts the look-ups.
type countingStreams struct {
	info    StreamInfo
	found   bool
	lookups int
}

func (s *countingStreams) Stream(org, env, id string) (StreamInfo, bool) {
	s.lookups++
	return s.info, s.found
}

// versionedStreams is countingStreams with a version.
type versionedStreams struct {
	countingStreams
	version uint64
}

func (s *versionedStreams) Version() uint64 { return s.version }

// TestStreamCache: with Versioned streams the stream is looked up again
// only once the version moved (a pause is seen at the next call after
// it), and a missing stream on every call; with other streams, on every
// call.
func TestStreamCache(t *testing.T) {
	v := &versionedStreams{countingStreams: countingStreams{info: StreamInfo{ID: "s1", State: StateActive}, found: true}}
	var c StreamCache
	for range 3 {
		if info, ok := c.Stream(v, "o", "e", "s1"); !ok || info.State != StateActive {
			t.Fatalf("got %+v, %v", info, ok)
		}
	}
	if v.lookups != 1 {
		t.Errorf("%d look-ups for three calls with no change, want 1", v.lookups)
	}
	v.info.State, v.version = StatePaused, v.version+1
	if info, _ := c.Stream(v, "o", "e", "s1"); info.State != StatePaused || v.lookups != 2 {
		t.Errorf("after a change: state %s after %d look-ups, want paused after 2", info.State, v.lookups)
	}
	v.found, v.version = false, v.version+1
	for range 2 {
		if _, ok := c.Stream(v, "o", "e", "s1"); ok {
			t.Error("a dropped stream is still found")
		}
	}
	if v.lookups != 4 {
		t.Errorf("%d look-ups, want a look-up on every call for a missing stream (4)", v.lookups)
	}

	p := &countingStreams{info: StreamInfo{ID: "s1", State: StateActive}, found: true}
	var pc StreamCache
	for range 3 {
		pc.Stream(p, "o", "e", "s1")
	}
	if p.lookups != 3 {
		t.Errorf("%d look-ups of streams without a version for three calls, want 3", p.lookups)
	}
}
