package keys_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/fleethub/fleethub/fleet/keys"
)

// FuzzCreateRequest feeds arbitrary key requests to their check. It
// never panics, names only the request's fields, and a request it accepts
// makes a key that can be stored and used: an organization and a name
// that are text, a known environment and plan, each permission known and
// given once, and a rate the limiter takes.
func FuzzCreateRequest(f *testing.F) {
	fields := []string{"organization_id", "environment", "name", "permissions", "plan", "rate_limit_rpm"}
	f.Fuzz(func(t *testing.T, org, env, name, perms, plan string, rpm int) {
		r := keys.CreateRequest{Org: org, Env: env, Name: name, Plan: plan, RPM: rpm}
		if perms != "" {
			r.Permissions = strings.Split(perms, ",")
		}
		bad := r.Validate()
		for k, v := range bad {
			if v == "" || !slices.Contains(fields, strings.SplitN(k, "[", 2)[0]) {
				t.Fatalf("refusal %q: %q", k, v)
			}
		}
		if bad != nil {
			return
		}
		switch {
		case strings.TrimSpace(org) == "" || utf8.RuneCountInString(org) > 200,
			strings.TrimSpace(name) == "" || utf8.RuneCountInString(name) > 200,
			env != "test" && env != "live",
			len(r.Permissions) == 0,
			rpm < 0 || rpm > keys.MaxRPM,
			plan == "custom" && rpm == 0:
			t.Fatalf("accepted %+v", r)
		}
		for i, p := range r.Permissions {
			if p != "all" && !slices.Contains(keys.Permissions, p) || slices.Contains(r.Permissions[:i], p) {
				t.Fatalf("accepted permission %q at %d", p, i)
			}
		}
		if plan != "" && !slices.Contains(keys.PlanNames, plan) {
			t.Fatalf("accepted plan %q", plan)
		}
	})
}
