package bench

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
)

// Broker runs an in-process Kafka-protocol broker (franz-go's kfake) on
// 127.0.0.1 until ctx ends, so `serve --kafka-brokers` can be measured on
// a machine without Kafka. It prints the broker address list first. With
// dir it keeps its log, offsets and groups there, each write synced before
// it is acknowledged, so a broker killed and started again over the same
// dir has what it acknowledged, as a Kafka broker restarted would.
func Broker(ctx context.Context, port int, dir string, w io.Writer) error {
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.DefaultNumPartitions(8)}
	if port > 0 {
		opts = append(opts, kfake.Ports(port))
	}
	if dir != "" {
		opts = append(opts, kfake.DataDir(dir), kfake.SyncWrites())
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		return fmt.Errorf("bench: broker: %w", err)
	}
	defer c.Close()
	fmt.Fprintln(w, strings.Join(c.ListenAddrs(), ","))
	<-ctx.Done()
	return nil
}
