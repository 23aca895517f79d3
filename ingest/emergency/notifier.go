package emergency

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// Notification is what the gateway receives per recipient and channel.
type Notification struct {
	AlertID string `json:"alert_id,omitempty"`
	// IncidentID is set instead of AlertID for an incident's notification.
	IncidentID string `json:"incident_id,omitempty"`
	Channel    string `json:"channel"`
	Recipient  string `json:"recipient"`
	Title      string `json:"title"`
	Message    string `json:"message"`
	Severity   string `json:"severity"`
	Priority   string `json:"priority,omitempty"`
	// To is the address for the channel (an E.164 number, an e-mail
	// address, a push token) when the recipient is in the directory.
	To            string `json:"to,omitempty"`
	RecipientType string `json:"recipient_type,omitempty"`
	ContactID     string `json:"contact_id,omitempty"`
	Language      string `json:"language,omitempty"`
	// Level is the escalation level that sent it; 0 for the alert itself.
	Level int `json:"escalation_level,omitempty"`
}

// Notifier sends notifications through an external gateway (SMS, e-mail,
// push, voice).
type Notifier interface {
	Notify(ctx context.Context, n Notification) error
}

var _ Notifier = (*HTTPNotifier)(nil)

// HTTPNotifier posts each notification as JSON to a gateway URL; a 2xx
// answer means delivered.
type HTTPNotifier struct {
	URL    string
	Client *http.Client
}

// Notify implements Notifier.
func (h *HTTPNotifier) Notify(ctx context.Context, n Notification) error {
	b, _ := json.Marshal(n)
	req, err := http.NewRequestWithContext(ctx, "POST", h.URL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.Client.Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("emergency: gateway answered %d", res.StatusCode)
	}
	return nil
}
