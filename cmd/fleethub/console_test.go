package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/fleethub/fleethub/internal/waitfor"
)

// chromium finds a Chromium binary. Without one the browser tests skip,
// except under CI=true, where .ci/run installs the Debian package first.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium binary (chromium, chromium-browser, google-chrome, headless-shell) on PATH; .ci/run installs the Debian chromium package")
	}
	t.Skip("the console's browser tests need Chromium (apt-get install -y chromium); skipped without CI=true")
	return ""
}

// browser opens a headless Chromium tab at 1280×800.
func browser(t *testing.T) context.Context {
	t.Helper()
	// what the console does is not concurrency the detector would see
	// (the server's part is the API's, tested under it); the browser
	// tests run in make test's second pass
	skipUnderRace(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)), chromedp.WindowSize(1280, 800),
		chromedp.NoSandbox, chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelC := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelC(); cancelA() })
	// Content-Security-Policy violations are collected by the page itself.
	if err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: `window.__csp = [];
document.addEventListener('securitypolicyviolation', e => window.__csp.push(e.violatedDirective + ' ' + e.blockedURI));`})
		return err
	})); err != nil {
		t.Fatalf("chromium: %v", err)
	}
	return ctx
}

// chrome runs browser actions, failing the test on error.
func chrome(t *testing.T, ctx context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := chromedp.Do(c, actions...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// eventually polls a JavaScript condition until it holds (5 s at most).
func eventually(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	eventuallyWithin(t, ctx, 5*time.Second, what, expr)
}

// eventuallyWithin polls a JavaScript condition until it holds, for d at
// most.
func eventuallyWithin(t *testing.T, ctx context.Context, d time.Duration, what, expr string) {
	t.Helper()
	held := waitfor.Poll(d, func() bool {
		c, cancel := context.WithTimeout(ctx, 20*time.Second)
		ok, err := chromedp.Run(c, chromedp.Evaluate[bool](expr))
		cancel()
		if err != nil && !navigating(err) {
			t.Fatalf("%s: %v", what, err)
		}
		return err == nil && ok
	})
	if !held {
		state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.getElementById('conn').textContent + ' | ' + JSON.stringify(window.fleethubConsole && window.fleethubConsole.stats) + ' | ' + document.querySelector('main').innerText.slice(0, 600) + ' | streams: ' + ((document.getElementById('streams') || {}).innerText || '').slice(0, 800)`))
		t.Fatalf("%s: not seen within %v\n%s\npage: %s", what, d, expr, state)
	}
}

// navigating reports whether an evaluation failed because the page was
// loading another document meanwhile (the console reloads itself when
// its token ends): the condition is asked again on the new page.
func navigating(err error) bool {
	msg := err.Error()
	for _, s := range []string{"navigated or closed", "Execution context was destroyed", "Cannot find context with specified id"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

// shoot saves a screenshot under FLEETHUB_CONSOLE_SCREENSHOTS (docs/img
// when set to 1), and does nothing when it is unset.
func shoot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := os.Getenv("FLEETHUB_CONSOLE_SCREENSHOTS")
	if dir == "" {
		return
	}
	if dir == "1" {
		dir = filepath.Join("..", "..", "docs", "img")
	}
	// the map drawn: every tile loaded and faded in, no zoom under way,
	// and two frames painted since
	eventually(t, ctx, "the map drawn", `![...document.querySelectorAll('.leaflet-tile')].some(e => !e.classList.contains('leaflet-tile-loaded') || (e.style.opacity !== '' && +e.style.opacity < 1)) && !document.querySelector('.leaflet-zoom-anim')`)
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))`, chromedp.EvalAwaitPromise)); err != nil {
		t.Fatalf("frames before the screenshot: %v", err)
	}
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// sockets records the websockets a page opens (Network.webSocketCreated)
// and the headers of their handshake responses.
type sockets struct {
	mu        sync.Mutex
	urls      []string
	responses []network.Headers
}

func watchSockets(t *testing.T, ctx context.Context) *sockets {
	t.Helper()
	s := &sockets{}
	if err := chromedp.Listen(ctx, func(ev any) {
		s.mu.Lock()
		defer s.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventWebSocketCreated:
			s.urls = append(s.urls, e.URL)
		case *network.EventWebSocketHandshakeResponseReceived:
			if e.Response != nil {
				s.responses = append(s.responses, e.Response.Headers)
			}
		}
	}); err != nil {
		t.Fatalf("listen: %v", err)
	}
	return s
}

// check fails when a websocket URL the page opened, or a handshake
// response, carries the key, or when a response selected a subprotocol
// other than fleethub.v1. It returns the number of websockets opened.
func (s *sockets) check(t *testing.T, key string) int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	secret := key[strings.LastIndexByte(key, '_')+1:]
	for _, u := range s.urls {
		if strings.Contains(u, secret) || strings.Contains(u, "api_key") {
			t.Errorf("the page opened a websocket with the key in its URL: %s", strings.ReplaceAll(u, secret, "…"))
		}
	}
	for _, h := range s.responses {
		for name, v := range h {
			if strings.Contains(fmt.Sprint(v), secret) {
				t.Errorf("handshake response header %s carries the key", name)
			}
			if strings.EqualFold(name, "Sec-WebSocket-Protocol") && fmt.Sprint(v) != "fleethub.v1" {
				t.Errorf("subprotocol selected: %v, want fleethub.v1", v)
			}
		}
	}
	if len(s.responses) < len(s.urls)-1 {
		t.Errorf("%d websockets opened, %d handshake responses", len(s.urls), len(s.responses))
	}
	return len(s.urls)
}

func TestConsoleFilesNeedNoKey(t *testing.T) {
	n := startNode(t, testConfig(t))
	for _, p := range []string{"/console/", "/console/console.js", "/console/console.css", "/console/leaflet/leaflet.js", "/console/leaflet/LICENSE"} {
		r := n.do("GET", p, "", nil)
		if r.Status != 200 || len(r.Body) == 0 {
			t.Fatalf("%s: %d", p, r.Status)
		}
		csp := r.Header.Get("Content-Security-Policy")
		for _, want := range []string{"default-src 'none'", "script-src 'self'", "connect-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, want) {
				t.Errorf("%s: Content-Security-Policy %q lacks %q", p, csp, want)
			}
		}
		if r.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("%s: no nosniff", p)
		}
	}
	if ct := n.do("GET", "/console/", "", nil).Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("page content type %q", ct)
	}
	if r := n.do("GET", "/console", "", nil); r.Status != 200 || !strings.Contains(string(r.Body), "console.js") { // redirected to /console/
		t.Errorf("/console: %d", r.Status)
	}
	if r := n.do("GET", "/console/missing.js", "", nil); r.Status != 404 {
		t.Errorf("missing file: %d", r.Status)
	}
	if body := string(n.do("GET", "/console/", "", nil).Body); strings.Contains(body, "<script>") || strings.Contains(body, " style=") || strings.Contains(body, "http") {
		t.Errorf("the page has an inline script or style, or an outside URL")
	}
}

// TestConsoleInBrowser drives the console in headless Chromium against a
// real node: sign-in from the fragment, a vehicle on the map, events in
// the feed, filters, focus, acknowledging an alert, a dropped connection
// resumed without duplicates, and a reload replaying the log.
func TestConsoleInBrowser(t *testing.T) {
	ctx := browser(t)
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)

	t0 := time.Now().Add(-3 * time.Minute).UTC()
	trip := n.startTrip(k, "veh-1", t0)
	if r := n.batch(k, trip, track(t0, 40.0, -83.0, constant(30, 10))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	// an alert created before the page opens, far from the vehicle (so
	// that it does not colour it): the alert listing brings it
	r := n.do("POST", "/v1/emergency/alerts", k, map[string]any{"alert_type": "traffic_disruption", "severity": "moderate", "title": "Main St closed", "message": "Use the bypass",
		"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 10.0, "longitude": 10.0}, "radius_km": 1},
		"target_audience":   map[string]any{"include": []string{"active_drivers"}},
		"delivery_channels": []map[string]any{{"channel": "in_app_alert"}},
		"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true})
	if r.Status != 201 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	earlier := r.json(t)["alert_id"].(string)
	// an event ingested before any console exists: the console opens with it
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{map[string]any{"event_id": "console-e0", "event_type": "speeding", "category": "safety_events",
		"timestamp": stamp(-2 * time.Minute), "severity": "medium", "source": map[string]any{"vehicle_id": "veh-1"}}}}); r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	waitfor.Until(t, 10*time.Second, "the event in the feed", func() bool {
		return len(n.pull(t, k, "last=1").Entries) == 1
	})
	streamsBefore := n.do("GET", "/api/v1/streaming/streams?limit=200", k, nil).json(t)["streams"].([]any)

	socks := watchSockets(t, ctx)
	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/#key="+k))
	eventually(t, ctx, "connected", `document.getElementById('conn').textContent === 'live'`)
	// the key was exchanged for a token and forgotten
	keyGone(t, ctx, k)
	eventually(t, ctx, "the event from before the console opened", `!!document.querySelector('#feed [data-event-id="console-e0"]')`)
	eventually(t, ctx, "the alert created before the page opened", `!!document.querySelector('#alerts [data-alert="`+earlier+`"]') && document.querySelector('#alerts [data-alert="`+earlier+`"]').textContent.indexOf('Main St closed') === 0`)

	// a stream started through the API, not by the console, is listed with its status
	r = n.do("POST", "/api/v1/streaming/telemetry/start", k, map[string]any{"data_types": []string{"gps_enhanced"}, "stream_config": map[string]any{"frequency": "low"}, "delivery_method": "websocket"})
	if r.Status != 201 {
		t.Fatalf("stream: %d %s", r.Status, r.Body)
	}
	theirs := r.json(t)["stream_id"].(string)
	eventually(t, ctx, "a stream of the organization in the panel", `(() => { const li = document.querySelector('#streams [data-stream="`+theirs+`"]');
  return !!li && li.dataset.other === 'true' && li.textContent.indexOf('active') > 0 && li.textContent.indexOf('clients') > 0 && !!li.querySelector('[data-follow]'); })()`)
	// following it opens a websocket to it
	chrome(t, ctx, "follow", chromedp.Click(chromedp.CSS(`#streams [data-follow="`+theirs+`"]`)))
	eventually(t, ctx, "followed", `(() => { const li = document.querySelector('#streams [data-stream="`+theirs+`"]');
  return !!li && li.dataset.other !== 'true' && li.textContent.indexOf('(followed)') > 0; })()`)
	eventually(t, ctx, "signed in with a token", `document.getElementById('who').textContent.indexOf('signed in until') === 0`)
	// A trip's vehicle is placed from the trip listing, polled every 2 s,
	// and its route, read when the trip changed: its marker comes up to 2 s
	// plus two round trips after the points, so it gets the usual 5 s (the
	// live paths below are held to 2 s).
	eventually(t, ctx, "vehicle marker", `!!document.querySelector('path.vehicle') && !!document.querySelector('#vehicles [data-vehicle="veh-1"]')`)

	// the vehicle moves: the marker follows and turns to moving
	if r := n.batch(k, trip, track(t0.Add(10*time.Second), 40.0008, -83.0, constant(30, 10))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "vehicle moving", `document.querySelector('#vehicles [data-vehicle="veh-1"]').textContent.indexOf('moving') > 0 && !!document.querySelector('path.vehicle-moving')`)

	evs := []any{
		map[string]any{"event_id": "console-e1", "event_type": "harsh_braking", "category": "safety_events", "timestamp": stamp(-time.Minute),
			"severity": "high", "priority": "urgent", "source": map[string]any{"vehicle_id": "veh-1", "trip_id": trip},
			"location": map[string]any{"latitude": 40.001, "longitude": -83.0}, "event_data": map[string]any{"deceleration_g": 0.61}},
		map[string]any{"event_id": "console-e2", "event_type": "idling", "category": "vehicle_events", "timestamp": stamp(-30 * time.Second),
			"severity": "low", "source": map[string]any{"vehicle_id": "veh-2"}},
	}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	// Events come by the feed's long poll, answered as they are appended:
	// the feed shows them within the 2 s of the ingest answer.
	eventuallyWithin(t, ctx, 2*time.Second, "feed entries within 2 s", `!!document.querySelector('#feed [data-event-id="console-e1"]') && !!document.querySelector('#feed [data-event-id="console-e2"]')`)
	eventually(t, ctx, "newest first", `(() => { const o = [...document.querySelectorAll('#feed button')].filter(b => b.dataset.stream === 'feed').map(b => +b.dataset.offset);
  return o.length >= 2 && o.every((x, i) => i === 0 || o[i - 1] > x); })()`)
	eventually(t, ctx, "an alert colours the vehicle", `!!document.querySelector('path.vehicle-alert')`)

	// a position reported as telemetry (gps_enhanced) places a vehicle without a trip
	if r := n.do("POST", "/v1/telemetry", k, map[string]any{"messages": []any{map[string]any{"timestamp": stamp(-time.Second), "vehicle_id": "veh-3",
		"data_type": "gps_enhanced", "data": map[string]any{"position": map[string]any{"latitude": 40.002, "longitude": -83.001}}}}}); r.Status != 202 {
		t.Fatalf("telemetry: %d %s", r.Status, r.Body)
	}
	// read from the feed too: within 2 s; the list names only vehicles
	// with a marker
	eventuallyWithin(t, ctx, 2*time.Second, "telemetry position within 2 s", `!!document.querySelector('#vehicles [data-vehicle="veh-3"]')`)

	// filters: the severity select, the vehicle field typed into, the category select
	filter := func(category, severity string) chromedp.Action[chromedp.Void] {
		return chromedp.Evaluate[chromedp.Void](`document.getElementById('f-category').value = ` + jsString(category) + `;
document.getElementById('f-severity').value = ` + jsString(severity) + `;
document.getElementById('f-vehicle').value = '';
document.getElementById('feed-filters').dispatchEvent(new Event('input'))`)
	}
	chrome(t, ctx, "filter severity", filter("", "high"))
	eventually(t, ctx, "severity filter", `!!document.querySelector('#feed [data-event-id="console-e1"]') && !document.querySelector('#feed [data-event-id="console-e2"]')`)
	chrome(t, ctx, "filter vehicle", filter("", ""), chromedp.SendKeys(chromedp.CSS("#f-vehicle"), "veh-2"))
	eventually(t, ctx, "vehicle filter", `!document.querySelector('#feed [data-event-id="console-e1"]') && !!document.querySelector('#feed [data-event-id="console-e2"]')`)
	chrome(t, ctx, "filter category", filter("safety_events", ""))
	eventually(t, ctx, "category filter", `!!document.querySelector('#feed [data-event-id="console-e1"]') && !document.querySelector('#feed [data-event-id="console-e2"]')`)
	chrome(t, ctx, "clear filters", filter("", ""))
	eventually(t, ctx, "filters cleared", `!!document.querySelector('#feed [data-event-id="console-e2"]')`)

	// clicking an event focuses the map on it; selecting the vehicle draws its route
	chrome(t, ctx, "click event", chromedp.Click(chromedp.CSS(`#feed [data-event-id="console-e1"]`)))
	eventually(t, ctx, "focus", `document.getElementById('selected').textContent.indexOf('harsh_braking') === 0 && !!document.querySelector('path.focus-ring')`)
	chrome(t, ctx, "select vehicle", chromedp.Click(chromedp.CSS(`#vehicles [data-vehicle="veh-1"]`)))
	eventually(t, ctx, "route", `!!document.querySelector('path.trip-route') && !!document.querySelector('path.route-event')`)
	shoot(t, ctx, "console-map.png")

	// an alert reaches the driver of veh-1; the console acknowledges it
	r = n.do("POST", "/v1/emergency/alerts", k, map[string]any{"alert_type": "severe_weather_warning", "severity": "high", "title": "Flooding on High St", "message": "Avoid High St",
		"affected_area":     map[string]any{"type": "radius", "center": map[string]any{"latitude": 40.0, "longitude": -83.0}, "radius_km": 10},
		"target_audience":   map[string]any{"include": []string{"active_drivers"}},
		"delivery_channels": []map[string]any{{"channel": "in_app_alert"}},
		"expiration":        time.Now().Add(time.Hour).UTC().Format(time.RFC3339), "acknowledgment_required": true})
	if r.Status != 201 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	alert := r.json(t)["alert_id"].(string)
	if r := n.do("POST", "/v1/emergency/incidents", k, map[string]any{"event_type": "breakdown", "severity_level": "moderate", "vehicle_id": "veh-1",
		"location": map[string]any{"latitude": 40.0015, "longitude": -83.0}, "description": "flat tyre"}); r.Status != 201 {
		t.Fatalf("incident: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "incident", `!!document.querySelector('#incidents [data-incident]')`)
	eventually(t, ctx, "alert with its recipient", `!!document.querySelector('#alerts [data-ack="`+alert+`/d-veh-1"]')`)
	shoot(t, ctx, "console-emergency.png")
	chrome(t, ctx, "acknowledge", chromedp.Click(chromedp.CSS(`#alerts [data-ack="`+alert+`/d-veh-1"]`)))
	eventually(t, ctx, "acknowledged", `!!document.querySelector('#alerts [data-alert="`+alert+`"] .acked')`)
	if got := n.do("GET", "/v1/emergency/alerts/"+alert, k, nil).json(t)["acknowledgment_status"].(map[string]any)["received"]; got != 1.0 {
		t.Errorf("acknowledgments on the server: %v", got)
	}

	// a dropped connection is reported, resumed after the feed's cursor,
	// and shows each event once
	chrome(t, ctx, "watch the connection", chromedp.Evaluate[chromedp.Void](`window.__down = false; window.__connects = window.fleethubConsole.stats.connects; new MutationObserver(() => {
  if (document.getElementById('conn').classList.contains('conn-down')) window.__down = true;
}).observe(document.getElementById('conn'), {attributes: true, childList: true, subtree: true}); window.fleethubConsole.drop()`))
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{map[string]any{"event_id": "console-e3", "event_type": "speeding", "category": "safety_events",
		"timestamp": stamp(-time.Second), "severity": "medium", "source": map[string]any{"vehicle_id": "veh-1"}}}}); r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "resumed", `window.__down && window.fleethubConsole.stats.connects > window.__connects && document.getElementById('conn').textContent === 'live' && !!document.querySelector('#feed [data-event-id="console-e3"]')`)
	unique := `(() => { const b = [...document.querySelectorAll('#feed button')];
  const keys = b.map(x => x.dataset.stream + ':' + x.dataset.offset);
  return b.length > 3 && new Set(keys).size === keys.length && ['console-e0', 'console-e1', 'console-e2', 'console-e3'].every(id => b.filter(x => x.dataset.eventId === id).length === 1); })()`
	eventually(t, ctx, "no duplicates after the reconnect", unique)

	// a reload reads the feed's newest events again, once each, and
	// starts no stream
	chrome(t, ctx, "reload", chromedp.Reload())
	eventually(t, ctx, "replayed", `document.getElementById('conn').textContent === 'live' && !!document.querySelector('#feed [data-event-id="console-e3"]')`)
	eventually(t, ctx, "no duplicates after the reload", unique)
	shoot(t, ctx, "console-feed.png")
	streamsAfter := n.do("GET", "/api/v1/streaming/streams?limit=200", k, nil).json(t)["streams"].([]any)
	if len(streamsAfter) != len(streamsBefore)+1 { // the one started through the API above
		t.Errorf("streams before the console opened: %d, after two loads: %d; the console started streams", len(streamsBefore), len(streamsAfter))
	}

	csp, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp`))
	if err != nil {
		t.Fatal(err)
	}
	if len(csp) > 0 {
		t.Errorf("Content-Security-Policy violations: %v", csp)
	}
	// the key went as a subprotocol on every websocket (the followed
	// stream's: on follow, after the drop, after the reload)
	if opened := socks.check(t, k); opened < 2 {
		t.Errorf("%d websockets seen, want at least 2", opened)
	}

	// phone width
	chrome(t, ctx, "phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2)))
	eventually(t, ctx, "phone layout", `document.documentElement.scrollWidth <= window.innerWidth + 1`)
	shoot(t, ctx, "console-phone.png")
	chrome(t, ctx, "desktop", chromedp.EmulateViewport(1280, 800))

	// the token revoked: the followed stream's websocket closes with
	// 4401 and the console asks for a key again; signing in with the
	// form starts it again with a new token, the key forgotten again
	tok, err := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.parse(sessionStorage.getItem('fleethub.console.token')).token_id`))
	if err != nil || tok == "" {
		t.Fatalf("the token's id in the tab: %q %v", tok, err)
	}
	if r := n.do("DELETE", "/v1/tokens/"+tok, k, nil); r.Status != 200 {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "asked for a key again", `(() => { try { return !document.getElementById('signin').hidden && document.getElementById('app').hidden &&
  document.getElementById('signin-error').textContent.indexOf('revoked') > 0 && !sessionStorage.getItem('fleethub.console.token'); } catch (e) { return false; } })()`)
	chrome(t, ctx, "sign in again", chromedp.SendKeys(chromedp.CSS("#key"), k+kb.Enter))
	eventually(t, ctx, "live again", `document.getElementById('conn').textContent === 'live' && !!document.querySelector('#feed [data-event-id="console-e3"]')`)
	keyGone(t, ctx, k)
	if again, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.parse(sessionStorage.getItem('fleethub.console.token')).token_id`)); again == tok || again == "" {
		t.Errorf("signed in again with token %q, the revoked one was %q", again, tok)
	}
}

// keyGone fails unless the console holds a token and the key is in no
// storage, URL or markup of the page.
func keyGone(t *testing.T, ctx context.Context, key string) {
	t.Helper()
	eventually(t, ctx, "a token in the tab, the key nowhere", `(() => {
  const k = `+jsString(key)+`, secret = k.slice(k.lastIndexOf('_') + 1);
  const stores = [localStorage, sessionStorage].flatMap(s => Object.keys(s).map(n => n + '=' + s.getItem(n)));
  const tok = JSON.parse(sessionStorage.getItem('fleethub.console.token') || '{}');
  return !!tok.token && tok.scopes.indexOf('feed:read') >= 0 && stores.every(v => v.indexOf(secret) < 0) &&
    location.href.indexOf(secret) < 0 && document.documentElement.outerHTML.indexOf(secret) < 0 && document.getElementById('key').value === ''; })()`)
}

func jsString(s string) string { return fmt.Sprintf("%q", s) }

// TestConsoleBaseMap loads the console on a node with a vector tile
// archive (--tiles): the map draws the archive's tiles under a vehicle.
func TestConsoleBaseMap(t *testing.T) {
	cfg := testConfig(t)
	cfg.Tiles = sharedData(t, "tiles/protomaps-vector-firenze-it.pmtiles")
	ctx := browser(t)
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-3 * time.Minute).UTC()
	trip := n.startTrip(k, "veh-fi", t0)
	if r := n.batch(k, trip, track(t0, 43.7687, 11.2530, constant(25, 20))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/#key="+k))
	eventually(t, ctx, "vehicle marker", `!!document.querySelector('#vehicles [data-vehicle="veh-fi"]')`)
	chrome(t, ctx, "zoom", chromedp.Click(chromedp.CSS(`#vehicles [data-vehicle="veh-fi"]`)))
	eventually(t, ctx, "tiles drawn at street level", `/ m$/.test(document.querySelector('.leaflet-control-scale-line').textContent) && [...document.querySelectorAll('canvas.base-tile')].some(c => c.dataset.features > 100)`)
	shoot(t, ctx, "console-basemap.png")
	csp, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__csp`))
	if err != nil || len(csp) > 0 {
		t.Errorf("Content-Security-Policy violations: %v %v", csp, err)
	}
}

// tabTo presses Tab until the focused element satisfies cond (a
// JavaScript expression over el, the focused element), at most 80 times.
func tabTo(t *testing.T, ctx context.Context, what, cond string) {
	t.Helper()
	for range 80 {
		chrome(t, ctx, "tab", chromedp.KeyEvent(kb.Tab))
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`(el => !!el && (`+cond+`))(document.activeElement)`))
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if ok {
			return
		}
	}
	t.Fatalf("%s: not reached with 80 presses of Tab", what)
}

// TestConsoleKeyboard uses the console with the keyboard only: the key
// typed into the sign-in form and sent with Enter, a refused key, the feed
// filters reached with Tab and set with the keys, an event entry reached
// with Tab and activated with Enter.
func TestConsoleKeyboard(t *testing.T) {
	ctx := browser(t)
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)

	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/"))
	eventually(t, ctx, "the key field has the focus", `document.activeElement && document.activeElement.id === 'key'`)
	wrong := "fhk_test_" + strings.Repeat("0", 64)
	chrome(t, ctx, "type a wrong key", chromedp.KeyEvent(wrong), chromedp.KeyEvent(kb.Enter))
	eventually(t, ctx, "refused, the focus back on the key field", `document.getElementById('signin-error').textContent.indexOf('not accepted') >= 0 && document.activeElement.id === 'key' && !document.getElementById('signin').hidden`)
	chrome(t, ctx, "type the key", chromedp.KeyEvent(k), chromedp.KeyEvent(kb.Enter))
	eventually(t, ctx, "signed in", `document.getElementById('conn').textContent === 'live' && document.getElementById('signin').hidden && !sessionStorage.getItem('fleethub.console.key') && !!sessionStorage.getItem('fleethub.console.token')`)

	evs := []any{
		map[string]any{"event_id": "kb-e1", "event_type": "harsh_braking", "category": "safety_events", "timestamp": stamp(-time.Minute),
			"severity": "high", "source": map[string]any{"vehicle_id": "veh-1"}, "location": map[string]any{"latitude": 40.001, "longitude": -83.0}},
		map[string]any{"event_id": "kb-e2", "event_type": "idling", "category": "vehicle_events", "timestamp": stamp(-30 * time.Second),
			"severity": "low", "source": map[string]any{"vehicle_id": "veh-2"}, "location": map[string]any{"latitude": 40.2, "longitude": -83.2}},
	}
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 200 && r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "feed entries", `!!document.querySelector('#feed [data-event-id="kb-e1"]') && !!document.querySelector('#feed [data-event-id="kb-e2"]')`)

	// the category filter: a select changed with the arrow keys
	tabTo(t, ctx, "the category filter", `el.id === 'f-category'`)
	chrome(t, ctx, "choose safety_events", chromedp.KeyEvent(kb.ArrowDown))
	eventually(t, ctx, "category filter", `document.getElementById('f-category').value === 'safety_events' && !!document.querySelector('#feed [data-event-id="kb-e1"]') && !document.querySelector('#feed [data-event-id="kb-e2"]')`)
	chrome(t, ctx, "back to all", chromedp.KeyEvent(kb.ArrowUp))
	eventually(t, ctx, "category filter cleared", `document.getElementById('f-category').value === '' && !!document.querySelector('#feed [data-event-id="kb-e2"]')`)

	// the vehicle filter: typed into
	tabTo(t, ctx, "the vehicle filter", `el.id === 'f-vehicle'`)
	chrome(t, ctx, "type a vehicle", chromedp.KeyEvent("veh-2"))
	eventually(t, ctx, "vehicle filter", `!document.querySelector('#feed [data-event-id="kb-e1"]') && !!document.querySelector('#feed [data-event-id="kb-e2"]')`)

	// the entry: reached with Tab, activated with Enter
	tabTo(t, ctx, "the feed entry", `el.dataset.eventId === 'kb-e2'`)
	chrome(t, ctx, "activate the entry", chromedp.KeyEvent(kb.Enter))
	eventually(t, ctx, "the map focused on the event, the entry marked and still focused", `document.getElementById('selected').textContent.indexOf('idling of veh-2') === 0 && !!document.querySelector('path.focus-ring')
  && document.querySelector('#feed [data-event-id="kb-e2"]').getAttribute('aria-current') === 'true' && document.activeElement.dataset.eventId === 'kb-e2'`)

	// a live event redraws the feed: the focus stays on the entry
	if r := n.do("POST", "/v1/events", k, map[string]any{"events": []any{map[string]any{"event_id": "kb-e3", "event_type": "idling", "category": "vehicle_events",
		"timestamp": stamp(-time.Second), "severity": "low", "source": map[string]any{"vehicle_id": "veh-2"}}}}); r.Status != 200 && r.Status != 202 {
		t.Fatalf("events: %d %s", r.Status, r.Body)
	}
	eventually(t, ctx, "the focus kept across a redraw", `!!document.querySelector('#feed [data-event-id="kb-e3"]') && document.activeElement.dataset.eventId === 'kb-e2'
  && document.querySelector('#feed [data-event-id="kb-e2"]').getAttribute('aria-current') === 'true'`)

	// the map, reached with Tab, zooms with +
	tabTo(t, ctx, "the map", `el.id === 'map'`)
	zoom, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.leaflet-proxy') ? document.querySelector('.leaflet-proxy').style.transform : ''`))
	if err != nil {
		t.Fatal(err)
	}
	chrome(t, ctx, "zoom in", chromedp.KeyEvent("+"))
	eventually(t, ctx, "zoomed with +", `(document.querySelector('.leaflet-proxy') ? document.querySelector('.leaflet-proxy').style.transform : '') !== `+jsString(zoom))
}

// receiver is a webhook receiver answering with the status it is set to,
// recording the event ids of the requests it answered 2xx.
type receiver struct {
	*httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	got    map[string]int
}

func newReceiver(t *testing.T, status int) *receiver {
	rc := &receiver{got: map[string]int{}}
	rc.status.Store(int32(status))
	rc.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		st := int(rc.status.Load())
		if st/100 == 2 {
			var p struct {
				Message struct {
					EventID string `json:"event_id"`
				} `json:"message"`
			}
			_ = json.Unmarshal(b, &p)
			rc.mu.Lock()
			rc.got[p.Message.EventID]++
			rc.mu.Unlock()
		}
		w.WriteHeader(st)
	}))
	t.Cleanup(rc.Close)
	return rc
}

func (rc *receiver) received(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.got[id]
}

// streamRow is a JavaScript expression: the text of the row named name
// in the streams panel's entry of stream id (undefined when absent).
func streamRow(id, name string) string {
	return `(([...document.querySelectorAll('#streams [data-stream="` + id + `"] dt')].find(d => d.textContent === ` + jsString(name) + `) || {}).nextElementSibling || {}).textContent`
}

// TestConsoleWebhookStreams: the streams panel for webhook streams, on a
// node whose retry window is a millisecond: every failed attempt is the
// last, so dead letters come at once. A receiver that answers 500 opens
// its stream's circuit (5 consecutive failures) and the deliveries
// behind it wait; the panel shows the circuit, the pending and
// dead-lettered counts (a delivery sent beside the five that opened the
// circuit may be given back unattempted, so pending). A receiver that
// answers 422 to its two deliveries has them dead-lettered too (a first
// attempt within the millisecond of queueing is retried once, so at most
// four failures: its circuit stays closed); after it answers 200 again,
// "Replay dead letters" sends them and it gets them.
func TestConsoleWebhookStreams(t *testing.T) {
	ctx := browser(t)
	cfg := testConfig(t)
	cfg.AllowPrivateWebhooks = true
	cfg.WebhookRetryFor = time.Millisecond
	n := startNode(t, cfg)
	k := n.key("org-a", "test", []string{"all"}, 100000)
	failing := newReceiver(t, http.StatusInternalServerError)
	refusing := newReceiver(t, http.StatusUnprocessableEntity)
	start := func(category, url string) string {
		r := n.do("POST", "/api/v1/streaming/events/start", k, map[string]any{
			"event_filters": map[string]any{"categories": []string{category}},
			"stream_config": map[string]any{"delivery_method": "webhook"},
			"webhook_url":   url,
		})
		if r.Status != 201 {
			t.Fatalf("start: %d %s", r.Status, r.Body)
		}
		return r.json(t)["stream_id"].(string)
	}
	down := start("safety_events", failing.URL)
	dead := start("vehicle_events", refusing.URL)

	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/#key="+k))
	eventually(t, ctx, "connected", `document.getElementById('conn').textContent === 'live'`)

	post := func(category string, ids ...string) {
		t.Helper()
		var evs []any
		for _, id := range ids {
			evs = append(evs, map[string]any{"event_id": id, "event_type": "harsh_braking", "category": category, "timestamp": stamp(-time.Second),
				"severity": "high", "source": map[string]any{"vehicle_id": "veh-1"}})
		}
		if r := n.do("POST", "/v1/events", k, map[string]any{"events": evs}); r.Status != 202 {
			t.Fatalf("events: %d %s", r.Status, r.Body)
		}
	}
	post("safety_events", "d1", "d2", "d3", "d4", "d5", "d6")
	post("vehicle_events", "x1", "x2")

	// the panel refreshes every 3 s and shows what the node recorded by
	// then: up to two refreshes are allowed for
	const panel = 10 * time.Second
	eventuallyWithin(t, ctx, panel, "the circuit open, the deliveries dead-lettered", `(() => { const li = document.querySelector('#streams [data-stream="`+down+`"]');
  return !!li && li.textContent.indexOf('webhook') > 0 && !!li.querySelector('.badge.circuit-open') && `+streamRow(down, "circuit")+` === 'open'
    && +`+streamRow(down, "retrying")+` === 0 && +`+streamRow(down, "dead letters")+` >= 5 && +`+streamRow(down, "pending")+` + +`+streamRow(down, "dead letters")+` === 6
    && !!li.querySelector('[data-replay="`+down+`"]'); })()`)
	// more events while the circuit is open wait as pending
	post("safety_events", "d7", "d8")
	eventuallyWithin(t, ctx, panel, "pending behind the open circuit", `+`+streamRow(down, "pending")+` >= 2 && +`+streamRow(down, "retrying")+` === 0 && +`+streamRow(down, "pending")+` + +`+streamRow(down, "dead letters")+` === 8`)
	eventuallyWithin(t, ctx, panel, "dead letters with a replay button", `(() => { const li = document.querySelector('#streams [data-stream="`+dead+`"]');
  return !!li && !!li.querySelector('.badge.circuit-closed') && `+streamRow(dead, "dead letters")+` === '2' && `+streamRow(dead, "pending")+` === '0' && !!li.querySelector('[data-replay="`+dead+`"]'); })()`)
	chrome(t, ctx, "show the webhook streams", chromedp.Evaluate[chromedp.Void](`document.querySelector('#streams [data-stream="`+down+`"]').scrollIntoView()`))
	shoot(t, ctx, "console-webhooks.png")

	refusing.status.Store(http.StatusOK)
	chrome(t, ctx, "replay", chromedp.Click(chromedp.CSS(`#streams [data-replay="`+dead+`"]`)))
	eventually(t, ctx, "requeued", `document.getElementById('streams-error').textContent === `+jsString(dead+": 2 deliveries requeued"))
	waitFor(t, "the receiver gets the replayed deliveries", func() bool {
		return refusing.received("x1") == 1 && refusing.received("x2") == 1
	})
	eventuallyWithin(t, ctx, panel, "no dead letters left", `(() => { const li = document.querySelector('#streams [data-stream="`+dead+`"]');
  return `+streamRow(dead, "dead letters")+` === '0' && `+streamRow(dead, "delivered")+` !== undefined && !li.querySelector('[data-replay]'); })()`)
	if got := failing.received("d1"); got != 0 {
		t.Errorf("the failing receiver answered 2xx %d times", got)
	}
}

// TestConsoleStatesAndGrid: without --tiles the map is a plain grid with
// a metric scale bar that follows the zoom; a vehicle whose trip's points
// are old is idle and one whose trip is paused is paused, each in the
// colour of its legend entry.
func TestConsoleStatesAndGrid(t *testing.T) {
	ctx := browser(t)
	n := startNode(t, testConfig(t))
	k := n.key("org-a", "test", []string{"all"}, 100000)
	t0 := time.Now().Add(-3 * time.Minute).UTC()
	idle := n.startTrip(k, "veh-idle", t0)
	if r := n.batch(k, idle, track(t0, 40.0, -83.0, constant(30, 10))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	paused := n.startTrip(k, "veh-paused", t0)
	if r := n.batch(k, paused, track(t0, 40.01, -83.01, constant(30, 10))); r.Status != 200 {
		t.Fatalf("batch: %d %s", r.Status, r.Body)
	}
	if r := n.do("POST", "/v1/trips/"+paused+"/pause", k, map[string]any{"reason": "fuel"}); r.Status != 200 {
		t.Fatalf("pause: %d %s", r.Status, r.Body)
	}

	chrome(t, ctx, "open", chromedp.Navigate(n.url+"/console/#key="+k))
	eventually(t, ctx, "the plain grid with its scale bar", `document.querySelectorAll('.grid-tile').length > 0 && !document.querySelector('canvas.base-tile')
  && document.querySelector('.leaflet-control-attribution').textContent.indexOf('grid: no base map loaded') >= 0
  && /^[0-9]+ (m|km)$/.test(document.querySelector('.leaflet-control-scale-line').textContent)
  && getComputedStyle(document.querySelector('.grid-tile')).borderRightStyle === 'solid'`)
	// the marker's fill is the colour of its state's legend dot
	colour := func(state string) string {
		return `(() => { const m = document.querySelector('path.vehicle-` + state + `'); const d = document.querySelector('.legend .dot.s-` + state + `');
  if (!m || !d) return false;
  const probe = document.createElement('i'); probe.style.color = m.getAttribute('fill'); document.body.appendChild(probe);
  const fill = getComputedStyle(probe).color; probe.remove();
  return fill === getComputedStyle(d).backgroundColor; })()`
	}
	eventually(t, ctx, "idle", `(document.querySelector('#vehicles [data-vehicle="veh-idle"]')?.textContent || '').indexOf('idle') > 0 && `+colour("idle"))
	eventually(t, ctx, "paused", `(document.querySelector('#vehicles [data-vehicle="veh-paused"]')?.textContent || '').indexOf('paused') > 0 && `+colour("paused"))
	eventually(t, ctx, "four different colours", `new Set(['moving', 'idle', 'paused', 'alert'].map(s => getComputedStyle(document.querySelector('.legend .dot.s-' + s)).backgroundColor)).size === 4`)

	// the scale bar follows the zoom
	scale, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.leaflet-control-scale-line').textContent`))
	if err != nil {
		t.Fatal(err)
	}
	chrome(t, ctx, "zoom out", chromedp.Click(chromedp.CSS(`.leaflet-control-zoom-out`)), chromedp.Click(chromedp.CSS(`.leaflet-control-zoom-out`)))
	eventually(t, ctx, "a longer scale", `(s => /^[0-9]+ (m|km)$/.test(s) && s !== `+jsString(scale)+`)(document.querySelector('.leaflet-control-scale-line').textContent)`)
}
