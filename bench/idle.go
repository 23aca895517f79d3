package bench

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"time"

	"github.com/gorilla/websocket"
)

// IdleResult is what holding many idle websocket connections cost.
type IdleResult struct {
	Connected      int
	Failed         int
	FirstError     string
	RSSBefore      float64
	RSSAfter       float64
	ConnectElapsed time.Duration
}

// Print writes a summary.
func (r *IdleResult) Print(w io.Writer) {
	fmt.Fprintf(w, "idle: %d connections held (%d failed%s) in %s; server RSS %.1f MiB before, %.1f MiB holding them (%.1f KiB per connection)\n",
		r.Connected, r.Failed, firstErr(r.FirstError), r.ConnectElapsed.Round(time.Millisecond), r.RSSBefore/(1<<20), r.RSSAfter/(1<<20),
		(r.RSSAfter-r.RSSBefore)/1024/float64(max(1, r.Connected)))
}

func firstErr(s string) string {
	if s == "" {
		return ""
	}
	return ", first: " + s
}

// Idle opens n websocket connections following one stream, holds them
// for hold, and reads the server's resident memory from /metrics.
func Idle(ctx context.Context, base, key string, n int, hold time.Duration) (*IdleResult, error) {
	var st struct {
		StreamID string `json:"stream_id"`
	}
	if err := apiCall(ctx, "POST", base+"/api/v1/streaming/events/start", key, map[string]any{
		"event_filters": map[string]any{"vehicle_ids": []string{"idle-bench"}}}, &st); err != nil {
		return nil, fmt.Errorf("bench: start stream: %w", err)
	}
	defer apiCall(context.Background(), "POST", base+"/api/v1/streaming/events/stop", key, map[string]any{"stream_id": st.StreamID}, nil)
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("bench: %w", err)
	}
	wsURL := "ws://" + u.Host + "/api/v1/streaming/ws?stream_id=" + url.QueryEscape(st.StreamID) + "&api_key=" + url.QueryEscape(key)
	res := &IdleResult{}
	_, res.RSSBefore = serverProcess(ctx, base)
	dialer := websocket.Dialer{HandshakeTimeout: 30 * time.Second, ReadBufferSize: 512, WriteBufferSize: 512}
	conns := make([]*websocket.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		c, _, err := dialer.DialContext(ctx, wsURL, nil)
		if err != nil {
			res.Failed++
			if res.FirstError == "" {
				res.FirstError = err.Error()
			}
			continue
		}
		conns = append(conns, c)
		go func() { // answer pings, discard frames
			for {
				if _, _, err := c.NextReader(); err != nil {
					return
				}
			}
		}()
	}
	res.ConnectElapsed = time.Since(start)
	res.Connected = len(conns)
	select {
	case <-ctx.Done():
	case <-time.After(hold):
	}
	_, res.RSSAfter = serverProcess(ctx, base)
	return res, nil
}
