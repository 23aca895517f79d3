// The node's identity and the secrets every node of a deployment shares.

package main

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"

	"github.com/fleethub/fleethub/fleet/emergency"
	"github.com/fleethub/fleethub/internal/apikey"
	"github.com/fleethub/fleethub/internal/store"
)

func keyHasher(ctx context.Context, c *config, st store.Secrets) (*apikey.Hasher, error) {
	secret := []byte(c.KeySecret)
	if len(secret) == 0 {
		var err error
		secret, err = st.Secret(ctx, "api_key_hmac", func() ([]byte, error) {
			b := make([]byte, 32)
			_, err := rand.Read(b)
			return b, err
		})
		if err != nil {
			return nil, fmt.Errorf("key secret: %w", err)
		}
	}
	return apikey.NewHasher(secret)
}

// shareLinks signs incidents' share links under a secret generated once
// and kept in the store, so every node on one PostgreSQL shares it.
func shareLinks(ctx context.Context, st store.Secrets) (*emergency.Links, error) {
	secret, err := st.Secret(ctx, "incident_share_hmac", func() ([]byte, error) {
		b := make([]byte, 32)
		_, err := rand.Read(b)
		return b, err
	})
	if err != nil {
		return nil, fmt.Errorf("share link secret: %w", err)
	}
	return emergency.NewLinks(secret, 0)
}

// nodeID names this process among the nodes of a deployment.
func nodeID() string {
	h, err := os.Hostname()
	if err != nil {
		h = "node" // the pid and the random part still tell nodes apart
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("%s-%d-%x", h, os.Getpid(), b)
}
