package emergency_test

import (
	"io"
	"net/http"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

// redirectingGateway answers every POST with a redirect elsewhere, and
// that elsewhere 200 to any request, recording what reached it.
type redirectingGateway struct {
	code int
	mu   sync.Mutex
	got  []string // method and body of each request that reached /elsewhere
}

func (g *redirectingGateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/elsewhere" {
		http.Redirect(w, r, "/elsewhere", g.code)
		return
	}
	b, _ := io.ReadAll(r.Body)
	g.mu.Lock()
	g.got = append(g.got, r.Method+" "+string(b))
	g.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// TestGatewayRedirectIsNoDelivery: only a 2xx answer of the gateway
// itself counts as delivered. A redirect is not followed: a 302 or 303
// would be followed with a GET that carries no notification, and a 2xx
// to it would state delivered what the gateway never accepted; a 307
// would post the notification, signed, to an address nobody configured.
// The delivery is failed and nothing reaches the other address.
func TestGatewayRedirectIsNoDelivery(t *testing.T) {
	for _, code := range []int{http.StatusFound, http.StatusSeeOther, http.StatusTemporaryRedirect} {
		gw := &redirectingGateway{code: code}
		f := startWith(t, testdb.SQLite(t), gw, emergency.AlertsConfig{}, nil)
		disp := f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550002201"}})
		code201, al := f.do("POST", "/v1/emergency/alerts", alertBody([]string{"dispatchers"}, nil, "sms"))
		if code201 != 201 {
			t.Fatalf("%d: alert: %d %v", code, code201, al)
		}
		if d := smsDelivery(t, al, disp); d["status"] != "failed" {
			t.Errorf("gateway answering %d: sms delivery %v, want failed", code, d)
		}
		if ds := al["delivery_status"].(map[string]any); ds["successful_deliveries"] != 0.0 {
			t.Errorf("gateway answering %d: delivery_status %v, want nothing successful", code, ds)
		}
		gw.mu.Lock()
		if len(gw.got) != 0 {
			t.Errorf("gateway answering %d: the redirect was followed: %q", code, gw.got)
		}
		gw.mu.Unlock()
	}
}
