package keys

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/store"
)

// CreateBody is the body of POST /v1/api-keys.
type CreateBody struct {
	Name         string   `json:"name" required:"true"`
	Environment  string   `json:"environment,omitempty" enum:"test,live" doc:"defaults to the calling key's environment"`
	RateLimitRPM int      `json:"rate_limit_rpm,omitempty"`
	Permissions  []string `json:"permissions" required:"true"`
	Plan         string   `json:"plan,omitempty" enum:"starter,professional,enterprise,custom"`
}

// KeyView is a key as listed: never the secret.
type KeyView struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	OrganizationID string     `json:"organization_id"`
	Environment    string     `json:"environment"`
	Permissions    []string   `json:"permissions"`
	Plan           string     `json:"plan"`
	RateLimitRPM   int        `json:"rate_limit_rpm"`
	Burst          int        `json:"burst"`
	KeyHint        string     `json:"key_hint"`
	Status         string     `json:"status" enum:"active,revoked"`
	CreatedAt      time.Time  `json:"created_at"`
	LastUsedAt     *time.Time `json:"last_used_at"`
	RevokedAt      *time.Time `json:"revoked_at"`
}

// CreatedView is the response of key creation: the key, shown once.
type CreatedView struct {
	KeyView
	Key string `json:"key"`
}

// ListView is the response of GET /v1/api-keys.
type ListView struct {
	APIKeys []KeyView `json:"api_keys"`
	Count   int       `json:"count"`
}

func view(k store.APIKey) KeyView {
	rate, burst := Limits(k.Env, k.Plan, k.RPM)
	v := KeyView{ID: k.ID, Name: k.Name, OrganizationID: k.Org, Environment: k.Env, Permissions: k.Permissions,
		Plan: planName(k), RateLimitRPM: rate, Burst: burst, KeyHint: "..." + k.Hint, Status: "active", CreatedAt: k.CreatedAt}
	if !k.LastUsedAt.IsZero() {
		t := k.LastUsedAt
		v.LastUsedAt = &t
	}
	if !k.RevokedAt.IsZero() {
		t := k.RevokedAt
		v.RevokedAt = &t
		v.Status = "revoked"
	}
	return v
}

// Routes returns the key management routes.
func (s *Service) Routes() []*api.Route {
	return []*api.Route{
		{Method: "POST", Path: "/v1/api-keys", Tag: "keys", Summary: "Create an API key (returned once)", Permission: "keys:manage",
			Request: CreateBody{}, Response: CreatedView{}, Status: 201, Handler: s.handleCreate},
		{Method: "GET", Path: "/v1/api-keys", Tag: "keys", Summary: "List the organization's keys of this environment", Permission: "keys:manage",
			Response: ListView{}, Handler: s.handleList},
		{Method: "DELETE", Path: "/v1/api-keys/{key_id}", Tag: "keys", Summary: "Revoke a key", Permission: "keys:manage",
			Params: []api.Param{{Name: "key_id", In: "path", Type: "string", Required: true}}, Response: KeyView{}, Handler: s.handleRevoke},
	}
}

// settable are the body fields a caller may send when creating a key; the
// server sets every other field of the record (serverSet), and either kind
// of stray field is refused rather than ignored.
var (
	settable  = []string{"name", "environment", "rate_limit_rpm", "permissions", "plan"}
	serverSet = []string{"id", "organization_id", "key", "key_hint", "burst", "status", "created_at", "last_used_at", "revoked_at"}
)

// strayFields names the top-level fields of body a caller may not set.
func strayFields(body []byte) map[string]string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return nil // the typed decode reports the malformed body
	}
	bad := map[string]string{}
	for f := range fields {
		switch {
		case slices.Contains(settable, f):
		case slices.Contains(serverSet, f):
			bad[f] = "is set by the server and cannot be sent"
		default:
			bad[f] = "unknown field; allowed: " + strings.Join(settable, ", ")
		}
		if len(bad) == 10 {
			break
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return bad
}

func (s *Service) handleCreate(c *api.Ctx) error {
	var b CreateBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	if bad := strayFields(c.PostBody()); bad != nil {
		return api.Validation("validation_failed", bad)
	}
	p := c.Principal
	env := b.Environment
	if env == "" {
		env = p.Env
	}
	r := CreateRequest{Org: p.Org, Env: env, Name: b.Name, Permissions: b.Permissions, Plan: b.Plan, RPM: b.RateLimitRPM}
	if bad := r.Validate(); bad != nil {
		return api.Validation("validation_failed", bad)
	}
	r.Permissions = NormalizePermissions(r.Permissions)
	if err := CheckGrant(p, r); err != nil {
		return err
	}
	created, err := s.Create(c.Context(), r)
	if err != nil {
		return err
	}
	return c.JSON(201, CreatedView{KeyView: view(created.Record), Key: created.Key})
}

func (s *Service) handleList(c *api.Ctx) error {
	org, env := c.Scope()
	ks, err := s.List(c.Context(), store.Scope{Org: org, Env: env})
	if err != nil {
		return err
	}
	out := ListView{APIKeys: make([]KeyView, 0, len(ks)), Count: len(ks)}
	for _, k := range ks {
		out.APIKeys = append(out.APIKeys, view(k))
	}
	return c.JSON(200, out)
}

func (s *Service) handleRevoke(c *api.Ctx) error {
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	target, err := s.Get(c.Context(), sc, c.PathParam("key_id"))
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("key_not_found", "API key %s not found", c.PathParam("key_id"))
	}
	if err != nil {
		return err
	}
	if err := CheckRevoke(c.Principal, target); err != nil {
		return err
	}
	k, err := s.Revoke(c.Context(), sc, target.ID)
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("key_not_found", "API key %s not found", c.PathParam("key_id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(200, view(k))
}
