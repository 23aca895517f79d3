// Package tokens mints and verifies browser tokens: short-lived signed
// tokens (JWT, HS256 under a server secret every node shares) that the
// websocket, Server-Sent Events and feed endpoints take in place of an API
// key, limited to their scopes. api/tokens serves it over HTTP.
//
// A token is verified from its signature and claims alone; only its
// revocation needs the store. Each minted token leaves a record (its id,
// scope and expiry); DELETE marks it revoked. Verify checks a local copy
// of the revocation list, read again from the store every Refresh (so a
// revocation made on another node takes effect within that time, at once
// on the node that made it); records of expired tokens are pruned then.
// A verified token carries its Life, a context that ends at its expiry or
// revocation, so that the connections it opened end with it.
//
// Concurrency: a Service is safe for concurrent use. The revocation list
// is a map replaced whole under a read-write lock.
package tokens

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/store"
)

// Scopes a token may hold.
const (
	ScopeFeedRead    = "feed:read"          // GET /api/v1/streaming/feed (pull and SSE)
	ScopeStreamsRead = "streams:read"       // registered streams over websocket and SSE (StreamIDs narrows it)
	ScopeAlertsAck   = "alerts:acknowledge" // POST /v1/emergency/alerts/{id}/acknowledge
	// ScopeConsoleRead opens the reads a dispatch console shows (trips and
	// their routes and safety scores, incidents and alerts, streams and
	// their status, tiles), each only while the minting key holds that
	// route's permission.
	ScopeConsoleRead = "console:read"
	// ScopeWebhooksReplay: POST .../deliveries/{stream_id}/replay (the
	// console's replay of dead letters).
	ScopeWebhooksReplay = "webhooks:replay"
)

// scopePermission is the key permission a scope needs at minting.
var scopePermission = map[string]string{
	ScopeFeedRead:       "streams:read",
	ScopeStreamsRead:    "streams:read",
	ScopeAlertsAck:      "emergency:write",
	ScopeConsoleRead:    "", // checked per route against the key's permissions
	ScopeWebhooksReplay: "streams:manage",
}

// scopeList names the scopes for messages.
const scopeList = "feed:read, streams:read, alerts:acknowledge, console:read or webhooks:replay"

// scopes are the scopes a token may hold, in the order messages list them.
var scopes = []string{ScopeFeedRead, ScopeStreamsRead, ScopeAlertsAck, ScopeConsoleRead, ScopeWebhooksReplay}

// Limits.
const (
	DefaultTTL   = time.Hour
	MaxTTL       = 24 * time.Hour
	MaxStreamIDs = 100
	// DefaultRefresh is how often the revocation list is read again.
	DefaultRefresh = 5 * time.Second
)

// Errors of Verify; ErrExpired and ErrRevoked are also the causes a
// token's Life ends with.
var (
	ErrInvalid = errors.New("tokens: not a valid token")
	ErrExpired = apikey.ErrTokenExpired
	ErrRevoked = apikey.ErrTokenRevoked
)

// Store is what the service needs of the store.
type Store interface {
	CreateToken(ctx context.Context, t store.BrowserToken) error
	RevokeToken(ctx context.Context, s store.Scope, id string, at time.Time) (store.BrowserToken, error)
	RevokedTokens(ctx context.Context, now time.Time) ([]string, error)
	PruneTokens(ctx context.Context, before time.Time) (int64, error)
	// GetStream answers a stream of the scope or store.ErrNotFound: a
	// token's stream_ids name streams of its key's scope.
	GetStream(ctx context.Context, sc store.Scope, id string) (store.Stream, error)
}

// Config of the service.
type Config struct {
	Refresh time.Duration    // 0: DefaultRefresh
	Now     func() time.Time // nil: time.Now
	// AfterFunc runs f once d has passed on the clock of Now (nil:
	// time.AfterFunc); stop cancels it. A token's Life ends by it.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
	// StreamDelivery says how the stream id of the scope delivers its
	// messages (hub.StreamInfo.Delivery: websocket or webhook); the stream
	// registry answers it. nil: a token's streams are not asked about it.
	StreamDelivery func(ctx context.Context, sc store.Scope, id string) (string, error)
}

// Service mints, verifies and revokes tokens.
type Service struct {
	cfg    Config
	secret []byte
	store  Store
	log    *slog.Logger

	mu      sync.RWMutex // guards revoked, loaded and lives
	revoked map[string]struct{}
	loaded  bool
	lives   map[string]*life // by token id, while the token lives
}

// life is the shared Life of one token.
type life struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	stop   func() bool // the expiry timer
}

// New makes the service; secret signs the tokens (at least 32 bytes).
func New(cfg Config, secret []byte, st Store, log *slog.Logger) (*Service, error) {
	if len(secret) < 32 {
		return nil, errors.New("tokens: the signing secret needs at least 32 bytes")
	}
	if cfg.Refresh <= 0 {
		cfg.Refresh = DefaultRefresh
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.AfterFunc == nil {
		cfg.AfterFunc = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	return &Service{cfg: cfg, secret: secret, store: st, log: log, revoked: map[string]struct{}{}, lives: map[string]*life{}}, nil
}

// MintRequest is what a token is asked for.
type MintRequest struct {
	TTL    time.Duration // 0: DefaultTTL
	Scopes []string
	// StreamIDs narrows streams:read to these streams; nil: every stream
	// of the organization. Empty but not nil is refused: taken as nil it
	// would widen the token to every stream.
	StreamIDs []string
}

// Minted is a new token.
type Minted struct {
	Token     string
	Grant     apikey.TokenGrant
	ExpiresAt time.Time
}

// FieldError names the request field that is wrong.
type FieldError struct{ Field, Msg string }

func (e *FieldError) Error() string { return e.Field + " " + e.Msg }

// PermissionError is a scope the minting key lacks the permission for.
type PermissionError struct{ Scope, Permission string }

func (e *PermissionError) Error() string {
	return fmt.Sprintf("the scope %s needs the key's %s permission", e.Scope, e.Permission)
}

func (r MintRequest) check(p *apikey.Principal) error {
	if r.TTL < 0 || r.TTL > MaxTTL {
		return &FieldError{"expires_in_seconds", fmt.Sprintf("must be from 1 to %d", int(MaxTTL/time.Second))}
	}
	if len(r.Scopes) == 0 {
		return &FieldError{"scopes", "must name at least one of " + scopeList}
	}
	for i, sc := range r.Scopes {
		perm, ok := scopePermission[sc]
		if !ok {
			return &FieldError{fmt.Sprintf("scopes[%d]", i), enum.Refusal(scopes...)}
		}
		if slices.Index(r.Scopes, sc) != i {
			return &FieldError{fmt.Sprintf("scopes[%d]", i), "is given twice"}
		}
		if perm != "" && !p.Has(perm) {
			return &PermissionError{sc, perm}
		}
	}
	if r.StreamIDs != nil && len(r.StreamIDs) == 0 {
		return &FieldError{"stream_ids", "must name at least one stream; leave it out for every stream of the organization"}
	}
	if len(r.StreamIDs) > 0 && !slices.Contains(r.Scopes, ScopeStreamsRead) {
		return &FieldError{"stream_ids", "needs the streams:read scope"}
	}
	if len(r.StreamIDs) > MaxStreamIDs {
		return &FieldError{"stream_ids", fmt.Sprintf("may name at most %d streams", MaxStreamIDs)}
	}
	for i, id := range r.StreamIDs {
		if id == "" || utf8.RuneCountInString(id) > 200 {
			return &FieldError{fmt.Sprintf("stream_ids[%d]", i), "must be a stream id (1-200 characters)"}
		}
		if slices.Index(r.StreamIDs, id) != i {
			return &FieldError{fmt.Sprintf("stream_ids[%d]", i), "is given twice"}
		}
	}
	return nil
}

// WebhookStreamRefusal is the message for a token's stream that delivers
// by webhook: no client of a token can read it.
const WebhookStreamRefusal = "names a webhook stream: its messages go to its webhook_url, not to websocket or event-stream clients"

// checkStreams refuses the first of ids that names no stream of p's
// organization and environment, a stopped one (it delivers nothing
// more and cannot be started again) or a webhook stream (its messages go
// to its webhook_url; the websocket and the event stream, all that
// streams:read opens, refuse it). A stream of another organization is
// refused in the same words as one that never existed, so that the
// refusal tells nothing of other organizations.
func (s *Service) checkStreams(ctx context.Context, p *apikey.Principal, ids []string) error {
	sc := store.Scope{Org: p.Org, Env: p.Env}
	for i, id := range ids {
		st, err := s.store.GetStream(ctx, sc, id)
		if errors.Is(err, store.ErrNotFound) {
			return &FieldError{fmt.Sprintf("stream_ids[%d]", i), "names no stream of this organization and environment"}
		}
		if err != nil {
			return fmt.Errorf("tokens: stream %s: %w", id, err)
		}
		if st.State == hub.StateStopped {
			return &FieldError{fmt.Sprintf("stream_ids[%d]", i), "names a stopped stream: it delivers nothing more"}
		}
		if s.cfg.StreamDelivery == nil {
			continue
		}
		d, err := s.cfg.StreamDelivery(ctx, sc, id)
		if err != nil {
			return fmt.Errorf("tokens: delivery of stream %s: %w", id, err)
		}
		if d == "webhook" {
			return &FieldError{fmt.Sprintf("stream_ids[%d]", i), WebhookStreamRefusal}
		}
	}
	return nil
}

// claims are the token's payload.
type claims struct {
	Iss       string   `json:"iss"`
	Sub       string   `json:"sub"` // the minting key
	Jti       string   `json:"jti"`
	Org       string   `json:"org"`
	Env       string   `json:"env"`
	Scopes    []string `json:"scopes"`
	StreamIDs []string `json:"stream_ids,omitempty"`
	// Perms are the minting key's permissions (console:read opens a route
	// only with its permission among them).
	Perms []string `json:"perms,omitempty"`
	Iat   int64    `json:"iat"`
	Exp   int64    `json:"exp"`
	// Rate and burst of the minting key: a token's requests count
	// against that key's budget.
	Rate  int `json:"rl_rate"`
	Burst int `json:"rl_burst"`
}

const issuer = "fleethub"

// header of every token: {"alg":"HS256","typ":"JWT"}
var header = base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))

// Mint signs a token for p (a key, never a token) and records it.
func (s *Service) Mint(ctx context.Context, p *apikey.Principal, r MintRequest) (Minted, error) {
	if p.Token != nil {
		return Minted{}, &PermissionError{Scope: "a new token", Permission: "an API key"}
	}
	if err := r.check(p); err != nil {
		return Minted{}, err
	}
	if err := s.checkStreams(ctx, p, r.StreamIDs); err != nil {
		return Minted{}, err
	}
	if r.TTL == 0 {
		r.TTL = DefaultTTL
	}
	var b [12]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Minted{}, fmt.Errorf("tokens: id: %w", err)
	}
	now := s.cfg.Now()
	exp := now.Add(r.TTL).Truncate(time.Second)
	c := claims{Iss: issuer, Sub: p.KeyID, Jti: "tok_" + hex.EncodeToString(b[:]), Org: p.Org, Env: p.Env,
		Scopes: slices.Clone(r.Scopes), StreamIDs: slices.Clone(r.StreamIDs), Iat: now.Unix(), Exp: exp.Unix(), Rate: p.Rate, Burst: p.Burst}
	if slices.Contains(r.Scopes, ScopeConsoleRead) {
		c.Perms = slices.Clone(p.Permissions)
	}
	payload, err := json.Marshal(c)
	if err != nil {
		return Minted{}, fmt.Errorf("tokens: claims: %w", err)
	}
	body := header + "." + base64.RawURLEncoding.EncodeToString(payload)
	rec := store.BrowserToken{ID: c.Jti, Org: c.Org, Env: c.Env, KeyID: c.Sub, Scopes: c.Scopes, CreatedAt: now, ExpiresAt: exp}
	if err := s.store.CreateToken(ctx, rec); err != nil {
		return Minted{}, fmt.Errorf("tokens: record: %w", err)
	}
	return Minted{Token: body + "." + s.sign(body), ExpiresAt: exp,
		Grant: apikey.TokenGrant{ID: c.Jti, Scopes: c.Scopes, StreamIDs: c.StreamIDs, ExpiresAt: exp, KeyPermissions: c.Perms}}, nil
}

func (s *Service) sign(body string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(body))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// LooksLikeToken tells a token (three base64url parts) from an API key.
func LooksLikeToken(s string) bool {
	return strings.Count(s, ".") == 2 && strings.HasPrefix(s, "eyJ")
}

// Verify checks a token's signature, expiry and revocation and returns
// who it acts for: ErrInvalid, ErrExpired or ErrRevoked otherwise.
func (s *Service) Verify(ctx context.Context, token string) (*apikey.Principal, error) {
	i := strings.LastIndexByte(token, '.')
	if i < 0 || !LooksLikeToken(token) {
		return nil, ErrInvalid
	}
	body, sig := token[:i], token[i+1:]
	if !hmac.Equal([]byte(sig), []byte(s.sign(body))) {
		return nil, ErrInvalid
	}
	h, payload, _ := strings.Cut(body, ".")
	if h != header { // the one algorithm: HS256, never "none" or another
		return nil, ErrInvalid
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return nil, ErrInvalid
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil || c.Iss != issuer || c.Jti == "" || c.Org == "" {
		return nil, ErrInvalid
	}
	exp := time.Unix(c.Exp, 0)
	if !s.cfg.Now().Before(exp) {
		return nil, ErrExpired
	}
	if s.isRevoked(ctx, c.Jti) {
		return nil, ErrRevoked
	}
	return &apikey.Principal{KeyID: c.Sub, Org: c.Org, Env: c.Env, Rate: c.Rate, Burst: c.Burst,
		Token: &apikey.TokenGrant{ID: c.Jti, Scopes: c.Scopes, StreamIDs: c.StreamIDs, ExpiresAt: exp, KeyPermissions: c.Perms, Life: s.Life(c.Jti, exp)}}, nil
}

// Life is a context that ends when the token id expires (at exp, on the
// service's clock) or is revoked (by Revoke on this node at once, on
// another within Refresh), with context.Cause ErrExpired or ErrRevoked.
// Every caller for one token shares one context, kept until it ends.
func (s *Service) Life(id string, exp time.Time) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if l, ok := s.lives[id]; ok {
		return l.ctx
	}
	ctx, cancel := context.WithCancelCause(context.Background())
	if _, revoked := s.revoked[id]; revoked {
		cancel(ErrRevoked)
		return ctx
	}
	d := exp.Sub(s.cfg.Now())
	if d <= 0 {
		cancel(ErrExpired)
		return ctx
	}
	l := &life{ctx: ctx, cancel: cancel}
	s.lives[id] = l
	l.stop = s.cfg.AfterFunc(d, func() { s.end(id, ErrExpired) })
	return ctx
}

// end ends the Life of token id, if it has one, with cause.
func (s *Service) end(id string, cause error) {
	s.mu.Lock()
	l := s.lives[id]
	delete(s.lives, id)
	s.mu.Unlock()
	if l == nil {
		return
	}
	if l.stop != nil {
		l.stop()
	}
	l.cancel(cause)
}

func (s *Service) isRevoked(ctx context.Context, id string) bool {
	s.mu.RLock()
	_, revoked := s.revoked[id]
	loaded := s.loaded
	s.mu.RUnlock()
	if !loaded {
		s.refresh(ctx) // the first token before Run's first read
		s.mu.RLock()
		_, revoked = s.revoked[id]
		s.mu.RUnlock()
	}
	return revoked
}

// Revoke revokes a token of the scope before its expiry; store.ErrNotFound
// when the scope has no such token (or it expired and was pruned).
func (s *Service) Revoke(ctx context.Context, sc store.Scope, id string) (store.BrowserToken, error) {
	t, err := s.store.RevokeToken(ctx, sc, id, s.cfg.Now())
	if err != nil {
		return store.BrowserToken{}, err
	}
	s.mu.Lock()
	s.revoked[id] = struct{}{}
	s.mu.Unlock()
	s.end(id, ErrRevoked)
	return t, nil
}

// refresh reads the revocation list again. While the store is down the
// list in hand stands.
func (s *Service) refresh(ctx context.Context) {
	ids, err := s.store.RevokedTokens(ctx, s.cfg.Now())
	if err != nil {
		s.log.Warn("token revocation list not read; the previous one stands", "error", err)
		return
	}
	m := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		m[id] = struct{}{}
	}
	s.mu.Lock()
	s.revoked, s.loaded = m, true
	var ended []string
	for id := range s.lives {
		if _, ok := m[id]; ok {
			ended = append(ended, id)
		}
	}
	s.mu.Unlock()
	for _, id := range ended {
		s.end(id, ErrRevoked) // revoked on another node
	}
}

// Run reads the revocation list every Refresh and prunes the records of
// tokens that expired over an hour ago, until ctx ends.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.Refresh)
	defer t.Stop()
	for n := 0; ; n++ {
		s.refresh(ctx)
		if n%120 == 0 {
			if _, err := s.store.PruneTokens(ctx, s.cfg.Now().Add(-time.Hour)); err != nil && ctx.Err() == nil {
				s.log.Warn("expired token records not pruned", "error", err)
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
