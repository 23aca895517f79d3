package emergency_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/fleethub/fleethub/fleet/emergency"
)

func TestHTTPNotifier(t *testing.T) {
	var got emergency.Notification
	status := http.StatusAccepted
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type %q", ct)
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		w.WriteHeader(status)
	}))
	defer gw.Close()
	n := &emergency.HTTPNotifier{URL: gw.URL, Client: gw.Client()}
	sent := emergency.Notification{AlertID: "alr_1", Channel: "sms", Recipient: "d1", Title: "t", Message: "m", Severity: "high"}
	if err := n.Notify(context.Background(), sent); err != nil {
		t.Fatal(err)
	}
	if got != sent {
		t.Errorf("gateway got %+v, want %+v", got, sent)
	}
	status = http.StatusBadGateway
	if err := n.Notify(context.Background(), sent); err == nil {
		t.Error("a 502 answer counts as delivered")
	}
}
