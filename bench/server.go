package bench

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// ServerConfig is how a generator reaches the server beyond its address.
type ServerConfig struct {
	// PID of a server on this machine: its CPU time and resident memory
	// come from /proc/<PID>/stat and /proc/<PID>/status (0: from the
	// server's /metrics, which a cluster's nodes each serve).
	PID int
	// Insecure accepts any certificate of an https:// (wss://) server: a
	// self-signed one.
	Insecure bool
}

// serverRows adds the server's CPU and memory when they were read.
func serverRows(rep *Report, source string, cpu, secs, rss float64) {
	if source == "" {
		return
	}
	rep.Add("server_cpu_source", "server figures from", source, "")
	rep.Add("server_cpu_s", "server CPU", cpu, "s")
	rep.Add("server_cpu_pct", "server CPU share of one core", 100*cpu/secs, "%")
	rep.Add("server_rss_mib", "server RSS", rss/(1<<20), "MiB")
}

// client is the HTTP client of the server's API: the default one, or one
// that accepts any certificate.
func (s ServerConfig) client() *http.Client {
	if !s.Insecure {
		return http.DefaultClient
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // --insecure: a self-signed certificate
	return &http.Client{Transport: t}
}

// clientConns is client for n requests in flight at once: it keeps n
// connections to the server open between requests (the default one
// keeps two, so that the other senders would each open and close a
// connection per request, and the server's figures would count that).
func (s ServerConfig) clientConns(n int) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = max(n, t.MaxIdleConns), n
	if s.Insecure {
		t.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // --insecure: a self-signed certificate
	}
	return &http.Client{Transport: t}
}

// dialer is a websocket dialer with the server's TLS settings.
func (s ServerConfig) dialer(readBuf, writeBuf int) *websocket.Dialer {
	d := &websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: readBuf, WriteBufferSize: writeBuf}
	if s.Insecure {
		d.TLSClientConfig = &tls.Config{InsecureSkipVerify: true} // --insecure: a self-signed certificate
	}
	return d
}

// usage reads the server's CPU seconds and resident bytes: from /proc
// with a PID, else from base's /metrics; source says which ("" when
// neither answered).
func (s ServerConfig) usage(ctx context.Context, base string) (cpu, rss float64, source string) {
	if s.PID > 0 {
		p, err := ReadProc(s.PID)
		if err != nil {
			return 0, 0, ""
		}
		return p.CPU.Seconds(), float64(p.RSS), fmt.Sprintf("/proc/%d", s.PID)
	}
	cpu, rss = serverProcessWith(ctx, s.client(), base)
	if cpu == 0 && rss == 0 {
		return 0, 0, ""
	}
	return cpu, rss, "/metrics"
}

// wsURL is the websocket address of a stream at base: wss:// for an
// https:// base.
func wsURL(base, streamID, key string) (string, error) {
	origin, err := wsOrigin(base)
	if err != nil {
		return "", err
	}
	return origin + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(streamID) + "&api_key=" + url.QueryEscape(key), nil
}

// wsOrigin is the websocket scheme and host of base: wss:// for an
// https:// base, ws:// otherwise.
func wsOrigin(base string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("bench: %w", err)
	}
	if u.Scheme == "https" {
		return "wss://" + u.Host, nil
	}
	return "ws://" + u.Host, nil
}

func apiCall(ctx context.Context, method, url, key string, body any, out any) error {
	return apiCallWith(ctx, http.DefaultClient, method, url, key, body, out)
}

func apiCallWith(ctx context.Context, client *http.Client, method, url, key string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	req.Header.Set("X-API-Key", key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := client.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return fmt.Errorf("%s %s: reading the answer: %w", method, url, err)
	}
	if res.StatusCode >= 300 {
		return fmt.Errorf("%s %s: %d %s", method, url, res.StatusCode, b)
	}
	if out != nil {
		return json.Unmarshal(b, out)
	}
	return nil
}

// serverProcess reads process_cpu_seconds_total and
// process_resident_memory_bytes from /metrics.
func serverProcess(ctx context.Context, base string) (cpu, rss float64) {
	return serverProcessWith(ctx, http.DefaultClient, base)
}

func serverProcessWith(ctx context.Context, client *http.Client, base string) (cpu, rss float64) {
	req, err := http.NewRequestWithContext(ctx, "GET", base+"/metrics", nil)
	if err != nil {
		return 0, 0
	}
	res, err := client.Do(req)
	if err != nil {
		return 0, 0
	}
	defer res.Body.Close()
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		// a value that does not parse reads as none (0), as a missing one
		if v, ok := strings.CutPrefix(line, "process_cpu_seconds_total "); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				cpu = f
			}
		}
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				rss = f
			}
		}
	}
	return cpu, rss
}

// handshakeErr is a failed websocket dial's error with the server's
// answer when it gave one (429 too_many_connections past a key's cap).
func handshakeErr(resp *http.Response, err error) error {
	if resp == nil {
		return err
	}
	b, rerr := io.ReadAll(io.LimitReader(resp.Body, 300))
	resp.Body.Close()
	if rerr != nil {
		return fmt.Errorf("%w: %d", err, resp.StatusCode)
	}
	return fmt.Errorf("%w: %d %s", err, resp.StatusCode, bytes.TrimSpace(b))
}
