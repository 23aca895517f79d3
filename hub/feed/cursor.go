package feed

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
)

// cursorVersion is the first byte of every cursor; a cursor of another
// version is refused, so the format can change without misreading old
// ones.
const cursorVersion = 1

// ErrBadCursor is a cursor this feed did not make (or of another
// version, or of other topics).
var ErrBadCursor = errors.New("feed: invalid cursor")

// Position is where a reader of the feed stands: per topic, per
// partition, the next offset to read.
type Position map[string][]int64

// Cursor encodes a position as one opaque string: base64url (no
// padding) of the version byte, then per topic its name (uvarint length
// and bytes), its partition count and each partition's next offset
// (uvarints), topics in the order given. Clients must treat it as
// opaque.
func (p Position) Cursor(topics []string) string {
	var w cursorWriter
	return w.cursor(p, topics)
}

// cursorWriter encodes cursors into buffers it keeps, so a page's
// cursors (one per entry) cost one allocation each: the string.
type cursorWriter struct{ raw, text []byte }

func (w *cursorWriter) cursor(p Position, topics []string) string {
	b := append(w.raw[:0], cursorVersion)
	for _, t := range topics {
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		offs := p[t]
		b = binary.AppendUvarint(b, uint64(len(offs)))
		for _, o := range offs {
			b = binary.AppendUvarint(b, uint64(o))
		}
	}
	w.raw = b
	w.text = base64.RawURLEncoding.AppendEncode(w.text[:0], b)
	return string(w.text)
}

// maxCursorLen bounds a cursor's text (every partition of two topics).
const maxCursorLen = 16 << 10

// ParseCursor decodes a cursor made by Cursor.
func ParseCursor(s string) (Position, error) {
	if len(s) == 0 || len(s) > maxCursorLen {
		return nil, ErrBadCursor
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) == 0 || b[0] != cursorVersion {
		return nil, ErrBadCursor
	}
	b = b[1:]
	next := func() (uint64, bool) {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return 0, false
		}
		b = b[n:]
		return v, true
	}
	p := Position{}
	for len(b) > 0 {
		n, ok := next()
		if !ok || n == 0 || n > uint64(len(b)) || n > 255 {
			return nil, ErrBadCursor
		}
		topic := string(b[:n])
		b = b[n:]
		parts, ok := next()
		if !ok || parts > 4096 {
			return nil, ErrBadCursor
		}
		if _, dup := p[topic]; dup {
			return nil, ErrBadCursor
		}
		offs := make([]int64, parts)
		for i := range offs {
			o, ok := next()
			if !ok || o > 1<<62 {
				return nil, ErrBadCursor
			}
			offs[i] = int64(o)
		}
		p[topic] = offs
	}
	if len(p) == 0 {
		return nil, fmt.Errorf("%w: no topic", ErrBadCursor)
	}
	return p, nil
}

// Clone is a copy of p that shares nothing with it.
func (p Position) Clone() Position {
	c := make(Position, len(p))
	for t, offs := range p {
		c[t] = append([]int64(nil), offs...)
	}
	return c
}

// Within reports whether p is at or before q in every partition of the
// topics: a reader at q has read everything one at p has. Positions
// of different partition counts are not comparable (false).
func (p Position) Within(q Position, topics []string) bool {
	for _, t := range topics {
		a, b := p[t], q[t]
		if len(a) != len(b) {
			return false
		}
		for i := range a {
			if a[i] > b[i] {
				return false
			}
		}
	}
	return true
}

// Max is the position past both p and q in every partition of the
// topics (p's partitions where they differ in count).
func (p Position) Max(q Position, topics []string) Position {
	m := p.Clone()
	for _, t := range topics {
		for i, o := range q[t] {
			if i < len(m[t]) && o > m[t][i] {
				m[t][i] = o
			}
		}
	}
	return m
}
