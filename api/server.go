// Package api is the HTTP front of Fleethub: the router, the middleware
// every request goes through (request id, panic recovery, body limits,
// authentication, permissions, rate limits, metrics) and the one mapping
// from errors to statuses and codes. Domain handlers live in api/<domain>
// and register Routes here.
//
// Concurrency: routes are registered with Handle before Serve, from one
// goroutine; Handle is not safe to call while the server serves. Once
// serving, a Server is safe for concurrent use: fasthttp serves each
// connection from one of its worker goroutines, one request at a time,
// and many connections at once. The request counter, the statistics
// (Stats: one-second buckets of atomics) and the Prometheus metrics take
// no lock of the server's; the listener and the shutdown flag are guarded
// by a mutex, so Shutdown may come from any goroutine, even before Serve.
// A Ctx belongs to its request's goroutine and must not be kept after the
// handler returns.
package api

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fasthttp/router"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/breaker"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/ratelimit"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/valyala/fasthttp"
)

// Defaults.
const (
	DefaultMaxBodyBytes = 8 << 20
	DefaultAddr         = "127.0.0.1:8080"
	// MaxHeaderBytes bounds the request line and header block together
	// (fasthttp's ReadBufferSize): 16 KiB fits real clients (long bearer
	// tokens, cookies, tracing headers); above it the answer is 431.
	MaxHeaderBytes = 16 << 10
)

// DefaultAuthFailureLimit is the budget of failed authentications per
// client address: 20 per minute, with a burst of 20. A person mistyping a
// key never meets it; a scan of unknown keys meets it after 20 tries and
// then gets one more try every 3 s.
var DefaultAuthFailureLimit = ratelimit.Limit{Rate: 20, Burst: 20, Window: time.Minute}

// authFailurePrefix namespaces the failure buckets in the limiter, apart
// from the key IDs and the "ep:" endpoint buckets.
const authFailurePrefix = "authfail:"

// Authenticator resolves a well-formed key to its principal. It returns
// *Error values with the codes api_key_not_found or api_key_revoked.
type Authenticator interface {
	Authenticate(ctx context.Context, key string) (*Principal, error)
}

// Limiter is a per-key rate limiter.
type Limiter interface {
	Allow(ctx context.Context, key string, lim ratelimit.Limit) (ratelimit.Result, error)
}

// RevocationListener learns about revocations found by the limiter.
type RevocationListener interface {
	Revoked(keyID string)
}

// Config of the server.
type Config struct {
	Addr         string
	MaxBodyBytes int
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	IdleTimeout  time.Duration
	Version      string
	// TLS, when set, makes Addr serve HTTPS (and so wss://) with it.
	TLS *tls.Config
	// PlainAddr, when set, is a second address that serves plain HTTP
	// (local health checks beside an HTTPS Addr).
	PlainAddr string
	// AuthFailureLimit is the budget of failed authentications (no key,
	// malformed, unknown or revoked key) per client address; zero means
	// DefaultAuthFailureLimit and a negative Rate turns the throttle off.
	AuthFailureLimit ratelimit.Limit
}

// Server is the HTTP server.
type Server struct {
	cfg     Config
	log     *slog.Logger
	auth    Authenticator
	tokens  TokenAuthenticator
	limiter Limiter
	// failures counts failed authentications per client address: the
	// server's limiter (shared across nodes when Redis-backed), or a
	// Memory of its own when there is none.
	failures Limiter
	router   *router.Router
	http     *fasthttp.Server
	routes   []*Route
	// plainPaths are the paths of the AuthKeyPlain routes, split into
	// segments: a request no route takes answers in the plain form
	// beneath them (plainForm). Set by Handle.
	plainPaths [][]string
	// bodyLimits are the routes' own body limits above the server's, by
	// path; replaced whole by Handle
	bodyLimits atomic.Pointer[map[string][]routeLimit]
	reqSeq     atomic.Uint64
	reqPfx     string
	stats      *Stats
	metrics    *metrics

	baseCtx context.Context
	cancel  context.CancelFunc

	lnMu     sync.Mutex // guards ln, plain and shutdown
	ln       net.Listener
	plain    net.Listener
	shutdown bool
}

// New makes a server. auth and limiter may be nil only if no route needs a
// key.
func New(cfg Config, log *slog.Logger, reg prometheus.Registerer, auth Authenticator, limiter Limiter) *Server {
	if cfg.Addr == "" {
		cfg.Addr = DefaultAddr
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.ReadTimeout == 0 {
		cfg.ReadTimeout = 30 * time.Second
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = 30 * time.Second
	}
	if cfg.IdleTimeout == 0 {
		cfg.IdleTimeout = 120 * time.Second
	}
	if cfg.AuthFailureLimit == (ratelimit.Limit{}) {
		cfg.AuthFailureLimit = DefaultAuthFailureLimit
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	s := &Server{cfg: cfg, log: log, auth: auth, limiter: limiter, router: router.New(), reqPfx: "req_" + hex.EncodeToString(b[:]) + "_",
		stats: NewStats(time.Now), metrics: newMetrics(reg)}
	s.baseCtx, s.cancel = context.WithCancel(context.Background())
	s.failures = limiter
	if s.failures == nil {
		s.failures = ratelimit.NewMemory(nil)
	}
	s.router.NotFound = s.notFound
	s.router.MethodNotAllowed = s.methodNotAllowed
	s.router.HandleMethodNotAllowed = true
	s.http = &fasthttp.Server{
		Handler:                       s.serve,
		Name:                          "fleethub",
		MaxRequestBodySize:            cfg.MaxBodyBytes,
		ReadBufferSize:                MaxHeaderBytes,
		ReadTimeout:                   cfg.ReadTimeout,
		WriteTimeout:                  cfg.WriteTimeout,
		IdleTimeout:                   cfg.IdleTimeout,
		NoDefaultServerHeader:         true,
		NoDefaultDate:                 true,
		DisableHeaderNamesNormalizing: false,
		ErrorHandler:                  s.transportError,
		HeaderReceived: func(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
			return fasthttp.RequestConfig{MaxRequestBodySize: s.bodyLimit(h)}
		},
		CloseOnShutdown: true,
		Logger:          fasthttpLogger{log},
		// a connection's read buffer (ReadBufferSize) is given back when
		// a request is read and nothing follows it: a keep-alive
		// connection waits without one, and a websocket reads its socket
		// directly after the upgrade instead of keeping the buffer for
		// its life (fasthttp keeps it when the client sent more)
		ReduceMemoryUsage: true,
		// a hijacked connection (a websocket) is closed by its hijacker,
		// which then runs it without holding the upgrade request's
		// context (delivery/ws Config.KeptHijackedConns)
		KeepHijackedConns: true,
	}
	return s
}

// Stats returns the live request statistics.
func (s *Server) Stats() *Stats { return s.stats }

// Routes returns every registered route.
func (s *Server) Routes() []*Route { return s.routes }

// Handle registers routes.
func (s *Server) Handle(routes ...*Route) {
	for _, r := range routes {
		r := r
		if r.Status == 0 {
			r.Status = 200
		}
		r.metrics = s.metrics.route(r)
		r.pathParams = pathParamNames(r.Path)
		s.routes = append(s.routes, r)
		if r.Auth == AuthKeyPlain {
			s.plainPaths = append(s.plainPaths, strings.Split(strings.Trim(r.Path, "/"), "/"))
		}
		if r.MaxBodyBytes > s.cfg.MaxBodyBytes {
			if strings.Contains(r.Path, "{") {
				panic("api: MaxBodyBytes on a path with parameters: " + r.Path)
			}
			limits := map[string][]routeLimit{}
			if old := s.bodyLimits.Load(); old != nil {
				maps.Copy(limits, *old)
			}
			limits[r.Path] = append(slices.Clone(limits[r.Path]), routeLimit{r.Method, r.MaxBodyBytes})
			s.bodyLimits.Store(&limits)
		}
		run := func(rc *fasthttp.RequestCtx) { s.run(rc, r) }
		s.router.Handle(r.Method, r.Path, run)
		if r.Method == fasthttp.MethodGet && !r.NoHead {
			// HEAD is GET without the body (RFC 9110 9.3.2): the same
			// handler, whose body fasthttp leaves unsent
			s.router.Handle(fasthttp.MethodHead, r.Path, run)
		}
	}
}

// routeLimit is a route's own body limit (Route.MaxBodyBytes).
type routeLimit struct {
	method string
	n      int
}

// bodyLimit is the largest body the request with header h may send: its
// route's MaxBodyBytes, else the server's. It allocates nothing.
func (s *Server) bodyLimit(h *fasthttp.RequestHeader) int {
	if limits := s.bodyLimits.Load(); limits != nil {
		path := h.RequestURI()
		if i := bytes.IndexByte(path, '?'); i >= 0 {
			path = path[:i]
		}
		for _, l := range (*limits)[string(path)] {
			if string(h.Method()) == l.method {
				return l.n
			}
		}
	}
	return s.cfg.MaxBodyBytes
}

// serve is the entry of every request: request id, then the router.
func (s *Server) serve(rc *fasthttp.RequestCtx) {
	start := time.Now()
	id := rc.Request.Header.Peek("X-Request-Id")
	var reqID string
	if len(id) > 0 && len(id) <= 128 && printable(id) {
		reqID = string(id)
	} else {
		reqID = s.reqPfx + strconv.FormatUint(s.reqSeq.Add(1), 36)
	}
	rc.SetUserValue(reqIDKey, reqID)
	rc.Response.Header.Set("X-Request-Id", reqID)
	s.router.Handler(rc)
	if rc.IsHead() && rc.Response.StatusCode() == fasthttp.StatusPermanentRedirect {
		// the router keeps 301 for GET; a HEAD is redirected as its GET
		rc.Response.SetStatusCode(fasthttp.StatusMovedPermanently)
	}
	el := time.Since(start)
	st := rc.Response.StatusCode()
	s.stats.Observe(el, st >= 500 && st != fasthttp.StatusNotImplemented) // a 501 is a feature this node was not started with, not a failure
}

const reqIDKey = "fleethub.request_id"

func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x21 || c > 0x7e {
			return false
		}
	}
	return true
}

func (s *Server) run(rc *fasthttp.RequestCtx, r *Route) {
	start := time.Now()
	c := &Ctx{RequestCtx: rc, Route: r, srv: s}
	c.RequestID, _ = rc.UserValue(reqIDKey).(string)
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic in handler", "route", r.Path, "panic", v, "stack", string(debug.Stack()))
			rc.Response.ResetBody()
			s.writeError(c, Internal(fmt.Errorf("panic: %v", v)))
		}
		s.metrics.observe(r, rc.Response.StatusCode(), time.Since(start))
	}()
	if r.Auth != AuthNone {
		if err := s.authenticate(c); err != nil {
			s.writeError(c, s.throttleFailure(c, err))
			return
		}
	}
	if err := decodePathParams(rc, r); err != nil {
		s.writeError(c, err)
		return
	}
	if err := UnknownQuery(c); err != nil {
		s.writeError(c, err)
		return
	}
	if body := rc.PostBody(); len(body) > 0 && IsJSON(rc.Request.Header.ContentType()) {
		if err := bodyText(body); err != nil {
			s.writeError(c, err)
			return
		}
	}
	if r.Request == nil && r.Method == fasthttp.MethodDelete {
		if err := noBody(rc.PostBody()); err != nil {
			s.writeError(c, err)
			return
		}
	}
	if err := r.Handler(c); err != nil {
		s.writeError(c, err)
	}
}

// noBody refuses a body sent to a DELETE route that declares none (all of
// them): what it holds would be ignored, never honoured, so each field
// is named as every endpoint names a field it does not declare; no body,
// white space or {} is none. Nothing is read or changed.
func noBody(body []byte) error {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil
	}
	if bad := jsonpath.Unknown(body, reflect.TypeFor[struct{}]()); bad != nil {
		return Validation("validation_failed", bad)
	}
	var v map[string]json.RawMessage
	if json.Unmarshal(body, &v) == nil && len(v) == 0 {
		return nil
	}
	return Errf("invalid_request", "this endpoint takes no request body").WithDetails(map[string]string{"body": "must be empty: this endpoint takes no body"})
}

func (s *Server) authenticate(c *Ctx) error {
	r := c.Route
	key, conflict := extractKey(c.RequestCtx, r.QueryKey)
	if conflict != "" {
		return &Error{Status: 401, Code: "invalid_api_key", Message: "the request presents two different API keys (" + conflict + "); send one"}
	}
	if key == "" && r.TokenScope != "" {
		key = string(c.QueryArgs().Peek("token"))
	}
	if key == "" {
		return &Error{Status: 401, Code: "invalid_api_key", Message: "API key required"}
	}
	// a key or token that verifies but does not open the route is
	// refused once the request is charged to the key, as any request of
	// the key is: the 403 counts against its budget and carries its
	// X-RateLimit-* headers
	var p *Principal
	var denied error
	if LooksLikeToken(key) {
		if s.tokens == nil {
			return &Error{Status: 401, Code: "invalid_api_key", Message: "Invalid API key format"}
		}
		var err error
		if p, err = s.tokens.AuthenticateToken(s.baseCtx, key); err != nil {
			return err
		}
		denied = tokenOpens(r, p)
	} else {
		if _, err := apikey.Parse(key); err != nil {
			return &Error{Status: 401, Code: "invalid_api_key", Message: "Invalid API key format"}
		}
		var err error
		if p, err = s.auth.Authenticate(s.baseCtx, key); err != nil {
			return err
		}
		if r.Permission != "" && !p.Has(r.Permission) {
			denied = Errf("insufficient_permissions", "this API key lacks the %s permission", r.Permission).
				WithDetails(map[string]string{"required_permission": r.Permission})
		}
	}
	if denied == nil {
		c.Principal = p
	}
	if r.NoRateLimit || s.limiter == nil {
		return denied
	}
	plan, err := s.charge(c, p)
	if err != nil {
		return err
	}
	if denied != nil {
		return denied
	}
	if el := r.EndpointLimit; el != nil {
		res, err := s.limiter.Allow(s.baseCtx, "ep:"+r.Method+r.Path+":"+p.KeyID, *el)
		if err != nil {
			return Internal(err)
		}
		// the headers count the budget that runs out first: the
		// endpoint's when it has fewer requests left than the key's
		if !res.Allowed || res.Remaining < plan.Remaining {
			SetRateHeaders(c.RequestCtx, res)
		}
		if !res.Allowed {
			e := Errf("rate_limit_exceeded", "this endpoint allows %d requests per minute per key", res.Limit)
			e.RetryAfter = retrySeconds(res.RetryAfter)
			return e
		}
	}
	return nil
}

// charge counts a request against p's key and returns the count: it
// writes the key's X-RateLimit-* headers and answers 429
// rate_limit_exceeded once the key's budget is spent, api_key_revoked
// when the limiter knows the key revoked.
func (s *Server) charge(c *Ctx, p *Principal) (ratelimit.Result, error) {
	res, err := s.limiter.Allow(s.baseCtx, p.KeyID, ratelimit.Limit{Rate: p.Rate, Burst: p.Burst, Window: time.Minute})
	if errors.Is(err, ratelimit.ErrRevoked) {
		if l, ok := s.auth.(RevocationListener); ok {
			l.Revoked(p.KeyID)
		}
		return res, Errf("api_key_revoked", "this API key has been revoked")
	}
	if err != nil {
		return res, Internal(err)
	}
	SetRateHeaders(c.RequestCtx, res)
	if !res.Allowed {
		e := Errf("rate_limit_exceeded", "rate limit of %d requests per minute exceeded", res.Limit)
		e.RetryAfter = retrySeconds(res.RetryAfter)
		return res, e
	}
	return res, nil
}

// throttleFailure counts a failed authentication (any 401) against the
// client's address and turns it into 429 too_many_failed_authentications,
// with Retry-After, once the address has spent its AuthFailureLimit. Only
// failures are counted, and a request whose key verifies never comes here,
// so a valid key from a throttled address is still served: a fleet behind
// one NAT keeps working while a scanner beside it is refused. The price is
// that a well-formed key from a throttled address is still looked up (one
// read by hash); no key and malformed keys never reach the store. A denied
// failure does not spend budget, so the address recovers at the refill
// rate. If the limiter fails the original 401 is answered (fail open: the
// throttle must not turn a limiter outage into refusing everyone).
func (s *Server) throttleFailure(c *Ctx, err error) error {
	e := AsError(err)
	if e.Status != fasthttp.StatusUnauthorized || s.cfg.AuthFailureLimit.Rate < 0 {
		return err
	}
	res, lerr := s.failures.Allow(s.baseCtx, authFailurePrefix+clientAddr(c.RequestCtx), s.cfg.AuthFailureLimit)
	if lerr != nil {
		s.log.Warn("auth failure throttle unavailable", "request_id", c.RequestID, "error", lerr)
		return err
	}
	if res.Allowed {
		return err
	}
	return &Error{Status: fasthttp.StatusTooManyRequests, Code: "too_many_failed_authentications",
		Message:    fmt.Sprintf("too many failed authentications from this address (%d per minute)", res.Limit),
		RetryAfter: retrySeconds(res.RetryAfter)}
}

// clientAddr is the address failed authentications are counted against:
// the TCP peer (X-Forwarded-For is not trusted; the server has no
// trusted-proxy setting). An IPv6 peer counts as its /64, the block one
// host is usually given, so rotating addresses inside it does not reset
// the budget.
func clientAddr(rc *fasthttp.RequestCtx) string {
	ip := rc.RemoteIP()
	if ip4 := ip.To4(); ip4 != nil {
		return ip4.String()
	}
	if len(ip) == net.IPv6len {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}

// SetRateHeaders writes the X-RateLimit-* headers of res.
func SetRateHeaders(rc *fasthttp.RequestCtx, res ratelimit.Result) {
	h := &rc.Response.Header
	var buf [20]byte
	h.SetBytesV("X-RateLimit-Limit", strconv.AppendInt(buf[:0], int64(res.Limit), 10))
	h.SetBytesV("X-RateLimit-Remaining", strconv.AppendInt(buf[:0], int64(res.Remaining), 10))
	h.SetBytesV("X-RateLimit-Reset", strconv.AppendInt(buf[:0], res.Reset, 10))
	h.Set("X-RateLimit-Window", "60")
}

func retrySeconds(d time.Duration) int {
	s := int((d + time.Second - 1) / time.Second)
	if s < 1 {
		s = 1
	}
	return s
}

// extractKey returns the API key the request presents: X-API-Key,
// Authorization: Bearer, and with query (a browser's websocket) the
// "fhk." subprotocol and the api_key parameter. A request presenting two
// different keys is ambiguous: conflict names the two places, and no key
// is returned. The same key in several places is that key.
func extractKey(rc *fasthttp.RequestCtx, query bool) (key, conflict string) {
	var from string
	offer := func(k []byte, where string) {
		switch {
		case len(k) == 0 || conflict != "":
		case key == "":
			key, from = string(k), where
		case key != string(k):
			conflict = from + " and " + where
		}
	}
	offer(rc.Request.Header.Peek("X-API-Key"), "X-API-Key")
	if a := rc.Request.Header.Peek("Authorization"); len(a) > 7 && (string(a[:7]) == "Bearer " || string(a[:7]) == "bearer ") {
		offer(a[7:], "Authorization")
	}
	if query {
		// a browser's websocket: the key offered as the subprotocol
		// "fhk.<key>" (delivery/ws selects only "fleethub.v1", never this one)
		for p := range bytes.SplitSeq(rc.Request.Header.Peek("Sec-WebSocket-Protocol"), []byte(",")) {
			if p = bytes.TrimSpace(p); len(p) > 4 && string(p[:4]) == "fhk." {
				offer(p[4:], "Sec-WebSocket-Protocol")
			}
		}
		offer(rc.QueryArgs().Peek("api_key"), "api_key")
	}
	if conflict != "" {
		return "", conflict
	}
	return key, ""
}

// writeError writes err as the response. It counts every 429 in
// fleethub_rate_limit_rejections_total, so a limit a handler enforces
// itself (per trip, per endpoint) is counted like the key's own.
func (s *Server) writeError(c *Ctx, err error) {
	e := AsError(err)
	if e.Status == fasthttp.StatusTooManyRequests {
		s.metrics.rateLimited.Inc()
	}
	// an open breaker already logged its one line: none per request
	if e.Status >= 500 && !errors.Is(err, breaker.ErrOpen) {
		s.log.Error("request failed", "request_id", c.RequestID, "path", string(c.Path()), "error", err)
	}
	if e.RetryAfter > 0 {
		c.Response.Header.Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	c.Response.ResetBody()
	details := e.Details
	if details == nil || reflect.ValueOf(details).Kind() == reflect.Map && reflect.ValueOf(details).IsNil() {
		// the general form always has its three fields: nothing to add is {}
		details = struct{}{}
	}
	var body any = ErrorBody{Error: ErrorObject{Code: e.Code, Message: e.Message, Details: details}, RequestID: c.RequestID}
	if s.plainForm(c) {
		body = PlainError{Success: false, Error: e.Message}
	}
	if jerr := c.JSON(e.Status, body); jerr != nil {
		// details that do not encode: the answer goes without a body
		s.log.Error("error answer not encoded", "request_id", c.RequestID, "path", string(c.Path()), "error", jerr)
	}
}

// plainForm reports whether c's error answers in the plain form
// {success:false, error}: those of an AuthKeyPlain route, and those of a
// request no route takes (404, 405, a malformed or too large request)
// whose path is a plain route's path or lies beneath it, segment by
// segment, a parameter segment ({org_id}, {y}.mvt) matching any one:
// POST /v1/search, GET /v1/search/x and GET /v1/api/tiles/buildings/1/2/3.png
// answer as GET /v1/search and the tiles do.
func (s *Server) plainForm(c *Ctx) bool {
	if c.Route != nil {
		return c.Route.Auth == AuthKeyPlain
	}
	if len(s.plainPaths) == 0 {
		return false
	}
	segs := strings.Split(strings.Trim(string(c.Path()), "/"), "/")
	for _, p := range s.plainPaths {
		if beneath(segs, p) {
			return true
		}
	}
	return false
}

// beneath reports whether the path segments segs begin with the route
// path segments p, a parameter segment of p matching any non-empty one.
func beneath(segs, p []string) bool {
	if len(segs) < len(p) {
		return false
	}
	for i, ps := range p {
		if ps != segs[i] && (!strings.Contains(ps, "{") || segs[i] == "") {
			return false
		}
	}
	return true
}

func (s *Server) bare(rc *fasthttp.RequestCtx) *Ctx {
	c := &Ctx{RequestCtx: rc, srv: s}
	c.RequestID, _ = rc.UserValue(reqIDKey).(string)
	return c
}

func (s *Server) notFound(rc *fasthttp.RequestCtx) {
	c := s.bare(rc)
	s.writeError(c, s.unmatched(c, Errf("not_found", "no endpoint %s %s", rc.Method(), rc.Path())))
}

func (s *Server) methodNotAllowed(rc *fasthttp.RequestCtx) {
	c := s.bare(rc)
	s.writeError(c, s.unmatched(c, Errf("method_not_allowed", "method %s is not allowed on %s", rc.Method(), rc.Path())))
}

// unmatched answers e, the refusal of a request no route matches, once
// the request is charged to its key: an API key in X-API-Key or
// Authorization that verifies is counted as any request of the key, so the
// answer carries its X-RateLimit-* headers (429 rate_limit_exceeded once
// its budget is spent). A key that does not verify counts as a failed
// authentication from the address (429 too_many_failed_authentications
// once the address has spent its budget) and the answer is e, as it is
// without a key or with a browser token (no route, so no token scope,
// opens the request): those answers carry no rate-limit headers.
func (s *Server) unmatched(c *Ctx, e *Error) error {
	key, _ := extractKey(c.RequestCtx, false)
	if key == "" || LooksLikeToken(key) || s.auth == nil || s.limiter == nil {
		return e
	}
	if _, err := apikey.Parse(key); err != nil {
		return e
	}
	p, err := s.auth.Authenticate(s.baseCtx, key)
	if err != nil {
		if t := s.throttleFailure(c, AsError(err)); AsError(t).Code == "too_many_failed_authentications" {
			return t
		}
		return e
	}
	if _, err := s.charge(c, p); err != nil {
		return err
	}
	return e
}

// transportError answers errors fasthttp finds before routing (body too
// large, header block too large, malformed request). Its messages are
// fixed: fasthttp's error text quotes the raw request, credentials
// included, so it is neither answered nor logged here.
func (s *Server) transportError(rc *fasthttp.RequestCtx, err error) {
	c := s.bare(rc)
	if c.RequestID == "" {
		c.RequestID = s.reqPfx + strconv.FormatUint(s.reqSeq.Add(1), 36)
		rc.Response.Header.Set("X-Request-Id", c.RequestID)
	}
	if errors.Is(err, fasthttp.ErrBodyTooLarge) {
		s.writeError(c, Errf("payload_too_large", "request body exceeds %d bytes", s.bodyLimit(&rc.Request.Header)))
		return
	}
	var te interface{ Timeout() bool }
	if errors.As(err, &te) && te.Timeout() {
		s.writeError(c, &Error{Status: 408, Code: "request_timeout", Message: "request timed out"})
		return
	}
	var small *fasthttp.ErrSmallBuffer
	if errors.As(err, &small) {
		s.writeError(c, Errf("request_header_fields_too_large", "request line and headers exceed %d bytes", MaxHeaderBytes))
		return
	}
	s.writeError(c, Errf("invalid_request", "malformed HTTP request"))
}

// Listen binds the address (and PlainAddr when set); Serve then serves
// on them. Split so callers and tests learn the bound address before
// serving.
func (s *Server) Listen() (net.Addr, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("api: listen %s: %w", s.cfg.Addr, err)
	}
	var plain net.Listener
	if s.cfg.PlainAddr != "" {
		if plain, err = net.Listen("tcp", s.cfg.PlainAddr); err != nil {
			ln.Close()
			return nil, fmt.Errorf("api: listen %s: %w", s.cfg.PlainAddr, err)
		}
	}
	addr := ln.Addr()
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	s.lnMu.Lock()
	s.ln, s.plain = ln, plain
	s.lnMu.Unlock()
	return addr, nil
}

// PlainAddr is the bound plain HTTP address, nil without PlainAddr.
func (s *Server) PlainAddr() net.Addr {
	s.lnMu.Lock()
	defer s.lnMu.Unlock()
	if s.plain == nil {
		return nil
	}
	return s.plain.Addr()
}

// Serve serves until Shutdown. It returns nil after a clean shutdown.
func (s *Server) Serve() error {
	s.lnMu.Lock()
	ln, plain, down := s.ln, s.plain, s.shutdown
	s.lnMu.Unlock()
	if ln == nil {
		return errors.New("api: Serve before Listen")
	}
	if down {
		return nil
	}
	plainErr := make(chan error, 1)
	if plain != nil {
		go func() { plainErr <- s.http.Serve(plain) }()
	} else {
		plainErr <- nil
	}
	err := s.http.Serve(ln)
	if err == nil {
		err = <-plainErr
	}
	s.lnMu.Lock()
	down = s.shutdown
	s.lnMu.Unlock()
	if down {
		return nil // the listeners were closed by Shutdown
	}
	return err
}

// Shutdown stops accepting connections and waits for in-flight requests
// until ctx ends, then cancels the handlers' context.
func (s *Server) Shutdown(ctx context.Context) error {
	// a Shutdown that comes before Serve started must still stop it:
	// close the listener here too, and Serve returns at once
	s.lnMu.Lock()
	s.shutdown = true
	var lnErr error
	for _, ln := range []net.Listener{s.ln, s.plain} {
		if ln == nil {
			continue
		}
		if err := ln.Close(); !errors.Is(err, net.ErrClosed) {
			lnErr = errors.Join(lnErr, err) // else Serve closed it first
		}
	}
	s.lnMu.Unlock()
	err := s.http.ShutdownWithContext(ctx)
	if errors.Is(err, net.ErrClosed) {
		err = nil // the listener closed above
	}
	s.cancel()
	return errors.Join(err, lnErr)
}

// ActiveConnections returns open HTTP connections.
func (s *Server) ActiveConnections() int { return int(s.http.GetOpenConnectionsCount()) }

// RouterList returns the method → paths table the router actually serves,
// so tests can prove the document lists every one.
func (s *Server) RouterList() map[string][]string { return s.router.List() }

// fasthttpLogger sends fasthttp's own messages to slog at debug level:
// they repeat what the error handler already answered.
type fasthttpLogger struct{ log *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "fasthttp")
}
