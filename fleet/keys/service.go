// Package keys manages API keys: creation, listing, revocation, and the
// authenticator every request goes through (api/keys serves it over
// HTTP). A Service is safe for concurrent use: its cache of keys is
// guarded by a read-write lock, and Authenticate on a cached key takes
// only the read lock and allocates nothing.
//
// Authentication hashes the presented key (HMAC-SHA-256 under the server
// secret) and looks the hash up in an in-memory cache filled from the
// store. A cached entry is re-read from the store after RefreshAfter, so a
// revocation made on another node without Redis takes effect within that
// time; with Redis the rate-limit check itself carries a revocation marker
// and a revocation is seen on the next request on every node. While the
// store is unavailable a cached entry is kept as it is, so keys already
// seen keep working; a key not yet seen answers 503.
package keys

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/store"
)

// Permissions lists every permission a key may hold.
var Permissions = []string{
	"trips:read", "trips:write", "locations:write", "analytics:read",
	"fleet:read", "fleet:write", "devices:manage", "routing:read",
	"geocoding:read", "maps:read", "emergency:read", "emergency:write",
	"telemetry:write", "events:write", "streams:read", "streams:manage",
	"keys:manage", "tokens:create",
}

// Plans and their per-minute rate and burst.
var plans = map[string][2]int{
	"starter":      {100, 200},
	"professional": {500, 1000},
	"enterprise":   {2000, 5000},
}

// MaxRPM is the highest per-key rate: one request per microsecond, the
// resolution of the shared (Redis) limiter.
const MaxRPM = 60_000_000

// RPMRange is the refusal of a rate out of range. RPM 0 in a
// CreateRequest is "none" (the plan's rate); an API body that sends 0 is
// refused with this too.
var RPMRange = fmt.Sprintf("must be between 1 and %d", MaxRPM)

// Limits returns the rate and burst of a key.
func Limits(env, plan string, rpm int) (rate, burst int) {
	switch {
	case rpm > 0:
		rpm = min(rpm, MaxRPM)
		return rpm, 2 * rpm
	case plan != "" && plan != "custom":
		p := plans[plan]
		return p[0], p[1]
	case env == apikey.EnvTest:
		return 1000, 2000
	default:
		p := plans["starter"]
		return p[0], p[1]
	}
}

// Store is what the service needs of the store.
type Store interface {
	CreateKey(ctx context.Context, k store.APIKey) error
	KeyByHash(ctx context.Context, hash string) (store.APIKey, error)
	ListKeys(ctx context.Context, s store.Scope) ([]store.APIKey, error)
	RevokeKey(ctx context.Context, s store.Scope, id string, at time.Time) (store.APIKey, error)
	TouchKeys(ctx context.Context, used map[string]time.Time) error
}

// Revoker spreads a revocation to other nodes (the rate limiter).
type Revoker interface {
	Revoke(ctx context.Context, keyID string) error
}

// Config of the service.
type Config struct {
	RefreshAfter time.Duration // default 30s
	TouchEvery   time.Duration // default 10s
}

// Service creates, lists, revokes and authenticates keys.
type Service struct {
	cfg     Config
	store   Store
	hasher  *apikey.Hasher
	revoker Revoker
	log     *slog.Logger
	now     func() time.Time

	mu    sync.RWMutex // guards cache
	cache map[apikey.Hash]*entry
}

type entry struct {
	p        *apikey.Principal
	revoked  atomic.Bool
	loaded   time.Time
	lastUsed atomic.Int64 // unix ms, 0 when not used since last flush
}

// New makes the service. revoker may be nil.
func New(cfg Config, st Store, hasher *apikey.Hasher, revoker Revoker, log *slog.Logger) *Service {
	if cfg.RefreshAfter == 0 {
		cfg.RefreshAfter = 30 * time.Second
	}
	if cfg.TouchEvery == 0 {
		cfg.TouchEvery = 10 * time.Second
	}
	return &Service{cfg: cfg, store: st, hasher: hasher, revoker: revoker, log: log, now: time.Now, cache: map[apikey.Hash]*entry{}}
}

// Authenticate resolves a well-formed key.
func (s *Service) Authenticate(ctx context.Context, key string) (*apikey.Principal, error) {
	h := s.hasher.Sum(key)
	s.mu.RLock()
	e := s.cache[h]
	s.mu.RUnlock()
	now := s.now()
	if e == nil || now.Sub(e.loaded) > s.cfg.RefreshAfter {
		fresh, err := s.load(ctx, h)
		switch {
		case err == nil:
			e = fresh
		case e != nil && errors.Is(err, store.ErrUnavailable):
			// the store is down: the cached entry stands until it answers
		default:
			return nil, err
		}
	}
	if e.revoked.Load() {
		return nil, apikey.ErrRevoked
	}
	e.lastUsed.Store(now.UnixMilli())
	return e.p, nil
}

func (s *Service) load(ctx context.Context, h apikey.Hash) (*entry, error) {
	k, err := s.store.KeyByHash(ctx, h.Hex())
	if errors.Is(err, store.ErrNotFound) {
		return nil, apikey.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("keys: load: %w", err)
	}
	stored, err := hex.DecodeString(k.Hash)
	if err != nil || len(stored) != len(h) || !apikey.Equal(apikey.Hash(stored), h) {
		return nil, apikey.ErrNotFound
	}
	e := &entry{p: principal(k), loaded: s.now()}
	e.revoked.Store(!k.RevokedAt.IsZero())
	s.mu.Lock()
	if old := s.cache[h]; old != nil {
		e.lastUsed.Store(old.lastUsed.Load())
	}
	s.cache[h] = e
	s.mu.Unlock()
	return e, nil
}

func principal(k store.APIKey) *apikey.Principal {
	rate, burst := Limits(k.Env, k.Plan, k.RPM)
	return &apikey.Principal{KeyID: k.ID, Name: k.Name, Org: k.Org, Env: k.Env, Plan: PlanName(k), Permissions: k.Permissions, Rate: rate, Burst: burst}
}

// PlanName is the plan a key is on, as shown: its own, else custom when
// it has its own rate, else test for test keys, else starter.
func PlanName(k store.APIKey) string {
	if k.Plan != "" {
		return k.Plan
	}
	if k.RPM > 0 {
		return "custom"
	}
	if k.Env == apikey.EnvTest {
		return "test"
	}
	return "starter"
}

// Revoked marks a key revoked in the cache (learned from the limiter).
func (s *Service) Revoked(keyID string) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, e := range s.cache {
		if e.p.KeyID == keyID {
			e.revoked.Store(true)
		}
	}
}

// CreateRequest describes a new key.
type CreateRequest struct {
	Org         string
	Env         string
	Name        string
	Permissions []string
	Plan        string
	RPM         int
}

// Created is a new key with its secret, shown once.
type Created struct {
	Key    string
	Record store.APIKey
}

// Validate checks a create request; fields maps field name to message.
func (r *CreateRequest) Validate() map[string]string {
	bad := map[string]string{}
	switch {
	case strings.TrimSpace(r.Org) == "":
		bad["organization_id"] = "is required"
	case utf8.RuneCountInString(r.Org) > 200 || jsonpath.HasControl(r.Org):
		// an id as every other: it scopes every record of the keys
		bad["organization_id"] = "must be 1 to 200 characters, none of them a control character"
	}
	if r.Env != apikey.EnvTest && r.Env != apikey.EnvLive {
		bad["environment"] = enum.Refusal(apikey.EnvTest, apikey.EnvLive)
	}
	if strings.TrimSpace(r.Name) == "" {
		bad["name"] = "is required"
	} else if utf8.RuneCountInString(r.Name) > 200 {
		bad["name"] = "must be at most 200 characters"
	} else if jsonpath.HasControl(r.Name) {
		bad["name"] = jsonpath.ControlRefusal
	}
	if len(r.Permissions) == 0 {
		bad["permissions"] = "at least one permission is required"
	}
	// Each distinct unknown permission is named once, at its first index,
	// with the known set, and at most maxNamedUnknown of them: a list of
	// 100,000 repeated entries gets one line of details, not 100,000.
	seen := map[string]bool{}
	given := map[string]int{} // times each known permission was met
	last := ""
	for i, p := range r.Permissions {
		if p == "all" || slices.Contains(Permissions, p) {
			// a known permission given again is refused, as a token's
			// scope given twice: the list would not be stored as sent.
			// Each is named once, at its second index, so the known
			// set bounds these lines too.
			if given[p]++; given[p] == 2 {
				bad[fmt.Sprintf("permissions[%d]", i)] = PermissionRepeated
			}
			continue
		}
		if seen[p] {
			continue
		}
		seen[p] = true
		if len(seen) > maxNamedUnknown {
			bad[last] = strings.TrimSuffix(bad[last], ")") + "; more unknown permissions follow, not named)"
			break
		}
		last = fmt.Sprintf("permissions[%d]", i)
		bad[last] = enum.Refusal(knownPermissions()...) + " (not " + strconv.Quote(p) + ")"
	}
	if _, ok := plans[r.Plan]; !ok && r.Plan != "" && r.Plan != "custom" {
		bad["plan"] = enum.Refusal(PlanNames...)
	}
	if r.Plan == "custom" && r.RPM <= 0 {
		bad["rate_limit_rpm"] = "is required for the custom plan"
	}
	if r.RPM < 0 || r.RPM > MaxRPM {
		bad["rate_limit_rpm"] = RPMRange
	}
	if len(bad) == 0 {
		return nil
	}
	return bad
}

// PlanNames are the plans a key may be given, in rank order, custom last.
var PlanNames = []string{"starter", "professional", "enterprise", "custom"}

// PermissionRepeated refuses a permission listed a second time.
const PermissionRepeated = "is given twice"

// knownPermissions is the known set as named in a 400's details.
func knownPermissions() []string { return append(slices.Clip(Permissions), "all") }

// maxNamedUnknown caps the unknown permissions named in a 400's details.
const maxNamedUnknown = 10

// NormalizePermissions returns perms without repeats, in first-seen order;
// a list holding "all" becomes just "all". The result never has more
// entries than the known set plus one. (Validate refuses repeats; this
// keeps the stored list bounded whatever a caller skipped.)
func NormalizePermissions(perms []string) []string {
	if slices.Contains(perms, "all") {
		return []string{"all"}
	}
	out := make([]string, 0, min(len(perms), len(Permissions)))
	for _, p := range perms {
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// planRank orders the named plans; a key with no named plan (a test key's
// default, custom) ranks as starter when it creates keys.
var planRank = map[string]int{"starter": 1, "professional": 2, "enterprise": 3}

func rankOf(plan string) int {
	if r, ok := planRank[plan]; ok {
		return r
	}
	return planRank["starter"]
}

// APIPlan is the plan a key must be on to create keys through the API
// (POST /v1/api-keys); the bootstrap command creates keys on any plan.
const APIPlan = "enterprise"

// CheckAPICreation reports whether creator may create keys through the
// API at all: only a key on the enterprise plan may. The error is 403
// insufficient_permissions naming the plan.
func CheckAPICreation(creator *apikey.Principal) error {
	if creator.Plan == APIPlan {
		return nil
	}
	msg := fmt.Sprintf("creating keys through the API needs a key on the %s plan; this key is on the %s plan", APIPlan, creator.Plan)
	return &PermissionError{Message: msg, Details: map[string]string{"plan": msg, "required_plan": APIPlan}}
}

// CheckGrant reports whether the creator may make the key r describes
// without escalation: every permission is one the creator holds ("all" only
// from a key holding all), the plan ranks at most the creator's, the
// resulting rate is at most the creator's, and a test key creates only test
// keys. r must be valid (see Validate). The error is 403
// insufficient_permissions naming the field.
func CheckGrant(creator *apikey.Principal, r CreateRequest) error {
	if creator.Env == apikey.EnvTest && r.Env != apikey.EnvTest {
		return forbidden("environment", "a test key cannot create %s keys", r.Env)
	}
	if !slices.Contains(creator.Permissions, "all") {
		for _, perm := range r.Permissions {
			if perm == "all" || !slices.Contains(creator.Permissions, perm) {
				return &PermissionError{Message: fmt.Sprintf("a key cannot grant %s, which it does not hold", perm),
					Details: map[string]string{"required_permission": perm, "permissions": "cannot grant " + perm}}
			}
		}
	}
	if _, named := planRank[r.Plan]; named && rankOf(r.Plan) > rankOf(creator.Plan) {
		return forbidden("plan", "a key on the %s plan cannot create a key on the %s plan", creator.Plan, r.Plan)
	}
	if rate, _ := Limits(r.Env, r.Plan, r.RPM); rate > creator.Rate {
		return forbidden("rate_limit_rpm", "a key limited to %d requests per minute cannot create one allowed %d", creator.Rate, rate)
	}
	return nil
}

// CheckRevoke reports whether the caller may revoke target: only when it
// holds every permission target holds ("all" only from a key holding all).
func CheckRevoke(caller *apikey.Principal, target store.APIKey) error {
	if slices.Contains(caller.Permissions, "all") {
		return nil
	}
	for _, perm := range target.Permissions {
		if perm == "all" || !slices.Contains(caller.Permissions, perm) {
			return &PermissionError{Message: fmt.Sprintf("a key cannot revoke a key holding %s, which it does not hold", perm),
				Details: map[string]string{"required_permission": perm}}
		}
	}
	return nil
}

// PermissionError is a grant or revocation the caller's key does not
// allow: Details names the field (or the permission) at fault.
type PermissionError struct {
	Message string
	Details map[string]string
}

func (e *PermissionError) Error() string { return "keys: " + e.Message }

// ValidationError is a key request refused, naming each bad field.
type ValidationError struct{ Fields map[string]string }

func (e *ValidationError) Error() string {
	return fmt.Sprintf("keys: %d invalid field(s)", len(e.Fields))
}

func forbidden(field, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	return &PermissionError{Message: msg, Details: map[string]string{field: msg}}
}

// Create makes and stores a key.
func (s *Service) Create(ctx context.Context, r CreateRequest) (Created, error) {
	if bad := r.Validate(); bad != nil {
		return Created{}, &ValidationError{Fields: bad}
	}
	key, err := apikey.Generate(r.Env)
	if err != nil {
		return Created{}, fmt.Errorf("keys: generate: %w", err)
	}
	var idb [8]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return Created{}, fmt.Errorf("keys: id: %w", err)
	}
	perms := NormalizePermissions(r.Permissions)
	rec := store.APIKey{
		ID: "key_" + hex.EncodeToString(idb[:]), Name: r.Name, Org: r.Org, Env: r.Env, Permissions: perms,
		Plan: r.Plan, RPM: r.RPM, Hash: s.hasher.Sum(key).Hex(), Hint: key[len(key)-4:], CreatedAt: apitime.Of(s.now()),
	}
	if err := s.store.CreateKey(ctx, rec); err != nil {
		return Created{}, fmt.Errorf("keys: create: %w", err)
	}
	return Created{Key: key, Record: rec}, nil
}

// List lists the keys of a scope.
func (s *Service) List(ctx context.Context, sc store.Scope) ([]store.APIKey, error) {
	return s.store.ListKeys(ctx, sc)
}

// ManagedEnvs are the environments whose keys a key of env lists and
// revokes: its own, and for a live key the test keys too, which it may
// create; a test key never sees a live key.
func ManagedEnvs(env string) []string {
	if env == apikey.EnvLive {
		return []string{apikey.EnvLive, apikey.EnvTest}
	}
	return []string{env}
}

// Get returns the key id of the scope, or store.ErrNotFound.
func (s *Service) Get(ctx context.Context, sc store.Scope, id string) (store.APIKey, error) {
	ks, err := s.store.ListKeys(ctx, sc)
	if err != nil {
		return store.APIKey{}, err
	}
	for _, k := range ks {
		if k.ID == id {
			return k, nil
		}
	}
	return store.APIKey{}, store.ErrNotFound
}

// Revoke revokes a key of the scope and spreads it to the other nodes.
func (s *Service) Revoke(ctx context.Context, sc store.Scope, id string) (store.APIKey, error) {
	k, err := s.store.RevokeKey(ctx, sc, id, s.now().UTC())
	if err != nil {
		return k, err
	}
	if s.revoker != nil {
		if err := s.revoker.Revoke(ctx, id); err != nil {
			s.log.Warn("revocation not spread to other nodes", "key_id", id, "error", err)
		}
	}
	s.Revoked(id)
	return k, nil
}

// Run flushes last-use times every TouchEvery until ctx ends, then once
// more.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.TouchEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			s.flush(fctx)
			cancel()
			return nil
		case <-t.C:
			s.flush(ctx)
		}
	}
}

func (s *Service) flush(ctx context.Context) {
	used := map[string]time.Time{}
	s.mu.RLock()
	for _, e := range s.cache {
		if v := e.lastUsed.Swap(0); v != 0 {
			used[e.p.KeyID] = time.UnixMilli(v)
		}
	}
	s.mu.RUnlock()
	if err := s.store.TouchKeys(ctx, used); err != nil {
		s.log.Warn("recording key use failed", "error", err)
	}
}
