package ratelimit_test

import (
	"errors"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/ratelimit"
)

func TestPacerReserve(t *testing.T) {
	// 10 a second (one token per 100ms), 3 banked.
	tenPerSecond := ratelimit.Limit{Rate: 10, Burst: 3, Window: time.Second}
	type res struct {
		advance time.Duration
		want    time.Duration
	}
	tests := []struct {
		name  string
		lim   ratelimit.Limit
		steps []res
	}{
		{
			name: "burst, then callers queue up in turn",
			lim:  tenPerSecond,
			steps: []res{
				{0, 0}, {0, 0}, {0, 0},
				{0, 100 * time.Millisecond},
				{0, 200 * time.Millisecond},
				{0, 300 * time.Millisecond},
			},
		},
		{
			name: "debt refills with time",
			lim:  tenPerSecond,
			steps: []res{
				{0, 0}, {0, 0}, {0, 0},
				{0, 100 * time.Millisecond},
				{150 * time.Millisecond, 50 * time.Millisecond}, // 150ms paid 1.5 tokens of 2 owed
				{time.Second, 0},                                // full again: 3 banked
				{0, 0},
				{0, 0},
				{0, 100 * time.Millisecond},
			},
		},
		{
			name: "refill is capped at the burst",
			lim:  tenPerSecond,
			steps: []res{
				{time.Hour, 0}, {0, 0}, {0, 0},
				{0, 100 * time.Millisecond},
			},
		},
		{
			name: "a clock stepping back waits longer",
			lim:  tenPerSecond,
			steps: []res{
				{0, 0}, {0, 0}, {0, 0},
				{-time.Second, time.Second + 100*time.Millisecond},
			},
		},
		{
			name: "burst 0 is twice the rate",
			lim:  ratelimit.Limit{Rate: 1, Window: time.Second},
			steps: []res{
				{0, 0}, {0, 0},
				{0, time.Second},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ratelimit.NewPacer(tt.lim)
			if err != nil {
				t.Fatal(err)
			}
			now := epoch
			for i, s := range tt.steps {
				now = now.Add(s.advance)
				if got := p.Reserve(now); got != s.want {
					t.Fatalf("step %d: Reserve = %v, want %v", i, got, s.want)
				}
			}
		})
	}
}

func TestPacerCopyIsAFullBucket(t *testing.T) {
	proto, err := ratelimit.NewPacer(ratelimit.Limit{Rate: 1, Burst: 1, Window: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	a, b := proto, proto
	if a.Reserve(epoch) != 0 || a.Reserve(epoch) != time.Second {
		t.Fatal("a: want one token, then a second's wait")
	}
	if got := b.Reserve(epoch); got != 0 {
		t.Fatalf("b shares a's bucket: Reserve = %v", got)
	}
}

func TestPacerZeroValueNeverWaits(t *testing.T) {
	var p ratelimit.Pacer
	for range 1000 {
		if got := p.Reserve(epoch); got != 0 {
			t.Fatalf("Reserve = %v", got)
		}
	}
}

func TestNewPacerInvalid(t *testing.T) {
	for _, lim := range []ratelimit.Limit{
		{Rate: 0},
		{Rate: 1, Burst: -1},
		{Rate: 2, Window: time.Nanosecond},
		{Rate: 1, Burst: 1 << 40, Window: time.Hour},
	} {
		if _, err := ratelimit.NewPacer(lim); !errors.Is(err, ratelimit.ErrInvalid) {
			t.Errorf("NewPacer(%+v) = %v, want ErrInvalid", lim, err)
		}
	}
}
