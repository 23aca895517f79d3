package api_test

import (
	"testing"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/enum"
)

// TestFieldsCode: validation_failed whose every problem is a value outside
// a fixed set is invalid_request; any other problem, one left out of the
// list, or another code keeps the code given.
func TestFieldsCode(t *testing.T) {
	unknown := enum.Refusal("a", "b")
	for _, c := range []struct {
		name   string
		code   string
		fields map[string]string
		more   int
		want   string
	}{
		{"one unknown value", "validation_failed", map[string]string{"status": unknown}, 0, "invalid_request"},
		{"two unknown values", "validation_failed", map[string]string{"roles[0]": unknown, "roles[2]": unknown}, 0, "invalid_request"},
		{"beside a range", "validation_failed", map[string]string{"status": unknown, "limit": "must be between 1 and 10"}, 0, "validation_failed"},
		{"more not listed", "validation_failed", map[string]string{"status": unknown}, 3, "validation_failed"},
		{"a missing field", "validation_failed", map[string]string{"name": "is required"}, 0, "validation_failed"},
		{"none", "validation_failed", nil, 0, "validation_failed"},
		{"the single upload", "invalid_location", map[string]string{"network_type": unknown}, 0, "invalid_location"},
	} {
		if got := api.FieldsCode(c.code, c.fields, c.more); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if e := api.Validation("validation_failed", map[string]string{"status": unknown}); e.Code != "invalid_request" || e.Status != 400 || e.Message != "status: "+unknown {
		t.Errorf("Validation: %d %s %q", e.Status, e.Code, e.Message)
	}
}
