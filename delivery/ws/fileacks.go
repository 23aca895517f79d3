package ws

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"
)

// FileAcks is the Acks of a single node that survives restarts: the
// positions live in memory and are written to a file (atomically, by
// rename) at most every FlushEvery after they change, and at Close. A
// crash forgets at most the acks of that interval: the client is then
// sent those messages again (at-least-once), never fewer.
type FileAcks struct {
	*MemoryAcks
	path  string
	every time.Duration
	log   *slog.Logger // the periodic writes' failures

	mu    sync.Mutex // guards dirty
	dirty bool
	done  chan struct{}
	wg    sync.WaitGroup
}

// fileAck is one stored position.
type fileAck struct {
	Key    string `json:"key"`
	Stream string `json:"stream"`
	Offset int64  `json:"offset"`
	Epoch  string `json:"epoch"`
}

// OpenFileAcks loads the acks kept in path (none when it does not exist)
// and writes them back every flushEvery (default 200 ms) while they
// change; a write that fails is logged to log (nil: discarded) and tried
// again.
func OpenFileAcks(path string, flushEvery time.Duration, log *slog.Logger) (*FileAcks, error) {
	if flushEvery <= 0 {
		flushEvery = 200 * time.Millisecond
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &FileAcks{MemoryAcks: NewMemoryAcks(), path: path, every: flushEvery, log: log, done: make(chan struct{})}
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("ws acks: %w", err)
	default:
		var list []fileAck
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("ws acks: %s: %w", path, err)
		}
		for _, x := range list {
			a.m[ackKey{x.Key, x.Stream}] = Position{Offset: x.Offset, Epoch: x.Epoch}
		}
	}
	a.wg.Add(1)
	go a.flushLoop()
	return a, nil
}

// Ack records a position; it reaches the file within the flush interval.
func (a *FileAcks) Ack(ctx context.Context, keyID, streamID string, p Position) error {
	if err := a.MemoryAcks.Ack(ctx, keyID, streamID, p); err != nil {
		return err
	}
	a.mu.Lock()
	a.dirty = true
	a.mu.Unlock()
	return nil
}

func (a *FileAcks) flushLoop() {
	defer a.wg.Done()
	t := time.NewTicker(a.every)
	defer t.Stop()
	for {
		select {
		case <-a.done:
			return
		case <-t.C:
			// a failure leaves the positions dirty: the next tick writes
			// them again, and Close reports one that lasts
			if err := a.flush(); err != nil {
				a.log.Warn("writing websocket acks failed; retrying", "path", a.path, "error", err)
			}
		}
	}
}

// flush writes the positions when they changed.
func (a *FileAcks) flush() error {
	a.mu.Lock()
	if !a.dirty {
		a.mu.Unlock()
		return nil
	}
	a.dirty = false
	a.mu.Unlock()
	a.MemoryAcks.mu.Lock()
	list := make([]fileAck, 0, len(a.m))
	for k, p := range a.m {
		list = append(list, fileAck{Key: k.key, Stream: k.stream, Offset: p.Offset, Epoch: p.Epoch})
	}
	a.MemoryAcks.mu.Unlock()
	raw, err := json.Marshal(list)
	if err == nil {
		err = writeAtomic(a.path, raw)
	}
	if err != nil {
		a.mu.Lock()
		a.dirty = true
		a.mu.Unlock()
		return fmt.Errorf("ws acks: %w", err)
	}
	return nil
}

// Close writes what changed and stops the flusher.
func (a *FileAcks) Close() error {
	close(a.done)
	a.wg.Wait()
	return a.flush()
}

func writeAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
