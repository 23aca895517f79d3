package apitime_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
)

func TestParseHoldsToRFC3339(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string // UTC, "" when refused
	}{
		{"2026-01-01T10:00:00Z", "2026-01-01T10:00:00Z"},
		{"2026-01-01T10:00:00.123456789Z", "2026-01-01T10:00:00.123456789Z"},
		{"2026-01-01T10:00:00+23:59", "2025-12-31T10:01:00Z"},
		{"2026-01-01T10:00:00-05:30", "2026-01-01T15:30:00Z"},
		{"2026-01-01T10:00:00+24:00", ""},
		{"2026-01-01T10:00:00+05:60", ""},
		{"2026-01-01T10:00:00-99:00", ""},
		{"2026-01-01T10:00:00,5Z", ""},
		{"2026-01-01T24:00:00Z", ""},
		{"2026-01-01t10:00:00z", ""},
		{"2026-01-01", ""},
		{"", ""},
	} {
		got, err := apitime.Parse(c.in)
		switch {
		case c.want == "" && err == nil:
			t.Errorf("Parse(%q) = %v, want refused", c.in, got)
		case c.want != "" && err != nil:
			t.Errorf("Parse(%q): %v", c.in, err)
		case c.want != "" && got.UTC().Format(time.RFC3339Nano) != c.want:
			t.Errorf("Parse(%q) = %v, want %s", c.in, got.UTC(), c.want)
		}
	}
}

// FuzzParse: whatever Parse takes, time.Parse takes too and reads the
// same instant, and its offset is under a day; Strict never panics.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"2026-01-01T10:00:00Z", "2026-01-01T10:00:00+24:00", "2026-01-01T10:00:00,5Z", "2026-01-01T10:00:00.5-05:30", "x", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		_ = apitime.Strict(s)
		got, err := apitime.Parse(s)
		if err != nil {
			return
		}
		want, err := time.Parse(time.RFC3339Nano, s)
		if err != nil || !want.Equal(got) {
			t.Fatalf("Parse(%q) = %v; time.Parse: %v, %v", s, got, want, err)
		}
		if _, off := got.Zone(); off <= -24*3600 || off >= 24*3600 {
			t.Fatalf("Parse(%q): offset %d s", s, off)
		}
	})
}
