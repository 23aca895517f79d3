package api

import (
	"fmt"
	"unicode/utf8"
)

// bodyText refuses a JSON body that is not Unicode text: bytes that are
// not UTF-8 (RFC 8259 §8.1: JSON text is UTF-8), or a \u escape of a
// surrogate (\uD800 to \uDFFF) that is not half of a pair, which no
// character is. encoding/json would take either and put U+FFFD in its
// place, so that the service would store and answer other characters than
// the client sent (an id "veh\xff" kept as "veh\uFFFD"). The answer is
// 400 invalid_request naming the body and the offset of the first fault.
func bodyText(body []byte) error {
	if !utf8.Valid(body) {
		i := 0
		for i < len(body) {
			r, n := utf8.DecodeRune(body[i:])
			if r == utf8.RuneError && n <= 1 {
				break
			}
			i += n
		}
		return Errf("invalid_request", "request body must be UTF-8 text: byte 0x%02x at offset %d is not UTF-8", body[i], i).
			WithDetails(map[string]string{"body": fmt.Sprintf("must be UTF-8 text (offset %d)", i)})
	}
	if i := loneSurrogate(body); i >= 0 {
		return Errf("invalid_request", "request body must be Unicode text: the escape %s at offset %d is half of a surrogate pair", body[i:i+6], i).
			WithDetails(map[string]string{"body": fmt.Sprintf("must not hold an unpaired surrogate escape (offset %d)", i)})
	}
	return nil
}

// loneSurrogate answers the offset of the first \u escape inside a JSON
// string of body that is a surrogate not paired (a high one followed by a
// low one), or -1. Outside strings nothing is an escape; a malformed body
// is left to the decoder.
func loneSurrogate(body []byte) int {
	in := false
	for i := 0; i < len(body); i++ {
		c := body[i]
		switch {
		case !in:
			in = c == '"'
		case c == '"':
			in = false
		case c == '\\' && i+1 < len(body):
			if body[i+1] != 'u' {
				i++ // \" \\ \n …: the escaped byte is no quote nor backslash
				continue
			}
			u, ok := hex4(body, i+2)
			if !ok {
				continue
			}
			switch {
			case u >= 0xD800 && u < 0xDC00: // high: a low must follow
				if i+7 < len(body) && body[i+6] == '\\' && body[i+7] == 'u' {
					if l, ok := hex4(body, i+8); ok && l >= 0xDC00 && l < 0xE000 {
						i += 11
						continue
					}
				}
				return i
			case u >= 0xDC00 && u < 0xE000:
				return i
			}
			i += 5
		}
	}
	return -1
}

// hex4 reads four hexadecimal digits of b from i.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
