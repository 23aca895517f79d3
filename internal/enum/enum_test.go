package enum_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/enum"
)

func TestAll(t *testing.T) {
	for _, c := range []struct {
		fields map[string]string
		want   bool
	}{
		{nil, false},
		{map[string]string{"status": enum.Refusal("active", "paused")}, true},
		{map[string]string{"status": enum.Refusal("active"), "roles[1]": enum.Refusal("driver", "dispatcher")}, true},
		{map[string]string{"status": enum.Refusal("active"), "limit": "must be between 1 and 10"}, false},
		{map[string]string{"name": "is required"}, false},
	} {
		if got := enum.All(c.fields); got != c.want {
			t.Errorf("All(%v) = %v, want %v", c.fields, got, c.want)
		}
	}
	if got := enum.Refusal("a", "b", "c"); got != "must be one of a, b, c" {
		t.Errorf("Refusal = %q", got)
	}
}

func TestRequired(t *testing.T) {
	for v, want := range map[string]string{"": "is required", "a": "", "c": "must be one of a, b"} {
		if got := enum.Required(v, "a", "b"); got != want {
			t.Errorf("Required(%q) = %q, want %q", v, got, want)
		}
	}
}
