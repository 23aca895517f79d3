package kafkabus

import (
	"testing"

	"github.com/segmentio/kafka-go"

	"github.com/fleethub/fleethub/hub"
)

func TestCommitOffset(t *testing.T) {
	holding := func(off int64) func(int) (int64, bool) {
		return func(p int) (int64, bool) { return off, p == 2 }
	}
	tests := []struct {
		name      string
		held      func(int) (int64, bool)
		partition int
		last      int64
		committed int64
		want      int64
		wantOK    bool
	}{
		{"no Held: after the batch", nil, 2, 41, 10, 42, true},
		{"nothing held in the partition", holding(5), 1, 41, 10, 42, true},
		{"held inside the batch", holding(20), 2, 41, 10, 20, true},
		{"held after the batch", holding(50), 2, 41, 10, 42, true},
		{"held at the committed offset", holding(10), 2, 41, 10, 10, false},
		{"held below the committed offset", holding(4), 2, 41, 10, 4, false},
		{"first commit of the partition", holding(0), 2, 41, -2, 0, true},
	}
	for _, tt := range tests {
		sub := hub.Subscription{Topic: "t", Held: tt.held}
		got, ok := commitOffset(sub, kafka.Message{Partition: tt.partition, Offset: tt.last}, tt.committed)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("%s: commitOffset = %d, %v; want %d, %v", tt.name, got, ok, tt.want, tt.wantOK)
		}
	}
}
