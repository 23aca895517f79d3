package emergency

import (
	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/emergency"
)

// GatewayView tells a notification gateway how to verify what it
// receives.
type GatewayView struct {
	URL           string   `json:"url" doc:"the --notify-url notifications are POSTed to; empty when none is configured"`
	SigningSecret string   `json:"signing_secret" doc:"Standard Webhooks secret (whsec_…) the webhook-signature header is made with"`
	Headers       []string `json:"headers"`
}

// Gateway serves the notification gateway's settings.
type Gateway struct {
	secrets domain.Secrets
	url     string
}

// NewGateway makes the handler; url is the configured gateway.
func NewGateway(secrets domain.Secrets, url string) *Gateway {
	return &Gateway{secrets: secrets, url: url}
}

// Routes returns the gateway route.
func (g *Gateway) Routes() []*api.Route {
	return []*api.Route{
		{Method: "GET", Path: "/v1/emergency/gateway", Tag: "emergency", Summary: "The notification gateway's URL and signing secret", Permission: "keys:manage",
			Response: GatewayView{}, Handler: g.get},
	}
}

func (g *Gateway) get(c *api.Ctx) error {
	s, err := domain.SigningSecret(c.Context(), g.secrets)
	if err != nil {
		return err
	}
	return c.JSON(200, GatewayView{URL: g.url, SigningSecret: s, Headers: []string{"webhook-id", "webhook-timestamp", "webhook-signature"}})
}
