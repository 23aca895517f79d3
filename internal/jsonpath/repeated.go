package jsonpath

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
)

// RepeatedRefusal is the message for a member of an object that repeats
// the name of an earlier member of the same object: a decoder would keep
// one of them, so the body is refused instead of read as either.
const RepeatedRefusal = "is repeated: a member name appears once in its object"

// Repeated names, by path (vehicles[2].vehicle_id, metadata.note; an
// odd name quoted in brackets, as every path names it: join), each
// member of body whose name an earlier member of the same object already
// has, at any depth and in free-form objects too, up to MaxNamed; nil
// when there is none. Names are compared as decoded ("\u0061" is "a").
// body is one JSON value a decoder has taken; anything else ends the
// scan where it stops making sense.
func Repeated(body []byte) map[string]string {
	s := repeatScan{b: body, named: map[string]string{}}
	var keys [32]keySpan
	s.keys = keys[:0]
	s.value(0)
	if len(s.named) == 0 {
		return nil
	}
	return s.named
}

// HasRepeated reports whether some object of body has two members of the
// same name, or, with fold, of names equal but for case (as
// bytes.EqualFold): the check of the routes that decode with a faster
// decoder, which keeps the last of two such members. Their types match
// names case-insensitively, as encoding/json does, so a name repeated in
// another case may be the same field; true sends the body to
// api.DecodeJSON, which tells by the type. It allocates nothing for
// objects of up to 32 members whose names have no escapes (the list of
// names is reused from body to body).
func HasRepeated(body []byte, fold bool) bool {
	keys := keyLists.Get().(*[]keySpan)
	s := repeatScan{b: body, fold: fold, keys: (*keys)[:0]}
	s.value(0)
	if cap(s.keys) <= 1024 {
		*keys = s.keys[:0]
		keyLists.Put(keys)
	}
	return s.hit
}

// keyLists keeps the name lists of HasRepeated's scans between bodies.
var keyLists = sync.Pool{New: func() any { l := make([]keySpan, 0, 64); return &l }}

// keySpan is a member name as it stands in the body, between its quotes:
// esc when it holds an escape, wide when it holds a byte past ASCII, h a
// hash of its bytes (ASCII letters folded to lower case when the scan
// folds) that two names equal as they stand share.
type keySpan struct {
	start, end int
	h          uint32
	esc, wide  bool
}

// maySame reports whether a and b may be one name: their hashes agree,
// or the names need decoding or Unicode folding to tell.
func (s *repeatScan) maySame(a, b keySpan) bool {
	return a.h == b.h || a.esc || b.esc || s.fold && (a.wide || b.wide)
}

// repeatScan walks a JSON value for repeated member names. keys holds
// the names of the objects being read, each object's above its parent's;
// path (when named is not nil) the members and indexes on the way down,
// for naming a repeat.
type repeatScan struct {
	b     []byte
	i     int
	fold  bool
	hit   bool
	named map[string]string
	keys  []keySpan
	path  []pathSeg
}

type pathSeg struct {
	key   keySpan // the member, when index < 0
	index int
}

// maxScanDepth bounds the nesting the scan follows: deeper than any
// decoder the routes use accepts.
const maxScanDepth = 10000

// done reports whether the scan has what it looks for.
func (s *repeatScan) done() bool {
	return s.hit && (s.named == nil || len(s.named) >= MaxNamed)
}

func (s *repeatScan) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\n', '\r':
			s.i++
		default:
			return
		}
	}
}

// value passes over one value; false ends the scan.
func (s *repeatScan) value(depth int) bool {
	if depth > maxScanDepth {
		return false
	}
	s.ws()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{':
		return s.object(depth)
	case '[':
		s.i++
		s.ws()
		if s.i < len(s.b) && s.b[s.i] == ']' {
			s.i++
			return true
		}
		for n := 0; ; n++ {
			more, ok := s.member(pathSeg{index: n}, depth, ']')
			if !more {
				return ok
			}
		}
	case '"':
		_, ok := s.str(false)
		return ok
	}
	// a number, true, false or null
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ',', ']', '}', ' ', '\t', '\n', '\r':
			return true
		}
		s.i++
	}
	return true
}

// object passes over an object, comparing each member's name with the
// earlier ones'; past 32 members the names go into a map.
func (s *repeatScan) object(depth int) bool {
	s.i++
	s.ws()
	if s.i < len(s.b) && s.b[s.i] == '}' {
		s.i++
		return true
	}
	first := len(s.keys)
	defer func() { s.keys = s.keys[:first] }()
	var seen map[string]bool
	var hashes uint64 // a bit for each name's hash, mod 64
	odd := false      // an earlier name needs decoding or Unicode folding
	for {
		s.ws()
		k, ok := s.str(true)
		if !ok {
			return false
		}
		s.ws()
		if s.i >= len(s.b) || s.b[s.i] != ':' {
			return false
		}
		s.i++
		switch {
		case seen != nil:
			n := s.mapKey(k)
			if seen[n] {
				s.repeat(k)
			}
			seen[n] = true
		case len(s.keys)-first == 32:
			seen = make(map[string]bool, 64)
			for _, o := range s.keys[first:] {
				seen[s.mapKey(o)] = true
			}
			n := s.mapKey(k)
			if seen[n] {
				s.repeat(k)
			}
			seen[n] = true
		default:
			// a name whose hash no earlier name of the object shares (bit
			// of hashes) and that needs no decoding or Unicode folding is
			// no repeat: the common case, told without comparing names
			bit := uint64(1) << (k.h & 63)
			if hashes&bit != 0 || k.esc || s.fold && k.wide || odd {
				for _, o := range s.keys[first:] {
					if s.maySame(o, k) && s.same(o, k) {
						s.repeat(k)
						break
					}
				}
			}
			hashes |= bit
			odd = odd || k.esc || s.fold && k.wide
			s.keys = append(s.keys, k)
		}
		if s.done() {
			return false
		}
		if more, ok := s.member(pathSeg{key: k, index: -1}, depth, '}'); !more {
			return ok
		}
	}
}

// member passes over the value of an array element or object member at
// seg, then the comma after it or the closing byte: more says another
// element follows, ok (when not more) that the container ended well.
func (s *repeatScan) member(seg pathSeg, depth int, closing byte) (more, ok bool) {
	if s.named != nil {
		s.path = append(s.path, seg)
	}
	ok = s.value(depth + 1)
	if s.named != nil {
		s.path = s.path[:len(s.path)-1]
	}
	if !ok || s.done() {
		return false, false
	}
	s.ws()
	if s.i >= len(s.b) {
		return false, false
	}
	s.i++
	switch s.b[s.i-1] {
	case ',':
		return true, true
	case closing:
		return false, true
	}
	return false, false
}

// str passes over a string and returns where it lies; wide is set only
// for a name (key), whose bytes are few.
func (s *repeatScan) str(key bool) (keySpan, bool) {
	if s.i >= len(s.b) || s.b[s.i] != '"' {
		return keySpan{}, false
	}
	k := keySpan{start: s.i + 1}
	j := bytes.IndexByte(s.b[k.start:], '"')
	if j < 0 {
		return keySpan{}, false
	}
	if bytes.IndexByte(s.b[k.start:k.start+j], '\\') >= 0 {
		// an escape: the closing quote is the first one not escaped
		k.esc = true
		for i := k.start; i < len(s.b); i++ {
			switch s.b[i] {
			case '"':
				k.end, s.i = i, i+1
				return k, true
			case '\\':
				i++
			}
		}
		return keySpan{}, false
	}
	k.end, s.i = k.start+j, k.start+j+1
	if key {
		h := uint32(2166136261)
		for _, c := range s.b[k.start:k.end] {
			if c >= 0x80 {
				k.wide = true
			} else if s.fold && c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			h = (h ^ uint32(c)) * 16777619
		}
		k.h = h
	}
	return k, true
}

// same reports whether two names are one.
func (s *repeatScan) same(a, b keySpan) bool {
	x, y := s.b[a.start:a.end], s.b[b.start:b.end]
	if a.esc || b.esc {
		x, y = []byte(s.decode(a)), []byte(s.decode(b))
	}
	if !s.fold {
		return bytes.Equal(x, y)
	}
	if len(x) != len(y) && !a.wide && !b.wide && !a.esc && !b.esc {
		return false // ASCII names of other lengths
	}
	if len(x) > 0 && len(y) > 0 && x[0]|0x20 != y[0]|0x20 && x[0] < 0x80 && y[0] < 0x80 {
		return false // ASCII first letters that differ but for case
	}
	return bytes.EqualFold(x, y)
}

// mapKey is a name as the map of a large object holds it.
func (s *repeatScan) mapKey(k keySpan) string {
	n := s.decode(k)
	if s.fold {
		n = strings.ToLower(n)
	}
	return n
}

// decode is the name k as a decoder reads it.
func (s *repeatScan) decode(k keySpan) string {
	if !k.esc {
		return string(s.b[k.start:k.end])
	}
	var n string
	if json.Unmarshal(s.b[k.start-1:k.end+1], &n) != nil {
		return string(s.b[k.start:k.end])
	}
	return n
}

// repeat notes the member k, a repeat, at the current path.
func (s *repeatScan) repeat(k keySpan) {
	s.hit = true
	if s.named == nil || len(s.named) >= MaxNamed {
		return
	}
	path := ""
	for _, seg := range s.path {
		if seg.index >= 0 {
			path += "[" + strconv.Itoa(seg.index) + "]"
			continue
		}
		path = join(path, s.decode(seg.key))
	}
	path = join(path, s.decode(k))
	s.named[path] = RepeatedRefusal
}
