package bustest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// variant is how a group member leaves before the next one joins.
type variant struct {
	name    string
	restart bool
}

// variants: a member leaves as its Subscribe's ctx ends, and, with
// f.Restart, as its bus closes and another opens over the same storage.
func variants(f Factory) []variant {
	vs := []variant{{name: "Cancel"}}
	if f.Restart {
		vs = append(vs, variant{name: "Restart", restart: true})
	}
	return vs
}

// leave makes m leave as v says, and returns the bus for the next member.
func (v variant) leave(t *testing.T, open func(*testing.T) hub.Bus, b hub.Bus, m *member) hub.Bus {
	t.Helper()
	if !v.restart {
		m.leave(t)
		return b
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := b.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	m.wait(t, true)
	return open(t)
}

// member is a running Subscribe call.
type member struct {
	cancel context.CancelFunc
	done   chan error
}

func join(t *testing.T, b hub.Bus, sub hub.Subscription, h hub.Handler) *member {
	ctx, cancel := context.WithCancel(context.Background())
	m := &member{cancel: cancel, done: make(chan error, 1)}
	go func() { m.done <- b.Subscribe(ctx, sub, h) }()
	t.Cleanup(cancel)
	return m
}

// leave ends the member's ctx and waits for its Subscribe to return (nil):
// its handler calls are over then.
func (m *member) leave(t *testing.T) {
	t.Helper()
	m.cancel()
	m.wait(t, false)
}

// wait waits for Subscribe to return; after the bus closed, it may return
// hub.ErrClosed.
func (m *member) wait(t *testing.T, closed bool) {
	t.Helper()
	timer := time.NewTimer(waitLimit)
	defer timer.Stop()
	select {
	case err := <-m.done:
		if err != nil && !(closed && errors.Is(err, hub.ErrClosed)) {
			t.Errorf("Subscribe returned %v", err)
		}
	case <-timer.C:
		t.Fatalf("Subscribe did not return within %v of its end", waitLimit)
	}
}
