package bench

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// soakGot is what a sink received of one generated message: how often, and
// when first (milliseconds since the soak began).
type soakGot struct {
	n     int32
	first int32
}

// soakReceipts counts the generated messages a sink received, by sequence.
type soakReceipts struct {
	name  string
	began time.Time
	mu    sync.Mutex
	got   map[int64]soakGot
}

func newReceipts(name string, began time.Time) *soakReceipts {
	return &soakReceipts{name: name, began: began, got: map[int64]soakGot{}}
}

func (r *soakReceipts) add(seqs []int64) {
	if len(seqs) == 0 {
		return
	}
	now := int32(time.Since(r.began).Milliseconds())
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range seqs {
		g := r.got[s]
		if g.n == 0 {
			g.first = now
		}
		g.n++
		r.got[s] = g
	}
}

// soakFrame is one stream message as both sinks carry it: an event with
// the generator's sequence in event_data, or a telemetry message with it
// in sequence.
type soakFrame struct {
	Offset  int64 `json:"offset"`
	Message struct {
		Sequence  int64 `json:"sequence"`
		EventData struct {
			Seq int64 `json:"soak_seq"`
		} `json:"event_data"`
	} `json:"message"`
}

// soakSeqs reads the generator's sequences out of a frame (a message or
// an array of them) and the highest offset in it; control frames give none.
func soakSeqs(data []byte, telemetry bool) (seqs []int64, last int64) {
	var frames []soakFrame
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		if err := json.Unmarshal(data, &frames); err != nil {
			frames = nil // a frame that does not decode holds no sequence, as below
		}
	} else {
		var f soakFrame
		if json.Unmarshal(data, &f) == nil {
			frames = append(frames, f)
		}
	}
	for _, f := range frames {
		seq := f.Message.EventData.Seq
		if telemetry {
			seq = f.Message.Sequence
		}
		if seq == 0 {
			continue
		}
		seqs = append(seqs, seq)
		last = max(last, f.Offset)
	}
	return seqs, last
}

// soakSink is one websocket subscriber that reconnects and resumes after
// the last offset it received.
type soakSink struct {
	*soakReceipts
	base, key, stream string
	telemetry         bool
	last              int64 // highest offset received; only run touches it
}

func (s *soakSink) run(ctx context.Context) {
	host := strings.TrimPrefix(s.base, "http://") // the soak's bases are http://127.0.0.1:port
	for ctx.Err() == nil {
		q := "stream_id=" + url.QueryEscape(s.stream) + "&api_key=" + url.QueryEscape(s.key)
		if s.last > 0 {
			q += "&last_offset=" + strconv.FormatInt(s.last, 10)
		}
		c, _, err := websocket.DefaultDialer.DialContext(ctx, "ws://"+host+"/api/v1/streaming/ws?"+q, nil)
		if err != nil {
			select {
			case <-ctx.Done():
				return
			case <-time.After(500 * time.Millisecond):
			}
			continue
		}
		stop := context.AfterFunc(ctx, func() { c.Close() })
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				break
			}
			seqs, last := soakSeqs(data, s.telemetry)
			s.add(seqs)
			s.last = max(s.last, last)
		}
		stop()
		c.Close()
	}
}

// soakReceiver is a webhook receiver: it answers 200 to every delivery
// and counts the events in it. While down, its port refuses connections.
type soakReceiver struct {
	*soakReceipts
	addr string
	mu   sync.Mutex
	srv  *http.Server
	// served is the first failure of a server other than its close,
	// reported by close
	served error
}

func newSoakReceiver(began time.Time) (*soakReceiver, error) {
	r := &soakReceiver{soakReceipts: newReceipts("webhook", began)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	r.addr = ln.Addr().String()
	r.serve(ln)
	return r, nil
}

func (r *soakReceiver) serve(ln net.Listener) {
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		seqs, _ := soakSeqs(body, false)
		r.add(seqs)
		w.WriteHeader(http.StatusOK)
	})}
	r.mu.Lock()
	r.srv = srv
	r.mu.Unlock()
	go func() {
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			r.mu.Lock()
			r.served = cmp.Or(r.served, err)
			r.mu.Unlock()
		}
	}()
}

// setDown takes the receiver down (its listener closed, connections
// dropped) or brings it back on the same port.
func (r *soakReceiver) setDown(down bool) error {
	if down {
		r.mu.Lock()
		srv := r.srv
		r.srv = nil
		r.mu.Unlock()
		if srv != nil {
			return srv.Close()
		}
		return nil
	}
	var ln net.Listener
	var err error
	for range 50 { // the port may linger a moment after the close
		if ln, err = net.Listen("tcp", r.addr); err == nil {
			r.serve(ln)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return err
}

func (r *soakReceiver) close() error {
	err := r.setDown(true)
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(err, r.served)
}

var errSoakNoKey = errors.New("bench: soak: keys create printed no key")
