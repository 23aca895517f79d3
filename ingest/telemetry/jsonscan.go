package telemetry

import (
	"bytes"
	"unicode/utf8"
)

// The JSON scanner. Every reader (here and in jsonnumber.go) skips the
// whitespace before its value.

func (r *bodyReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace (0 at the end).
func (r *bodyReader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// open reads the opening brace or bracket c.
func (r *bodyReader) open(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}

// next reads the comma before another member or element (more) or the
// closing brace or bracket end.
func (r *bodyReader) next(end byte) (more, ok bool) {
	switch r.peek() {
	case ',':
		r.i++
		return true, true
	case end:
		r.i++
		return false, true
	}
	return false, false
}

// key reads a member name and its colon.
func (r *bodyReader) key() ([]byte, bool) {
	k, ok := r.str()
	if !ok || r.peek() != ':' {
		return nil, false
	}
	r.i++
	return k, true
}

// str reads a string without escapes, in valid UTF-8; the bytes are the
// body's.
func (r *bodyReader) str() ([]byte, bool) {
	if r.peek() != '"' {
		return nil, false
	}
	b, start := r.b, r.i+1
	i := start
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		r.i = i + 1
		return b[start:i], true
	}
	// not plain ASCII: find the end, then check what lies before it
	end := bytes.IndexByte(b[i:], '"')
	if end < 0 {
		return nil, false
	}
	s := b[start : i+end]
	for _, c := range s {
		if !plain[c] && c < 0x80 {
			return nil, false // an escape, a control character
		}
	}
	r.i = i + end + 1
	return s, utf8.Valid(s)
}

// plain marks the bytes a string holds as they are, but its closing
// quote: ASCII but for the backslash, the quote and the control
// characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '\\' && c != '"'
	}
	return t
}()

func (r *bodyReader) boolean() (bool, bool) {
	r.ws()
	switch {
	case bytes.HasPrefix(r.b[r.i:], []byte("true")):
		r.i += 4
		return true, true
	case bytes.HasPrefix(r.b[r.i:], []byte("false")):
		r.i += 5
		return false, true
	}
	return false, false
}

// literal reads a JSON number as the JSON grammar writes it; integer is
// true when it has no sign, fraction or exponent.
func (r *bodyReader) literal() (lit []byte, integer bool, ok bool) {
	r.ws()
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return nil, false, false
	}
	integer = b[start] != '-'
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return nil, false, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		integer = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return nil, false, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		integer = false
	}
	r.i = i
	return b[start:i], integer, true
}

// skip passes over one value, checking its syntax (strings as str does).
func (r *bodyReader) skip(depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch r.peek() {
	case '"':
		_, ok := r.str()
		return ok
	case '{', '[':
		end := byte('}')
		if r.b[r.i] == '[' {
			end = ']'
		}
		r.i++
		if r.peek() == end {
			r.i++
			return true
		}
		for more := true; more; {
			if end == '}' {
				if _, ok := r.key(); !ok {
					return false
				}
			}
			if !r.skip(depth + 1) {
				return false
			}
			var ok bool
			if more, ok = r.next(end); !ok {
				return false
			}
		}
		return true
	case 't', 'f':
		_, ok := r.boolean()
		return ok
	}
	_, _, ok := r.literal()
	return ok
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
