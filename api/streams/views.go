package streams

import (
	"encoding/json"
	"fmt"
	"net/url"
	"time"

	"github.com/fleethub/fleethub/api"
	apiwebhooks "github.com/fleethub/fleethub/api/webhooks"
	domain "github.com/fleethub/fleethub/hub/streams"
)

// StreamView is a stream as the API shows it.
type StreamView struct {
	StreamID       string     `json:"stream_id"`
	StreamType     string     `json:"stream_type" enum:"telemetry,events"`
	Status         string     `json:"status" enum:"active,paused,stopped"`
	CreatedAt      time.Time  `json:"created_at"`
	UpdatedAt      time.Time  `json:"updated_at"`
	StoppedAt      *time.Time `json:"stopped_at"`
	StopReason     string     `json:"stop_reason,omitempty" enum:"idle" doc:"why the hub stopped the stream itself: idle, an ephemeral stream with no client connected for its idle_timeout_seconds; absent when stopped by a client"`
	DeliveryMethod string     `json:"delivery_method" enum:"websocket,webhook"`
	WebsocketURL   string     `json:"websocket_url,omitempty"`
	WebhookURL     string     `json:"webhook_url,omitempty"`
	// WebhookSecret is shown once: at start and when rotated.
	WebhookSecret string `json:"webhook_secret,omitempty"`
	// Encryption is an encrypted stream's algorithm and key id; the key
	// is shown once, at start.
	Encryption    *EncryptionView `json:"encryption,omitempty" doc:"streams started with stream_config.encryption true: each delivered message is {\"encrypted\": {key_id, nonce, ciphertext}} (docs/streaming.md#encryption); the key only in the start answer"`
	Configuration any             `json:"configuration" doc:"the stream's settings and filters, normalized"`
}

// EncryptionView is an encrypted stream's key: its id always, the key
// itself in the start answer only.
type EncryptionView struct {
	Algorithm string `json:"algorithm" enum:"XChaCha20-Poly1305"`
	KeyID     string `json:"key_id" doc:"ek_ and 16 hex digits; every encrypted message names it"`
	Key       string `json:"key,omitempty" doc:"the 32-byte key, base64 (standard); shown once, in the start answer, and never again"`
}

// Lag describes how far behind a stream is.
type Lag struct {
	LastOffset    int64      `json:"last_offset" source:"measured"`
	LastMessageAt *time.Time `json:"last_message_at" doc:"when the answering node last matched a message for the stream; null when it has matched none since it started" source:"measured"`
	PipelineLagMS *int64     `json:"pipeline_lag_ms" doc:"ingest to match time of the last message the answering node matched; null, like last_message_at, when it has matched none" source:"measured"`
}

// StreamAnswer is the start answer: the stream in the envelope.
type StreamAnswer struct {
	Success bool `json:"success"`
	StreamView
}

// StatusView is a stream with its counters and lag, as the status
// answer and each item of the listing show it.
type StatusView struct {
	StreamView
	ConnectedClients int64            `json:"connected_clients" source:"measured"`
	Counters         map[string]int64 `json:"counters" doc:"what happened since the stream started: matched, delivered, duplicates_suppressed, throttled; webhook streams also failed_attempts (delivery attempts that did not succeed, one per message a failed request carried) and dead_lettered (deliveries moved to the dead-letter list). How many deliveries wait or are dead-lettered now is webhook.counts. No message a stream matched is dropped, so there is no dropped count" source:"measured"`
	Lag              Lag              `json:"lag"`
	// Webhook is the endpoint state of a webhook stream: circuit,
	// disabled (410), and deliveries per status now, across nodes.
	Webhook *apiwebhooks.EndpointStatus `json:"webhook,omitempty"`
}

// StatusAnswer is the status, stop and configure answer: the status
// view in the envelope.
type StatusAnswer struct {
	Success bool `json:"success"`
	StatusView
}

func wsURL(c *api.Ctx, id string) string {
	scheme := "ws"
	if c.Secure() {
		scheme = "wss"
	}
	return scheme + "://" + string(c.Host()) + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(id)
}

func (h *Handlers) view(c *api.Ctx, e *domain.Entry) (StreamView, error) {
	v := StreamView{StreamID: e.Rec.ID, StreamType: e.Rec.Kind, Status: e.Rec.State, CreatedAt: e.Rec.CreatedAt, UpdatedAt: e.Rec.UpdatedAt,
		DeliveryMethod: e.Info.Delivery}
	if !e.Rec.StoppedAt.IsZero() {
		t := e.Rec.StoppedAt
		v.StoppedAt = &t
		v.StopReason = e.Cfg.StopReason
	}
	var cfg any
	if e.Cfg.Telemetry != nil {
		cfg = e.Cfg.Telemetry
		v.WebhookURL = e.Cfg.Telemetry.WebhookURL
	} else if e.Cfg.Events != nil {
		cfg = e.Cfg.Events
		v.WebhookURL = e.Cfg.Events.WebhookURL
	}
	b, err := json.Marshal(cfg)
	if err != nil {
		return StreamView{}, api.Internal(fmt.Errorf("stream %s: configuration: %w", e.Rec.ID, err))
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return StreamView{}, api.Internal(fmt.Errorf("stream %s: configuration: %w", e.Rec.ID, err))
	}
	if m == nil {
		m = map[string]any{}
	}
	v.Configuration = m
	if e.Info.Delivery == "websocket" {
		v.WebsocketURL = wsURL(c, e.Rec.ID)
	}
	if e.Sealer != nil {
		v.Encryption = &EncryptionView{Algorithm: domain.EncryptionAlgorithm, KeyID: e.Sealer.KeyID()}
	}
	return v, nil
}

func (h *Handlers) statusView(c *api.Ctx, st domain.Status) (StatusView, error) {
	sv, err := h.view(c, st.Entry)
	if err != nil {
		return StatusView{}, err
	}
	v := StatusView{StreamView: sv, ConnectedClients: st.Connected, Counters: st.Counters,
		Lag: Lag{LastOffset: st.LastOffset}}
	if !st.LastMatchAt.IsZero() {
		t, ms := st.LastMatchAt, st.PipelineLagMS
		v.Lag.LastMessageAt, v.Lag.PipelineLagMS = &t, &ms
	}
	if h.hooks != nil && st.Entry.Info.Delivery == "webhook" {
		if ws, err := h.hooks.Status(c.Context(), st.Entry.Rec.Org, st.Entry.Rec.Env, st.Entry.Rec.ID); err == nil {
			v.Webhook = &ws
		}
	}
	return v, nil
}

// CorrelatedMessage is one message of a correlation.
type CorrelatedMessage struct {
	Offset  int64           `json:"offset"`
	Message json.RawMessage `json:"message"`
}

// CorrelationView is the correlation answer.
type CorrelationView struct {
	Success       bool                `json:"success"`
	StreamID      string              `json:"stream_id"`
	CorrelationID string              `json:"correlation_id"`
	Count         int                 `json:"count"`
	Messages      []CorrelatedMessage `json:"messages"`
}

// ListView is a page of the stream listing.
type ListView struct {
	Success    bool         `json:"success"`
	Streams    []StatusView `json:"streams" doc:"each as the status endpoint answers it"`
	Pagination Pagination   `json:"pagination"`
}

// Pagination continues a listing.
type Pagination struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more"`
	NextCursor *string `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
}
