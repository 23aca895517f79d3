package webhook

import (
	"net/http"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, c := range []struct {
		in   string
		want time.Duration
	}{
		{"", 0}, {"0", 0}, {"-5", 0}, {"120", 2 * time.Minute}, {" 7 ", 7 * time.Second}, {"soon", 0},
		{now.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second}, {now.Add(-time.Hour).Format(http.TimeFormat), 0},
		{"99999999999", 365 * 24 * time.Hour},
	} {
		if got := retryAfter(c.in, now); got != c.want {
			t.Errorf("retryAfter(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func FuzzRetryAfter(f *testing.F) {
	for _, s := range []string{"", "0", "120", "Wed, 21 Oct 2015 07:28:00 GMT", "-1", "1e9", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, v string) {
		if d := retryAfter(v, now); d < 0 || d > 366*24*time.Hour {
			t.Fatalf("retryAfter(%q) = %v", v, d)
		}
	})
}

func TestBackoffFollowsTheSchedule(t *testing.T) {
	cfg := Config{Schedule: []time.Duration{time.Second, 4 * time.Second}, MaxRetryAfter: time.Hour}
	cfg.defaults()
	d := &Dispatcher{cfg: cfg}
	for n, step := range map[int]time.Duration{1: time.Second, 2: 4 * time.Second, 9: 4 * time.Second} {
		for range 200 {
			if w := d.backoff(n, 0); w < 0 || w > step {
				t.Fatalf("backoff(%d) = %v, want within [0, %v]", n, w, step)
			}
		}
	}
	if w := d.backoff(1, 30*time.Second); w != 30*time.Second {
		t.Errorf("Retry-After 30s: backoff %v", w)
	}
	if w := d.backoff(1, 2*time.Hour); w != time.Hour {
		t.Errorf("Retry-After beyond MaxRetryAfter: backoff %v", w)
	}
	var sum time.Duration
	for _, s := range DefaultSchedule {
		sum += s
	}
	if sum < 23*time.Hour || DefaultRetryFor < 24*time.Hour {
		t.Errorf("default schedule sums to %v, retry window %v", sum, DefaultRetryFor)
	}
}
