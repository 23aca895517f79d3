package kafkabus_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fleethub/fleethub/hub"
)

// BenchmarkPublish measures synchronous Publish from many goroutines at
// once, one message or 100 messages per call, against an in-process kfake
// broker over TCP; concurrent calls share the writer's batches.
//
// Measured on 2 vCPU (AMD EPYC), 32 publishers, 100-byte values: one
// message per call ≈ 11–13k msgs/s, since each call waits for its batch,
// about 2.5 ms (BatchTimeout 2 ms + the round trip); 100 messages per call
// ≈ 470–660k msgs/s. B/op includes the in-process broker's allocations.
func BenchmarkPublish(b *testing.B) {
	const topic = "bench.locations"
	c := newCluster(b)
	bus := newBus(b, c, topic)
	keys := make([][]byte, 1000)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "vehicle-%04d", i)
	}
	value := make([]byte, 100) // about one encoded location
	for _, perCall := range []int{1, 100} {
		b.Run(fmt.Sprintf("parallel/msgs=%d", perCall), func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(16) // 16 × GOMAXPROCS publishers
			var seq atomic.Int64
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				msgs := make([]hub.Message, perCall)
				for pb.Next() {
					for i := range msgs {
						msgs[i] = hub.Message{Topic: topic, Key: keys[seq.Add(1)%int64(len(keys))], Value: value}
					}
					if err := bus.Publish(context.Background(), msgs...); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N*perCall)/time.Since(start).Seconds(), "msgs/s")
		})
	}
}
