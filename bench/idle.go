package bench

import (
	"context"
	"fmt"
	"io"
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

// Report is the result's figures.
func (r *IdleResult) Report() *Report {
	rep := &Report{Mode: "idle"}
	rep.Add("connected", "connections held", r.Connected, "")
	rep.Add("failed", "failed", r.Failed, "")
	if r.FirstError != "" {
		rep.Add("first_error", "first error", r.FirstError, "")
	}
	rep.Add("connect_s", "connecting took", r.ConnectElapsed.Seconds(), "s")
	if r.RSSAfter > 0 {
		rep.Add("server_rss_before_mib", "server RSS before", r.RSSBefore/(1<<20), "MiB")
		rep.Add("server_rss_held_mib", "server RSS holding them", r.RSSAfter/(1<<20), "MiB")
		rep.Add("server_rss_kib_per_connection", "server RSS per connection", (r.RSSAfter-r.RSSBefore)/1024/float64(max(1, r.Connected)), "KiB")
	}
	return rep
}

// Print writes the report as a table.
func (r *IdleResult) Print(w io.Writer) { r.Report().WriteTable(w) }

func firstErr(s string) string {
	if s == "" {
		return ""
	}
	return ", first: " + s
}

// Idle opens n websocket connections following one stream, holds them
// for hold, and reads the server's resident memory (from /proc with
// srv.PID, else from /metrics).
func Idle(ctx context.Context, base, key string, n int, hold time.Duration, srv ServerConfig) (*IdleResult, error) {
	var st struct {
		StreamID string `json:"stream_id"`
	}
	client := srv.client()
	if err := apiCallWith(ctx, client, "POST", base+"/api/v1/streaming/events/start", key, map[string]any{
		"event_filters": map[string]any{"vehicle_ids": []string{"idle-bench"}}}, &st); err != nil {
		return nil, fmt.Errorf("bench: start stream: %w", err)
	}
	defer apiCallWith(context.Background(), client, "POST", base+"/api/v1/streaming/events/stop", key, map[string]any{"stream_id": st.StreamID}, nil)
	addr, err := wsURL(base, st.StreamID, key)
	if err != nil {
		return nil, err
	}
	res := &IdleResult{}
	_, res.RSSBefore, _ = srv.usage(ctx, base)
	dialer := srv.dialer(512, 512)
	conns := make([]*websocket.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	start := time.Now()
	for i := 0; i < n && ctx.Err() == nil; i++ {
		c, resp, err := dialer.DialContext(ctx, addr, nil)
		if err != nil {
			err = handshakeErr(resp, err)
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
	_, res.RSSAfter, _ = srv.usage(ctx, base)
	return res, nil
}
