package embedbus_test

import (
	"context"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/bustest"
	"github.com/fleethub/fleethub/hub/embedbus"
)

// TestContract runs the bus contract on a bus in memory and on a durable
// one, whose restart variants close it and open it again over its
// directory.
func TestContract(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		t.Parallel()
		bustest.Run(t, bustest.Factory{
			Storage: func(t *testing.T, partitions int) func(*testing.T) hub.Bus {
				opened := false
				return func(t *testing.T) hub.Bus {
					if opened {
						t.Fatal("bustest opened a second bus over an in-memory one")
					}
					opened = true
					b := embedbus.New(embedbus.Config{Partitions: partitions})
					t.Cleanup(func() { b.Close(context.Background()) })
					return b
				}
			},
			MembersPerBus: true,
		})
	})
	t.Run("Dir", func(t *testing.T) {
		t.Parallel()
		bustest.Run(t, bustest.Factory{
			Storage: func(t *testing.T, partitions int) func(*testing.T) hub.Bus {
				dir := t.TempDir()
				return func(t *testing.T) hub.Bus {
					// a small MaxBatch hands the cases' messages over in several batches
					b, err := embedbus.Open(embedbus.Config{Dir: dir, Partitions: partitions, MaxBatch: 7})
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() {
						if err := b.Close(context.Background()); err != nil {
							t.Errorf("close: %v", err)
						}
					})
					return b
				}
			},
			MembersPerBus: true,
			Restart:       true,
		})
	})
}
