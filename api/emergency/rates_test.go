package emergency_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/store/testdb"
)

// TestNoRateOverNobody: an alert without recipients has no share of them
// reached or acknowledging: notification_reach_percentage,
// acknowledgment_rate and engagement_rate are null, at creation and
// when read, not 0 % of nobody; an alert with recipients states its
// shares, 0 before anyone acknowledged.
func TestNoRateOverNobody(t *testing.T) {
	f := start(t, testdb.SQLite)
	rates := func(al map[string]any) []any {
		m, _ := al["alert_metrics"].(map[string]any)
		a, _ := al["acknowledgment_status"].(map[string]any)
		return []any{m["notification_reach_percentage"], a["acknowledgment_rate"], m["engagement_rate"]}
	}
	b := alertBody([]string{"dispatchers"}, nil, "sms") // no dispatcher in the directory yet
	b["acknowledgment_required"] = true
	code, al := f.do("POST", "/v1/emergency/alerts", b)
	if code != 201 || al["delivery_status"].(map[string]any)["total_recipients"] != 0.0 {
		t.Fatalf("alert reaching nobody: %d %v", code, al)
	}
	_, read := f.do("GET", "/v1/emergency/alerts/"+al["alert_id"].(string), nil)
	for what, got := range map[string][]any{"created": rates(al), "read": rates(read)} {
		for i, v := range got {
			if v != nil {
				t.Errorf("an alert without recipients, %s: reach, acknowledgment and engagement rates %v; want null (%d)", what, got, i)
				break
			}
		}
	}
	// its recipients are a list with nobody in it, as every list the
	// service answers, not null
	_, listed := f.do("GET", "/v1/emergency/alerts", nil)
	for what, a := range map[string]map[string]any{"created": al, "read": read, "listed": listed["alerts"].([]any)[0].(map[string]any)} {
		if r, ok := a["recipients"].([]any); !ok || len(r) != 0 {
			t.Errorf("an alert without recipients, %s: recipients %#v, want []", what, a["recipients"])
		}
	}
	f.contact(map[string]any{"name": "Dee", "roles": []string{"dispatcher"}, "channels": map[string]any{"sms": "+15550007101"}})
	code, al = f.do("POST", "/v1/emergency/alerts", b)
	if got := rates(al); code != 201 || got[0] != 100.0 || got[1] != 0.0 || got[2] != 0.0 {
		t.Errorf("an alert reaching its one dispatcher: %d, rates %v; want 100, 0, 0", code, got)
	}
}
