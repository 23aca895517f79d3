package embedbus_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/embedbus"
)

// TestHealthFollowsTheDisk: the bus is healthy while its writes succeed;
// degraded once its directory takes no new file; unhealthy once a publish
// failed to be written, until one is again; unhealthy once closed.
func TestHealthFollowsTheDisk(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "bus")
	b, err := embedbus.Open(embedbus.Config{Dir: dir, Partitions: 1, SegmentBytes: 512})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	var _ hub.HealthReporter = b
	msg := hub.Message{Topic: "t", Key: []byte("k"), Value: []byte(strings.Repeat("x", 200))}
	if err := b.Publish(ctx, msg); err != nil {
		t.Fatal(err)
	}
	if got := b.Health(ctx); got != "healthy" {
		t.Fatalf("after a publish: %s", got)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if got := b.Health(ctx); got != "degraded" {
		t.Errorf("with its directory gone: %s, want degraded", got)
	}
	var failed error
	for range 10 { // past the segment: the log needs a new file
		if failed = b.Publish(ctx, msg); failed != nil {
			break
		}
	}
	if failed == nil {
		t.Fatal("publishing past the segment without a directory succeeded")
	}
	if got := b.Health(ctx); got != "unhealthy" {
		t.Errorf("after a publish failed (%v): %s, want unhealthy", failed, got)
	}

	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := b.Publish(ctx, msg); err != nil {
		t.Fatalf("publish once the directory is back: %v", err)
	}
	if got := b.Health(ctx); got != "healthy" {
		t.Errorf("once publishing works again: %s, want healthy", got)
	}

	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if got := b.Health(ctx); got != "unhealthy" {
		t.Errorf("closed: %s, want unhealthy", got)
	}
}

// TestHealthInMemory: a bus in memory is healthy until closed.
func TestHealthInMemory(t *testing.T) {
	ctx := context.Background()
	b := embedbus.New(embedbus.Config{})
	if got := b.Health(ctx); got != "healthy" {
		t.Errorf("open: %s", got)
	}
	b.Close(ctx)
	if got := b.Health(ctx); got != "unhealthy" {
		t.Errorf("closed: %s, want unhealthy", got)
	}
}
