package keys_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store"
)

func TestCheckGrant(t *testing.T) {
	starter := &apikey.Principal{Env: "live", Plan: "starter", Permissions: []string{"keys:manage", "trips:read"}, Rate: 100}
	root := &apikey.Principal{Env: "live", Plan: "enterprise", Permissions: []string{"all"}, Rate: 2000}
	testRoot := &apikey.Principal{Env: "test", Plan: "test", Permissions: []string{"all"}, Rate: 1000}
	custom := &apikey.Principal{Env: "live", Plan: "custom", Permissions: []string{"all"}, Rate: 3000}
	req := func(env, plan string, rpm int, perms ...string) keys.CreateRequest {
		return keys.CreateRequest{Org: "o", Env: env, Name: "n", Permissions: perms, Plan: plan, RPM: rpm}
	}
	for _, c := range []struct {
		name    string
		creator *apikey.Principal
		r       keys.CreateRequest
		field   string // "" when allowed
	}{
		{"held subset", starter, req("live", "", 0, "trips:read"), ""},
		{"same plan and rate", starter, req("live", "starter", 100, "keys:manage"), ""},
		{"all from non-all", starter, req("live", "", 0, "all"), "permissions"},
		{"unheld", starter, req("live", "", 0, "fleet:read"), "permissions"},
		{"plan above", starter, req("live", "professional", 0, "trips:read"), "plan"},
		{"rpm above", starter, req("live", "", 101, "trips:read"), "rate_limit_rpm"},
		{"test default above starter rate", starter, req("test", "", 0, "trips:read"), "rate_limit_rpm"},
		{"test env below", starter, req("test", "", 100, "trips:read"), ""},
		{"root anything within", root, req("live", "enterprise", 2000, "all"), ""},
		{"root rpm above", root, req("live", "", 2001, "all"), "rate_limit_rpm"},
		{"test creates live", testRoot, req("live", "", 0, "trips:read"), "environment"},
		{"test creates test", testRoot, req("test", "", 0, "all"), ""},
		{"test plan ranks starter", testRoot, req("test", "professional", 0, "all"), "plan"},
		{"custom ranks starter", custom, req("live", "professional", 0, "all"), "plan"},
		{"custom rate within", custom, req("live", "custom", 3000, "all"), ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := keys.CheckGrant(c.creator, c.r)
			if c.field == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *keys.PermissionError
			if !errors.As(err, &e) {
				t.Fatalf("err %v, want a keys.PermissionError", err)
			}
			if e.Details[c.field] == "" {
				t.Errorf("details %v lack %s", e.Details, c.field)
			}
		})
	}
}

// TestCheckAPICreation: only a key on the enterprise plan creates keys
// through the API; every other plan, the defaults included, is refused
// naming the plan.
func TestCheckAPICreation(t *testing.T) {
	for _, c := range []struct {
		plan string
		ok   bool
	}{
		{"enterprise", true}, {"professional", false}, {"starter", false}, {"custom", false}, {"test", false}, {"", false},
	} {
		err := keys.CheckAPICreation(&apikey.Principal{Env: "live", Plan: c.plan, Permissions: []string{"all"}, Rate: 1e6})
		if c.ok {
			if err != nil {
				t.Errorf("%q: refused: %v", c.plan, err)
			}
			continue
		}
		var e *keys.PermissionError
		if !errors.As(err, &e) || e.Details["plan"] == "" || e.Details["required_plan"] != "enterprise" {
			t.Errorf("%q: %v, want a refusal naming the plan", c.plan, err)
		}
	}
}

func TestCheckRevoke(t *testing.T) {
	manager := &apikey.Principal{Permissions: []string{"keys:manage", "trips:read"}}
	root := &apikey.Principal{Permissions: []string{"all"}}
	for _, c := range []struct {
		caller *apikey.Principal
		target []string
		ok     bool
	}{
		{manager, []string{"trips:read"}, true},
		{manager, []string{"keys:manage", "trips:read"}, true},
		{manager, []string{"all"}, false},
		{manager, []string{"trips:read", "fleet:read"}, false},
		{root, []string{"all"}, true},
	} {
		err := keys.CheckRevoke(c.caller, store.APIKey{Permissions: c.target})
		if (err == nil) != c.ok {
			t.Errorf("%v revoking %v: %v", c.caller.Permissions, c.target, err)
		}
	}
}

func TestNormalizePermissions(t *testing.T) {
	many := slices.Repeat([]string{"trips:read", "maps:read"}, 50_000)
	for _, c := range []struct{ in, want []string }{
		{many, []string{"trips:read", "maps:read"}},
		{[]string{"trips:read", "all", "maps:read"}, []string{"all"}},
		{nil, []string{}},
	} {
		if got := keys.NormalizePermissions(c.in); !slices.Equal(got, c.want) {
			t.Errorf("%d entries: %v, want %v", len(c.in), got, c.want)
		}
	}
}

func TestValidateNamesUnknownOnce(t *testing.T) {
	perms := append(slices.Repeat([]string{"bogus:perm"}, 100_000), "trips:read", "other:perm")
	r := keys.CreateRequest{Org: "o", Env: "live", Name: "n", Permissions: perms}
	bad := r.Validate()
	if len(bad) != 2 || !strings.Contains(bad["permissions[0]"], "bogus:perm") || !strings.Contains(bad["permissions[100001]"], "other:perm") {
		t.Fatalf("details %v", bad)
	}
	// each with the known set
	for _, k := range []string{"permissions[0]", "permissions[100001]"} {
		for _, p := range append(slices.Clone(keys.Permissions), "all") {
			if !strings.Contains(bad[k], p) {
				t.Errorf("details[%s] %q lacks %s", k, bad[k], p)
			}
		}
	}
	many := make([]string, 50)
	for i := range many {
		many[i] = "x:" + strings.Repeat("y", i+1)
	}
	r.Permissions = many
	if bad := r.Validate(); len(bad) != 10 || !strings.HasSuffix(bad["permissions[9]"], `(not "x:yyyyyyyyyy"; more unknown permissions follow, not named)`) {
		t.Fatalf("%d details: %v", len(bad), bad)
	}
}

// TestValidateRefusesRepeatedPermissions: a known permission listed again
// is refused at its second index, each once however often it repeats,
// as a token refuses a scope or stream id given twice; an unknown one
// repeated is named once as unknown, at its first index.
func TestValidateRefusesRepeatedPermissions(t *testing.T) {
	for _, c := range []struct {
		perms []string
		want  map[string]string
	}{
		{[]string{"trips:read", "maps:read", "trips:read"}, map[string]string{"permissions[2]": keys.PermissionRepeated}},
		{slices.Repeat([]string{"trips:read", "maps:read"}, 50_000),
			map[string]string{"permissions[2]": keys.PermissionRepeated, "permissions[3]": keys.PermissionRepeated}},
		{[]string{"all", "all"}, map[string]string{"permissions[1]": keys.PermissionRepeated}},
		{[]string{"trips:read", "all"}, nil},
		{[]string{"trips:read", "maps:read"}, nil},
	} {
		r := keys.CreateRequest{Org: "o", Env: "live", Name: "n", Permissions: c.perms}
		if got := r.Validate(); !maps.Equal(got, c.want) {
			t.Errorf("%d permissions %.40v: %v, want %v", len(c.perms), c.perms, got, c.want)
		}
	}
	r := keys.CreateRequest{Org: "o", Env: "live", Name: "n", Permissions: []string{"bogus:perm", "trips:read", "bogus:perm"}}
	if bad := r.Validate(); len(bad) != 1 || !strings.Contains(bad["permissions[0]"], "bogus:perm") {
		t.Errorf("a repeated unknown permission: %v, want it named once, at its first index", bad)
	}
}
