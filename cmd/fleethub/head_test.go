package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHeadAnswersAsGet: HEAD on every GET route of the document answers
// what GET answers, status and Content-Type, with a Content-Length and no
// body, a path differing by a trailing slash redirected as GET's (301);
// the websocket and the Server-Sent Events of a registered stream, which
// a HEAD cannot open, refuse it with 405 and an Allow naming GET, not HEAD; a HEAD asking
// the feed for its event stream answers the stream's headers and ends.
func TestHeadAnswersAsGet(t *testing.T) {
	n := startNode(t, testConfig(t))
	key := n.key("org-a", "test", []string{"all"}, 1000000)
	var doc map[string]any
	if err := json.Unmarshal(n.do("GET", "/v1/openapi.json", "", nil).Body, &doc); err != nil {
		t.Fatal(err)
	}
	refused := map[string]bool{"/api/v1/streaming/ws": true, "/api/v1/streaming/sse": true}
	seen := 0
	for p, item := range doc["paths"].(map[string]any) {
		if item.(map[string]any)["get"] == nil {
			continue
		}
		url := fillPath(p)
		head := n.do("HEAD", url, key, nil)
		if refused[p] {
			if allow := head.Header.Get("Allow"); head.Status != 405 || !strings.Contains(allow, "GET") || strings.Contains(allow, "HEAD") {
				t.Errorf("HEAD %s: %d, Allow %q, want 405 naming GET, not HEAD", p, head.Status, allow)
			}
			continue
		}
		seen++
		get := n.do("GET", url, key, nil)
		if head.Status != get.Status || head.Header.Get("Content-Type") != get.Header.Get("Content-Type") || len(head.Body) != 0 {
			t.Errorf("HEAD %s: %d %q, %d bytes; GET: %d %q", p, head.Status, head.Header.Get("Content-Type"), len(head.Body), get.Status, get.Header.Get("Content-Type"))
		}
		if cl, err := strconv.Atoi(head.Header.Get("Content-Length")); len(get.Body) > 0 && (err != nil || cl == 0) {
			t.Errorf("HEAD %s: Content-Length %q, GET answered %d bytes", p, head.Header.Get("Content-Length"), len(get.Body))
		}
	}
	if seen < 30 {
		t.Errorf("HEAD tried on %d GET routes only", seen)
	}
	// a deterministic answer: the same length as GET's
	get, head := n.do("GET", "/v1/openapi.json", "", nil), n.do("HEAD", "/v1/openapi.json", "", nil)
	if head.Header.Get("Content-Length") != strconv.Itoa(len(get.Body)) {
		t.Errorf("HEAD /v1/openapi.json: Content-Length %q, GET's body %d bytes", head.Header.Get("Content-Length"), len(get.Body))
	}
	noFollow := &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, m := range []string{"GET", "HEAD"} {
		req, _ := http.NewRequest(m, n.url+"/v1/trips/", nil)
		req.Header.Set("X-API-Key", key)
		res, err := noFollow.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 301 || !strings.HasSuffix(res.Header.Get("Location"), "/v1/trips") {
			t.Errorf("%s /v1/trips/: %d %q, want 301 to /v1/trips", m, res.StatusCode, res.Header.Get("Location"))
		}
	}
	sse := n.do("HEAD", "/api/v1/streaming/feed", key, nil, "Accept", "text/event-stream")
	if sse.Status != 200 || !strings.HasPrefix(sse.Header.Get("Content-Type"), "text/event-stream") || len(sse.Body) != 0 {
		t.Errorf("HEAD of the feed's event stream: %d %q %d bytes", sse.Status, sse.Header.Get("Content-Type"), len(sse.Body))
	}
	if bad := n.do("HEAD", "/api/v1/streaming/feed?after=zzz", key, nil, "Accept", "text/event-stream"); bad.Status != 400 {
		t.Errorf("HEAD of the feed's event stream from a bad cursor: %d, want GET's 400", bad.Status)
	}
}
