package geocode

import (
	"strings"
	"unicode"
)

// abbrev expands the USPS street suffix, direction and unit abbreviations,
// so that "N State St" and "North State Street" are the same tokens.
var abbrev = map[string]string{
	"st": "street", "str": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard", "dr": "drive", "ln": "lane",
	"ct": "court", "pl": "place", "pkwy": "parkway", "hwy": "highway", "ter": "terrace", "cir": "circle", "sq": "square", "expy": "expressway",
	"tpke": "turnpike", "trl": "trail", "n": "north", "s": "south", "e": "east", "w": "west", "ne": "northeast", "nw": "northwest",
	"se": "southeast", "sw": "southwest", "apt": "apartment", "ste": "suite", "fl": "floor",
}

// Tokens normalizes text into index tokens.
func Tokens(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' })
	out := f[:0]
	for _, t := range f {
		t = strings.Trim(t, "-")
		if t == "" {
			continue
		}
		if x, ok := abbrev[t]; ok {
			t = x
		}
		out = append(out, t)
	}
	return out
}

// within1 reports whether a and b are at most one edit apart.
func within1(a, b string) bool {
	if a == b {
		return true
	}
	la, lb := len(a), len(b)
	if la-lb > 1 || lb-la > 1 {
		return false
	}
	i, j, edits := 0, 0, 0
	for i < la && j < lb {
		if a[i] == b[j] {
			i, j = i+1, j+1
			continue
		}
		edits++
		if edits > 1 {
			return false
		}
		switch {
		case la > lb:
			i++
		case lb > la:
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return edits+(la-i)+(lb-j) <= 1
}
