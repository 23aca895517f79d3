package seglog

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// droppedFile holds, per key Drop was called for, the newest offset it
// made unreadable, while a segment may still hold its records.
const droppedFile = "dropped"

// Drop makes every record of a key unreadable at once and frees its
// memory: the key keeps its next offset (an offset is never given
// twice), its reads return nothing. With a directory the records stay in
// their segments, shared with other keys, until retention deletes them
// whole; until then the dropped file (written before Drop returns) keeps
// them unreadable across restarts.
func (l *Log) Drop(key string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	ks := l.keys[key]
	if ks == nil || ks.next == 1 {
		return nil
	}
	l.memBytes -= ks.tailSize
	ks.tail, ks.tailSize, ks.spans, ks.first = nil, 0, nil, ks.next
	if l.cfg.Dir == "" {
		return nil
	}
	if l.dropped == nil {
		l.dropped = map[string]dropMark{}
	}
	var seg uint64
	if n := len(l.segs); n > 0 {
		seg = l.segs[n-1].seq
	}
	l.dropped[key] = dropMark{Offset: ks.next - 1, Segment: seg}
	return l.writeDropped()
}

// dropMark is what the dropped file keeps of a dropped key: the newest
// offset Drop made unreadable and the newest segment then, past which no
// segment holds those records.
type dropMark struct {
	Offset  int64  `json:"offset"`
	Segment uint64 `json:"segment"`
}

// writeDropped records the dropped keys, forgetting those whose records
// every segment that held them is deleted; mu held.
func (l *Log) writeDropped() error {
	for k, m := range l.dropped {
		if len(l.segs) == 0 || l.segs[0].seq > m.Segment {
			delete(l.dropped, k)
		}
	}
	b, err := json.Marshal(l.dropped)
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	return writeFileSync(filepath.Join(l.cfg.Dir, droppedFile), checksummed(b))
}

func (l *Log) loadDropped() error {
	raw, err := os.ReadFile(filepath.Join(l.cfg.Dir, droppedFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("seglog: %w", err)
	}
	b, err := unchecksummed(raw)
	if err != nil {
		return fmt.Errorf("seglog: %s: %w; refusing to start on it", filepath.Join(l.cfg.Dir, droppedFile), err)
	}
	if err := json.Unmarshal(b, &l.dropped); err != nil {
		return fmt.Errorf("seglog: %s: %w", filepath.Join(l.cfg.Dir, droppedFile), err)
	}
	return nil
}

// hideDropped leaves out of a key's spans, at open, the records Drop
// made unreadable; its first offset is then past them.
func (l *Log) hideDropped(key string, ks *keyState) {
	m, ok := l.dropped[key]
	if !ok {
		return
	}
	for len(ks.spans) > 0 && ks.spans[0].last <= m.Offset {
		ks.spans = ks.spans[1:]
	}
	if len(ks.spans) > 0 && ks.spans[0].first <= m.Offset {
		ks.spans[0].first = m.Offset + 1 // a span straddling the drop
	}
}

// forgetDropped rewrites the dropped file after retention deleted
// segments, when there is one; mu held.
func (l *Log) forgetDropped() error {
	if len(l.dropped) == 0 {
		return nil
	}
	return l.writeDropped()
}
