package webhook

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/fleethub/fleethub/internal/netguard"
)

// ErrAddressNotAllowed is a webhook address in a refused range.
var ErrAddressNotAllowed = errors.New("webhook: address not allowed")

// Allowed reports whether a webhook may connect to ip when private
// addresses are refused; the ranges are internal/netguard's, shared with
// the check of webhook_url literals at stream start.
func Allowed(ip netip.Addr) bool { return netguard.Allowed(ip) }

// control is the dialer's Control function: it runs for every connection
// attempt with the address actually dialled, after name resolution, so a
// name that resolves to a refused address (DNS rebinding included) is
// refused at connect time.
func control(network, address string, _ syscall.RawConn) error {
	host, _, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrAddressNotAllowed, address)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || !Allowed(ip) {
		return fmt.Errorf("%w: %s", ErrAddressNotAllowed, host)
	}
	return nil
}

// newClient returns the HTTP client of one endpoint: its own connection
// pool (keep-alive, at most conns connections), no proxy (a proxy would
// be the address checked), no redirects, the address check unless
// allowPrivate, and every connection in cut (closed when the dispatcher
// cuts the requests in flight at shutdown).
//
// A POST that meets a kept-alive connection the receiver had just closed
// (before any byte of an answer) is sent once more on a new connection,
// as net/http does: idle connections are dropped after idleConn, below
// the 5 s keep-alive of common servers, so this is rare, and a receiver
// that got it anyway deduplicates on the webhook-id.
func newClient(conns int, timeout time.Duration, allowPrivate bool, cut *connSet) *fasthttp.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = control
	}
	return &fasthttp.Client{
		Dial: func(addr string) (net.Conn, error) {
			c, err := d.Dial("tcp", addr)
			if err != nil {
				return nil, err
			}
			return cut.track(c)
		},
		MaxConnsPerHost:          conns,
		MaxIdleConnDuration:      idleConn,
		MaxResponseBodySize:      maxResponseBytes,
		NoDefaultUserAgentHeader: true,
		DisablePathNormalizing:   true,
		RetryIfErr: func(_ *fasthttp.Request, attempts int, err error) (bool, bool) {
			closed := errors.Is(err, io.EOF) || errors.Is(err, fasthttp.ErrConnectionClosed)
			return false, attempts < 2 && closed
		},
	}
}

// idleConn is how long a connection may wait unused in an endpoint's pool.
const idleConn = 4 * time.Second

// connSet holds the open connections of every endpoint, so that shutdown
// can cut the requests in flight (fasthttp takes no context). The zero
// value is usable; a nil *connSet tracks nothing.
type connSet struct {
	mu     sync.Mutex
	conns  map[*trackedConn]struct{}
	closed bool
}

// track adds c to the set, or closes it when the set was cut.
func (s *connSet) track(c net.Conn) (net.Conn, error) {
	if s == nil {
		return c, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		c.Close()
		return nil, errShutdown
	}
	if s.conns == nil {
		s.conns = map[*trackedConn]struct{}{}
	}
	t := &trackedConn{Conn: c, set: s}
	s.conns[t] = struct{}{}
	return t, nil
}

// cut closes every connection and refuses new ones.
func (s *connSet) cut() {
	s.mu.Lock()
	s.closed = true
	conns := s.conns
	s.conns = nil
	s.mu.Unlock()
	for c := range conns {
		c.Conn.Close()
	}
}

// errShutdown is a connection refused because the dispatcher is stopping.
var errShutdown = errors.New("webhook: shutting down")

// trackedConn leaves its set when closed.
type trackedConn struct {
	net.Conn
	set *connSet
}

func (c *trackedConn) Close() error {
	c.set.mu.Lock()
	delete(c.set.conns, c)
	c.set.mu.Unlock()
	return c.Conn.Close()
}

// outcome kinds.
type kind int

const (
	delivered kind = iota
	retry          // every answer but a 2xx, timeouts, connection errors
	dead           // nothing sent (refused address, not an http URL): straight to dead letters
	aborted        // shutdown cut the request: give the delivery back unattempted
	skipped        // not sent (no signing secret yet): retry, breaker untouched
)

// outcome is what one request came to.
type outcome struct {
	kind       kind
	code       int
	err        string
	latency    time.Duration
	retryAfter time.Duration
}

// breakerFailure reports whether the outcome counts against the
// receiver's health: it did not answer, or answered anything but a 2xx.
func (o outcome) breakerFailure() bool { return o.kind == retry }

// request is one signed POST.
type request struct {
	url       string
	id        string
	timestamp int64
	signature string
	body      []byte
	userAgent string
}

// send posts r, waiting at most timeout for the whole answer, and
// classifies it.
func send(ctx context.Context, c *fasthttp.Client, r request, timeout time.Duration, now func() time.Time) outcome {
	if !httpURL(r.url) {
		return outcome{kind: dead, err: "webhook_url must be http or https"}
	}
	req, res := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(res)
	req.SetRequestURI(r.url)
	req.Header.SetMethod(fasthttp.MethodPost)
	req.Header.SetContentType("application/json")
	req.Header.SetUserAgent(r.userAgent)
	req.Header.Set("Webhook-Id", r.id)
	req.Header.Set("Webhook-Timestamp", strconv.FormatInt(r.timestamp, 10))
	req.Header.Set("Webhook-Signature", r.signature)
	req.SetBodyRaw(r.body)
	start := now()
	err := c.DoTimeout(req, res, timeout)
	lat := now().Sub(start)
	st := res.StatusCode()
	switch {
	case errors.Is(err, fasthttp.ErrBodyTooLarge) && st > 0:
		// answered: the status decides, the body is not kept
	case errors.Is(err, fasthttp.ErrorInvalidURI):
		return outcome{kind: dead, err: "invalid webhook_url: " + err.Error()}
	case err != nil:
		return errorOutcome(ctx, err, lat)
	}
	o := outcome{code: st, latency: lat}
	switch {
	case st >= 200 && st <= 299:
		o.kind = delivered
		return o
	case st == fasthttp.StatusTooManyRequests || st == fasthttp.StatusRequestTimeout || st >= 500:
		o.kind = retry
		o.retryAfter = retryAfter(string(res.Header.Peek("Retry-After")), start)
	case st >= 300 && st <= 399:
		o.kind = retry
		o.err = fmt.Sprintf("HTTP %d: redirects are not followed (Location: %.200s)", st, res.Header.Peek("Location"))
		return o
	default:
		// any other answer (4xx, 410 included, or a code outside the
		// classes) is retried as a 5xx is: a receiver that answers 401
		// or 404 for a while (a deploy, a misconfiguration being fixed)
		// loses nothing
		o.kind = retry
	}
	o.err = "HTTP " + strconv.Itoa(st)
	var snippet []byte
	if err == nil {
		snippet = res.Body()
		snippet = snippet[:min(len(snippet), errorBodyBytes)]
	}
	if s := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "")); s != "" {
		o.err += ": " + s
	}
	return o
}

// httpURL reports whether u starts with an http or https scheme.
func httpURL(u string) bool {
	i := strings.Index(u, "://")
	return i > 0 && (strings.EqualFold(u[:i], "http") || strings.EqualFold(u[:i], "https"))
}

func errorOutcome(ctx context.Context, err error, lat time.Duration) outcome {
	var te interface{ Timeout() bool }
	switch {
	case errors.Is(err, ErrAddressNotAllowed):
		return outcome{kind: dead, err: ErrAddressNotAllowed.Error() + " (private, loopback, link-local or metadata address; see --allow-private-webhooks)", latency: lat}
	case ctx.Err() != nil:
		return outcome{kind: aborted, err: "shutting down", latency: lat}
	case errors.As(err, &te) && te.Timeout(), errors.Is(err, fasthttp.ErrDialTimeout), errors.Is(err, context.DeadlineExceeded):
		return outcome{kind: retry, err: "timeout: no complete answer in time", latency: lat}
	default:
		return outcome{kind: retry, err: "connection error: " + err.Error(), latency: lat}
	}
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	const most = 365 * 24 * time.Hour // the caller caps it further
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		if n <= 0 {
			return 0
		}
		return time.Duration(min(n, int64(most/time.Second))) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return min(t.Sub(now), most)
	}
	return 0
}
