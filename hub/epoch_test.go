package hub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedlog"
)

func TestValidEpoch(t *testing.T) {
	for s, want := range map[string]bool{"0123456789abcdef": true, "A-z_9": true, strings.Repeat("e", 64): true,
		"": false, strings.Repeat("e", 65): false, "a b": false, "a.b": false, "é": false, "a\n": false} {
		if hub.ValidEpoch(s) != want {
			t.Errorf("ValidEpoch(%q) != %v", s, want)
		}
	}
}

// TestResume: where delivery of a stream goes on for a client's offset
// and epoch, as the websocket and the event stream both resume.
func TestResume(t *testing.T) {
	ctx := context.Background()
	log := embedlog.New(embedlog.Config{})
	defer log.Close()
	if _, err := log.Append(ctx, "s", [][]byte{[]byte(`1`), []byte(`2`), []byte(`3`), []byte(`4`), []byte(`5`)}); err != nil {
		t.Fatal(err)
	}
	cur, err := log.Epoch(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	at := func(n int64) *int64 { return &n }
	for _, c := range []struct {
		name  string
		after *int64
		epoch string
		want  hub.Position
	}{
		{"live", nil, "", hub.Position{Next: 6, Epoch: cur}},
		{"live, the epoch named", nil, cur, hub.Position{Next: 6, Epoch: cur}},
		{"after an offset", at(3), "", hub.Position{Next: 4, Epoch: cur}},
		{"after an offset of the epoch", at(3), cur, hub.Position{Next: 4, Epoch: cur}},
		{"after the head", at(5), cur, hub.Position{Next: 6, Epoch: cur}},
		{"past the head: back to it", at(99), cur, hub.Position{Next: 6, Epoch: cur}},
		{"from the start", at(0), cur, hub.Position{Next: 1, Epoch: cur}},
		{"another epoch: the oldest retained, lost", at(3), "another-history", hub.Position{Next: 1, Epoch: cur, Lost: true}},
		{"another epoch, live", nil, "another-history", hub.Position{Next: 1, Epoch: cur, Lost: true}},
	} {
		got, err := hub.Resume(ctx, log, "s", c.after, c.epoch)
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.name, got, err, c.want)
		}
	}
	// a stream that retains nothing goes on at its next offset
	if got, err := hub.Resume(ctx, log, "empty", at(7), "another-history"); err != nil || got != (hub.Position{Next: 1, Epoch: cur, Lost: true}) {
		t.Errorf("an empty stream, another epoch: %+v %v", got, err)
	}
	for id, want := range map[string]int64{"s": 1, "empty": 1} {
		if got, err := hub.FirstAvailable(ctx, log, id); err != nil || got != want {
			t.Errorf("FirstAvailable(%s) = %d %v, want %d", id, got, err, want)
		}
	}
}
