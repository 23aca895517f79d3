package api_test

import (
	"context"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
)

// serve starts srv on its configured address, shuts it down when the test
// ends, and returns the address it listens on.
func serve(t *testing.T, srv *api.Server) string {
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
