// Package apitest serves API routes over HTTP in tests: a server on a
// free port shut down when the test ends, and an authenticator of one
// key.
package apitest

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/apikey"
)

// Serve starts srv on its configured address, shuts it down when the
// test ends, and returns the address it listens on (host:port).
func Serve(t testing.TB, srv *api.Server) string {
	t.Helper()
	a, err := srv.Listen()
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve() }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
		<-done
	})
	return a.String()
}

// Key authenticates one key, a test key of its own, as Principal.
type Key struct {
	Key       string
	Principal api.Principal
}

// NewKey is a Key for a new test key of organization org-a in the test
// environment holding permissions, with a rate no test reaches.
func NewKey(permissions ...string) Key {
	k, err := apikey.Generate("test")
	if err != nil {
		panic(err)
	}
	return Key{Key: k, Principal: api.Principal{Org: "org-a", Env: "test", KeyID: "k", Permissions: permissions, Rate: 1e6, Burst: 1e6}}
}

// Authenticate answers the key's principal, api_key_not_found for any
// other key.
func (k Key) Authenticate(_ context.Context, key string) (*api.Principal, error) {
	if key != k.Key {
		return nil, api.Errf("api_key_not_found", "unknown key")
	}
	p := k.Principal
	return &p, nil
}
