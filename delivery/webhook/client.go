package webhook

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

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
// be the address checked), no redirects, and the address check unless
// allowPrivate.
func newClient(conns int, timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		d.Control = control
	}
	t := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          conns,
		MaxIdleConnsPerHost:   conns,
		MaxConnsPerHost:       conns,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   timeout,
		ExpectContinueTimeout: 0,
		DisableCompression:    true,
	}
	return &http.Client{
		Transport:     t,
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// outcome kinds.
type kind int

const (
	delivered kind = iota
	retry          // timeouts, connection errors, 408, 429, 5xx
	dead           // 3xx, other 4xx, refused addresses: straight to dead letters
	gone           // 410: disable the endpoint
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
// receiver's health: it did not answer, or answered 429 or 5xx.
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

// send posts r and classifies the answer.
func send(ctx context.Context, c *http.Client, r request, now func() time.Time) outcome {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.body))
	if err != nil {
		return outcome{kind: dead, err: "invalid webhook_url: " + err.Error()}
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return outcome{kind: dead, err: "webhook_url must be http or https"}
	}
	h := req.Header
	h["Content-Type"] = []string{"application/json"}
	h["User-Agent"] = []string{r.userAgent}
	h["Webhook-Id"] = []string{r.id}
	h["Webhook-Timestamp"] = []string{strconv.FormatInt(r.timestamp, 10)}
	h["Webhook-Signature"] = []string{r.signature}
	start := now()
	res, err := c.Do(req)
	lat := now().Sub(start)
	if err != nil {
		return errorOutcome(ctx, err, lat)
	}
	var snippet []byte
	if res.StatusCode < 200 || res.StatusCode > 299 {
		var rerr error
		if snippet, rerr = io.ReadAll(io.LimitReader(res.Body, errorBodyBytes)); rerr != nil {
			snippet = fmt.Appendf(snippet, " [reading the body: %v]", rerr)
		}
	}
	// drain so the connection goes back to the pool
	_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, maxResponseBytes))
	res.Body.Close()
	o := outcome{code: res.StatusCode, latency: lat}
	switch st := res.StatusCode; {
	case st >= 200 && st <= 299:
		o.kind = delivered
		return o
	case st == http.StatusGone:
		o.kind = gone
	case st == http.StatusTooManyRequests || st == http.StatusRequestTimeout || st >= 500:
		o.kind = retry
		o.retryAfter = retryAfter(res.Header.Get("Retry-After"), start)
	case st >= 300 && st <= 399:
		o.kind = dead
		o.err = fmt.Sprintf("HTTP %d: redirects are not followed (Location: %.200s)", st, res.Header.Get("Location"))
		return o
	default:
		o.kind = dead
	}
	o.err = "HTTP " + strconv.Itoa(res.StatusCode)
	if s := strings.TrimSpace(strings.ToValidUTF8(string(snippet), "")); s != "" {
		o.err += ": " + s
	}
	return o
}

func errorOutcome(ctx context.Context, err error, lat time.Duration) outcome {
	var ne net.Error
	switch {
	case errors.Is(err, ErrAddressNotAllowed):
		return outcome{kind: dead, err: ErrAddressNotAllowed.Error() + " (private, loopback, link-local or metadata address; see --allow-private-webhooks)", latency: lat}
	case ctx.Err() != nil:
		return outcome{kind: aborted, err: "shutting down", latency: lat}
	case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, context.DeadlineExceeded):
		return outcome{kind: retry, err: "timeout: no complete answer in time", latency: lat}
	default:
		msg := err.Error()
		if i := strings.LastIndex(msg, ": "); i >= 0 && strings.HasPrefix(msg, "Post ") {
			msg = msg[i+2:] // drop `Post "url":`, keep the cause
		}
		return outcome{kind: retry, err: "connection error: " + msg, latency: lat}
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
