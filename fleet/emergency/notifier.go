package emergency

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Notification is what the gateway receives per recipient and channel.
type Notification struct {
	// ID is stable across retries of one notification (webhook-id).
	ID      string `json:"notification_id,omitempty"`
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
	// address, a push token) of the recipient's directory entry; nothing
	// is sent to a recipient without one.
	To            string `json:"to,omitempty"`
	RecipientType string `json:"recipient_type,omitempty"`
	ContactID     string `json:"contact_id,omitempty"`
	Language      string `json:"language,omitempty"`
	// Level is the escalation level that sent it; 0 for the alert itself.
	Level int `json:"escalation_level,omitempty"`
	// Repeat is the repeat of the alert's channel it is (1 for the
	// first); 0 for the channel's first delivery.
	Repeat int `json:"repeat,omitempty"`
	// Org and Env are the scope the notification belongs to.
	Org string `json:"-"`
	Env string `json:"-"`
}

// Notifier sends notifications through an external gateway (SMS, e-mail,
// push, voice).
type Notifier interface {
	Notify(ctx context.Context, n Notification) error
}

// Secrets keeps the gateway's signing key, shared by every node
// (store.Secrets).
type Secrets interface {
	Secret(ctx context.Context, name string, gen func() ([]byte, error)) ([]byte, error)
}

// SigningSecretName names the gateway's signing key in Secrets.
const SigningSecretName = "notify_gateway_signing_key"

// SigningSecret answers the gateway's signing secret as Standard Webhooks
// write it ("whsec_" + base64 of the key), making the key on first use.
func SigningSecret(ctx context.Context, s Secrets) (string, error) {
	k, err := signingKey(ctx, s)
	if err != nil {
		return "", err
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(k), nil
}

func signingKey(ctx context.Context, s Secrets) ([]byte, error) {
	return s.Secret(ctx, SigningSecretName, func() ([]byte, error) {
		k := make([]byte, 32)
		_, err := rand.Read(k)
		return k, err
	})
}

var _ Notifier = (*HTTPNotifier)(nil)

// HTTPNotifier posts each notification as JSON to a gateway URL; a 2xx
// answer means delivered, and a redirect is not followed (a failed
// attempt). With Secrets set, every request is signed as
// Standard Webhooks sign theirs: webhook-id (the notification's id),
// webhook-timestamp (Unix seconds) and webhook-signature ("v1," + base64
// HMAC-SHA256 of "id.timestamp.body" under the signing key).
type HTTPNotifier struct {
	URL     string
	Client  *http.Client
	Secrets Secrets

	mu  sync.Mutex // guards key
	key []byte
}

// Notify implements Notifier.
func (h *HTTPNotifier) Notify(ctx context.Context, n Notification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return fmt.Errorf("emergency: notification: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, "POST", h.URL, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if h.Secrets != nil {
		key, err := h.signingKey(ctx)
		if err != nil {
			return err
		}
		id := n.ID
		if id == "" {
			var r [10]byte
			if _, err := rand.Read(r[:]); err != nil {
				return fmt.Errorf("emergency: notification id: %w", err)
			}
			id = "ntf_" + hex.EncodeToString(r[:])
		}
		ts := time.Now().Unix()
		req.Header.Set("webhook-id", id)
		req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
		req.Header.Set("webhook-signature", Sign(key, id, ts, b))
	}
	res, err := noRedirects(h.Client).Do(req)
	if err != nil {
		return err
	}
	res.Body.Close()
	if res.StatusCode/100 != 2 {
		return fmt.Errorf("emergency: gateway answered %d", res.StatusCode)
	}
	return nil
}

// noRedirects is c (the default client when nil) that does not follow
// redirects: only a 2xx answer of the gateway itself is a delivery. A
// followed 302 or 303 turns the POST into a GET without the notification,
// whose 2xx would state delivered what nobody accepted, and a followed 307
// posts the signed notification to an address nobody configured; a 3xx
// answer is a failed attempt instead.
func noRedirects(c *http.Client) *http.Client {
	var nc http.Client
	if c != nil {
		nc = *c
	}
	nc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &nc
}

func (h *HTTPNotifier) signingKey(ctx context.Context) ([]byte, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.key == nil {
		k, err := signingKey(ctx, h.Secrets)
		if err != nil {
			return nil, err
		}
		h.key = k
	}
	return h.key, nil
}

// Sign is the webhook-signature of a body: "v1," + base64 of
// HMAC-SHA256(key, id + "." + ts + "." + body).
func Sign(key []byte, id string, ts int64, body []byte) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(id + "." + strconv.FormatInt(ts, 10) + "."))
	m.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}
