package kafkabus_test

import (
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/bustest"
	"github.com/fleethub/fleethub/hub/kafkabus"
)

// TestContract runs the bus contract on an in-process Kafka (kfake) per
// case. A bus is one member of a group, so each member of a group gets a
// bus of its own; a restart closes a bus and connects another to the same
// cluster.
func TestContract(t *testing.T) {
	t.Parallel()
	bustest.Run(t, bustest.Factory{
		Storage: func(t *testing.T, partitions int) func(*testing.T) hub.Bus {
			c := newCluster(t)
			return func(t *testing.T) hub.Bus {
				return newBusConfig(t, c, kafkabus.Config{Partitions: partitions}, bustest.Topic)
			}
		},
		Restart: true,
	})
}
