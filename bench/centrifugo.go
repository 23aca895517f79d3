package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// A Centrifugo server as the other side of `fleethub-bench fanout`
// (--centrifugo-key): the same subscribers, senders, events and figures,
// so that the server's CPU per delivery and per publish compare on one
// machine with one client. Each stream is a channel; a subscriber
// connects to /connection/websocket and subscribes with Centrifugo's
// JSON protocol (the server must allow clients to subscribe without a
// token: client.insecure, or channel.without_namespace with
// allow_subscribe_for_client and a connection token it does not need
// here); the senders publish through its HTTP API, /api/publish for one
// event a request and /api/batch for more.

// streamNames names a run's streams by their first vehicle: the
// channels of a Centrifugo run.
func streamNames(vehicles [][]string) []string {
	chs := make([]string, len(vehicles))
	for j, vs := range vehicles {
		chs[j] = vs[0]
	}
	return chs
}

// centrifugoWS is the websocket address of a Centrifugo server at base.
func centrifugoWS(base string) (string, error) {
	origin, err := wsOrigin(base)
	if err != nil {
		return "", err
	}
	return origin + "/connection/websocket", nil
}

// centrifugoSubscribe connects c and subscribes it to channel, returning
// once the server confirmed the subscription (so that no publish of the
// run can come before it).
func centrifugoSubscribe(c *websocket.Conn, channel string) error {
	cmds := fmt.Sprintf("{\"id\":1,\"connect\":{}}\n{\"id\":2,\"subscribe\":{\"channel\":%q}}", channel)
	if err := c.WriteMessage(websocket.TextMessage, []byte(cmds)); err != nil {
		return fmt.Errorf("bench: centrifugo connect: %w", err)
	}
	if err := c.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return err
	}
	defer c.SetReadDeadline(time.Time{})
	for {
		_, m, err := c.ReadMessage()
		if err != nil {
			return fmt.Errorf("bench: centrifugo subscribe to %s: %w", channel, err)
		}
		for _, line := range bytes.Split(m, []byte("\n")) {
			var reply struct {
				ID    int             `json:"id"`
				Error json.RawMessage `json:"error"`
			}
			if len(line) == 0 || json.Unmarshal(line, &reply) != nil {
				continue
			}
			if len(reply.Error) > 0 {
				return fmt.Errorf("bench: centrifugo command %d on %s: %s", reply.ID, channel, reply.Error)
			}
			if reply.ID == 2 {
				return nil
			}
		}
	}
}

// centrifugoPong answers a Centrifugo ping (an empty command) so that the
// server keeps a connection held longer than its ping interval; the
// error of a pong that could not be sent (the connection is gone).
func centrifugoPong(c *websocket.Conn, frame []byte) error {
	if len(frame) == 2 && frame[0] == '{' && frame[1] == '}' {
		if err := c.WriteMessage(websocket.TextMessage, frame); err != nil {
			return fmt.Errorf("bench: centrifugo pong: %w", err)
		}
	}
	return nil
}

// centrifugoPublish publishes evs, each to its channel, through the HTTP
// API: one publish, or a batch of them. A command's failure is an error
// object in a 200 answer.
func centrifugoPublish(ctx context.Context, client *http.Client, base, key string, channels []string, evs []map[string]any) error {
	var body any
	path := "/api/publish"
	if len(evs) == 1 {
		body = map[string]any{"channel": channels[0], "data": evs[0]}
	} else {
		cmds := make([]map[string]any, len(evs))
		for i, ev := range evs {
			cmds[i] = map[string]any{"publish": map[string]any{"channel": channels[i], "data": ev}}
		}
		body, path = map[string]any{"commands": cmds}, "/api/batch"
	}
	var ans struct {
		Error   json.RawMessage `json:"error"`
		Replies []struct {
			Error json.RawMessage `json:"error"`
		} `json:"replies"`
	}
	if err := apiCallWith(ctx, client, "POST", base+path, key, body, &ans); err != nil {
		return err
	}
	if len(ans.Error) > 0 {
		return fmt.Errorf("POST %s: %s", path, ans.Error)
	}
	for _, r := range ans.Replies {
		if len(r.Error) > 0 {
			return fmt.Errorf("POST %s: a publish of the batch: %s", path, r.Error)
		}
	}
	return nil
}
