// Package keys serves API key management (fleet/keys) over HTTP: the
// handlers decode a request, call the key service and encode its answer;
// the service's errors map to the API's error codes here.
//
// Handlers hold nothing but the key service, set by New and only read
// afterwards; the service is safe for concurrent use, so the handlers
// serve any number of requests at once.
package keys

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/keys"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/store"
)

// CreateBody is the body of POST /v1/api-keys.
type CreateBody struct {
	Name         string   `json:"name" required:"true" doc:"1 to 200 characters, none of them a control character"`
	Environment  string   `json:"environment,omitempty" enum:"test,live" doc:"left out or null: the calling key's environment; the empty string is refused"`
	RateLimitRPM *int     `json:"rate_limit_rpm,omitempty" doc:"requests per minute, 1 to 60000000, in place of the plan's rate; absent: the plan's rate, else the environment's default (test 1000, live the starter plan's)"`
	Permissions  []string `json:"permissions" required:"true" doc:"each at most once: one given twice is refused with 400 validation_failed naming permissions[i]; a list with all beside others is stored as all" enum:"trips:read,trips:write,locations:write,analytics:read,fleet:read,fleet:write,devices:manage,routing:read,geocoding:read,maps:read,emergency:read,emergency:write,telemetry:write,events:write,streams:read,streams:manage,keys:manage,tokens:create,all"`
	Plan         string   `json:"plan,omitempty" enum:"starter,professional,enterprise,custom" doc:"left out or null: none (the environment's default rate, or custom with rate_limit_rpm); the empty string is refused"`
}

// KeyView is a key as listed: never the secret.
type KeyView struct {
	ID             string     `json:"id"`
	Name           string     `json:"name"`
	OrganizationID string     `json:"organization_id"`
	Environment    string     `json:"environment"`
	Permissions    []string   `json:"permissions"`
	Plan           string     `json:"plan" enum:"starter,professional,enterprise,custom,test" doc:"the plan the key was given; without one: custom when it has its own rate_limit_rpm, else test for a test key (1000 per minute), else starter"`
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
	rate, burst := domain.Limits(k.Env, k.Plan, k.RPM)
	v := KeyView{ID: k.ID, Name: k.Name, OrganizationID: k.Org, Environment: k.Env, Permissions: k.Permissions,
		Plan: domain.PlanName(k), RateLimitRPM: rate, Burst: burst, KeyHint: "..." + k.Hint, Status: "active", CreatedAt: k.CreatedAt}
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

// Handlers serve one key service.
type Handlers struct{ svc *domain.Service }

var _ api.Authenticator = (*domain.Service)(nil)

// New serves svc.
func New(svc *domain.Service) *Handlers { return &Handlers{svc: svc} }

// Routes returns the key management routes.
func (s *Handlers) Routes() []*api.Route {
	return []*api.Route{
		{Method: "POST", Path: "/v1/api-keys", Tag: "keys", Summary: "Create an API key (returned once); the calling key must be on the enterprise plan", Permission: "keys:manage",
			Request: CreateBody{}, Response: CreatedView{}, Status: 201, Handler: s.handleCreate},
		{Method: "GET", Path: "/v1/api-keys", Tag: "keys", Summary: "List the organization's keys of this environment (a live key: the test keys too)", Permission: "keys:manage",
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
			bad[f] = jsonpath.UnknownRefusal + "; allowed: " + strings.Join(settable, ", ")
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

func (s *Handlers) handleCreate(c *api.Ctx) error {
	var b CreateBody
	// "environment": "" and "plan": "" are values outside their sets,
	// named beside the request's other problems
	empty, err := c.BindValues(&b, false)
	if err != nil {
		return err
	}
	if bad := strayFields(c.PostBody()); bad != nil {
		return api.Refused(empty, bad)
	}
	p := c.Principal
	env := b.Environment
	if env == "" {
		env = p.Env // left out or null: the caller's
	}
	r := domain.CreateRequest{Org: p.Org, Env: env, Name: b.Name, Permissions: b.Permissions, Plan: b.Plan}
	if b.RateLimitRPM != nil {
		r.RPM = *b.RateLimitRPM
	}
	bad := r.Validate()
	if b.RateLimitRPM != nil && *b.RateLimitRPM == 0 {
		// 0 sent is a rate, not "absent": refused as out of range
		if bad == nil {
			bad = map[string]string{}
		}
		bad["rate_limit_rpm"] = domain.RPMRange
	}
	if empty != nil {
		return api.Refused(empty, bad)
	}
	if bad != nil {
		return api.Validation("validation_failed", bad)
	}
	if err := domain.CheckAPICreation(p); err != nil {
		return apiError(err)
	}
	r.Permissions = domain.NormalizePermissions(r.Permissions)
	if err := domain.CheckGrant(p, r); err != nil {
		return apiError(err)
	}
	created, err := s.svc.Create(c.Context(), r)
	if err != nil {
		return apiError(err)
	}
	return c.JSON(201, CreatedView{KeyView: view(created.Record), Key: created.Key})
}

func (s *Handlers) handleList(c *api.Ctx) error {
	org, env := c.Scope()
	var ks []store.APIKey
	for _, e := range domain.ManagedEnvs(env) {
		l, err := s.svc.List(c.Context(), store.Scope{Org: org, Env: e})
		if err != nil {
			return err
		}
		ks = append(ks, l...)
	}
	out := ListView{APIKeys: make([]KeyView, 0, len(ks)), Count: len(ks)}
	for _, k := range ks {
		out.APIKeys = append(out.APIKeys, view(k))
	}
	return c.JSON(200, out)
}

func (s *Handlers) handleRevoke(c *api.Ctx) error {
	org, env := c.Scope()
	var sc store.Scope
	var target store.APIKey
	err := store.ErrNotFound
	for _, e := range domain.ManagedEnvs(env) {
		sc = store.Scope{Org: org, Env: e}
		if target, err = s.svc.Get(c.Context(), sc, c.PathParam("key_id")); !errors.Is(err, store.ErrNotFound) {
			break
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("key_not_found", "API key %s not found", c.PathParam("key_id"))
	}
	if err != nil {
		return err
	}
	if err := domain.CheckRevoke(c.Principal, target); err != nil {
		return apiError(err)
	}
	k, err := s.svc.Revoke(c.Context(), sc, target.ID)
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("key_not_found", "API key %s not found", c.PathParam("key_id"))
	}
	if err != nil {
		return err
	}
	return c.JSON(200, view(k))
}

// apiError maps the key service's refusals to the API's errors.
func apiError(err error) error {
	var pe *domain.PermissionError
	var ve *domain.ValidationError
	switch {
	case errors.As(err, &pe):
		return api.Errf("insufficient_permissions", "%s", pe.Message).WithDetails(pe.Details)
	case errors.As(err, &ve):
		return api.Validation("validation_failed", ve.Fields)
	}
	return err
}
