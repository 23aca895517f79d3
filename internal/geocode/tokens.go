package geocode

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// abbrev expands the USPS street suffix, direction and unit abbreviations
// and the written ordinals, so that "N State St" and "North State Street",
// "First Ave" and "1st Avenue" are the same tokens. "st" is handled by
// role: see streetTokens and the query's alternatives.
var abbrev = map[string]string{
	"st": "street", "str": "street", "ave": "avenue", "av": "avenue", "avn": "avenue", "aven": "avenue", "avenu": "avenue",
	"rd": "road", "blvd": "boulevard", "boul": "boulevard", "dr": "drive", "drv": "drive", "ln": "lane",
	"ct": "court", "crt": "court", "pl": "place", "pkwy": "parkway", "pky": "parkway", "hwy": "highway", "ter": "terrace", "terr": "terrace",
	"cir": "circle", "sq": "square", "expy": "expressway", "expwy": "expressway", "fwy": "freeway", "tpke": "turnpike", "trl": "trail",
	"aly": "alley", "cswy": "causeway", "ctr": "center", "cres": "crescent", "crk": "creek", "cv": "cove", "xing": "crossing",
	"est": "estate", "ests": "estates", "ext": "extension", "gdn": "garden", "gdns": "gardens", "gln": "glen", "grn": "green",
	"grv": "grove", "hbr": "harbor", "hts": "heights", "hl": "hill", "hls": "hills", "holw": "hollow", "jct": "junction",
	"lk": "lake", "lks": "lakes", "lndg": "landing", "mdw": "meadow", "mdws": "meadows", "ml": "mill", "mnr": "manor",
	"mt": "mount", "mtn": "mountain", "orch": "orchard", "pt": "point", "pts": "points", "plz": "plaza", "pne": "pine",
	"rdg": "ridge", "riv": "river", "rte": "route", "shr": "shore", "spg": "spring", "spgs": "springs", "sta": "station",
	"trce": "trace", "trak": "track", "tunl": "tunnel", "vly": "valley", "vis": "vista", "vlg": "village", "wy": "way",
	"ft": "fort", "hwys": "highways", "pass": "pass", "run": "run", "walk": "walk", "loop": "loop", "row": "row",
	"n": "north", "s": "south", "e": "east", "w": "west", "ne": "northeast", "nw": "northwest", "se": "southeast", "sw": "southwest",
	"apt": "apartment", "ste": "suite", "fl": "floor", "bldg": "building", "rm": "room",
}

// ordinals pairs written and numbered ordinals: a query's First Avenue
// also looks for 1st Avenue, and the other way round. The index keeps
// the street's own spelling, so a typo of it still finds it.
var ordinals = map[string]string{
	"first": "1st", "second": "2nd", "third": "3rd", "fourth": "4th", "fifth": "5th", "sixth": "6th", "seventh": "7th",
	"eighth": "8th", "ninth": "9th", "tenth": "10th", "eleventh": "11th", "twelfth": "12th",
}

func init() {
	for k, v := range ordinals {
		ordinals[v] = k
	}
}

// suffixes are the street types: a street name's last word among them
// weighs less than its name (Braddock in Braddock Avenue).
var suffixes = map[string]bool{}

// directions weigh as little as a street type.
var directions = map[string]bool{
	"north": true, "south": true, "east": true, "west": true,
	"northeast": true, "northwest": true, "southeast": true, "southwest": true,
}

// unitWords introduce a unit: they carry almost no weight.
var unitWords = map[string]bool{"apartment": true, "suite": true, "floor": true, "unit": true, "building": true, "room": true}

func init() {
	for _, v := range abbrev {
		if !directions[v] && !unitWords[v] && !isDigit(v[0]) {
			suffixes[v] = true
		}
	}
	delete(suffixes, "mount")
	delete(suffixes, "fort")
}

// specialFold are letters that compatibility decomposition keeps whole.
var specialFold = map[rune]string{
	'ß': "ss", 'ẞ': "ss", 'æ': "ae", 'Æ': "ae", 'œ': "oe", 'Œ': "oe", 'ø': "o", 'Ø': "o",
	'đ': "d", 'Đ': "d", 'ł': "l", 'Ł': "l", 'ı': "i", 'þ': "th", 'Þ': "th", 'ð': "d", 'Ð': "d",
	'⁄': "/", // the fraction slash of ½ decomposed: 12½ is 12 1/2
}

// Fold lower-cases s and folds it to plain letters and digits: accents
// dropped (Hëmpstead → hempstead), ß → ss, full-width digits and letters
// → ASCII. Index and queries pass through the same fold.
func Fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	s = norm.NFKD.String(strings.ToValidUTF8(s, " "))
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if unicode.Is(unicode.Mn, r) {
			continue
		}
		if x, ok := specialFold[r]; ok {
			b.WriteString(x)
			continue
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// Tokens normalizes text into index tokens: folded (see Fold), split at
// anything but letters and digits, USPS abbreviations expanded. A hyphen
// or slash between digits stays (Queens-style 90-01, the fraction 1/2).
func Tokens(s string) []string {
	var out []string
	for _, t := range rawTokens(Fold(s)) {
		if x, ok := abbrev[t]; ok {
			t = x
		}
		out = append(out, t)
	}
	return out
}

// rawTokens splits folded text into tokens without expanding them.
func rawTokens(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '/'
	})
	out := f[:0:0]
	for _, t := range f {
		out = appendSplit(out, t)
	}
	return out
}

// appendSplit appends t's parts: a hyphen or slash is kept only between a
// digit and a digit-led part (90-01, 12-14, 1/2, 90-01a).
func appendSplit(out []string, t string) []string {
	start := 0
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != '-' && c != '/' {
			continue
		}
		keep := i > start && isDigit(t[i-1]) && i+1 < len(t) && isDigit(t[i+1]) && isDigit(t[start])
		if !keep {
			if i > start {
				out = append(out, t[start:i])
			}
			start = i + 1
		}
	}
	if start < len(t) {
		out = append(out, t[start:])
	}
	return out
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isNumeric reports whether t is house-number-like: it starts with a
// digit and holds no more than two letters (12, 12a, 90-01, 1/2, 109th
// is not: it is an ordinal, a street word).
func isNumeric(t string) bool {
	if t == "" || !isDigit(t[0]) || isOrdinal(t) {
		return false
	}
	letters := 0
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isDigit(c) && c != '-' && c != '/' {
			letters++
		}
	}
	return letters <= 2
}

// isOrdinal reports whether t is a numbered street word: 1st, 2nd, 109th.
func isOrdinal(t string) bool {
	n := len(t)
	if n < 3 || !isDigit(t[0]) {
		return false
	}
	for i := 0; i < n-2; i++ {
		if !isDigit(t[i]) {
			return false
		}
	}
	switch t[n-2:] {
	case "st", "nd", "rd", "th":
		return true
	}
	return false
}

// numberKey is the comparable form of a house number: folded, without
// hyphens or spaces, so that 203-06, 203 06 and 20306 are one number.
func numberKey(s string) string {
	s = Fold(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c != '-' && c != ' ' && c != '#' {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// numberRange reads t as a range of house numbers, 100-110 or 12-14: two
// numbers joined by a hyphen, the second larger and without a leading
// zero. Queens numbers (90-01, 203-06, 86-16) are not ranges; one that
// reads as both (12-14) is matched as the Queens number on a street that
// has it (see Index.score).
func numberRange(t string) (lo, hi string, ok bool) {
	a, b, found := strings.Cut(t, "-")
	if !found || a == "" || b == "" || b[0] == '0' || len(b) > 9 || numberBase(a) != a || numberBase(b) != b {
		return "", "", false
	}
	if len(b) < len(a) || len(b) == len(a) && b <= a {
		return "", "", false
	}
	return a, b, true
}

// isFraction reports whether t is a fraction such as 1/2 or 3/4.
func isFraction(t string) bool {
	a, b, found := strings.Cut(t, "/")
	return found && a != "" && b != "" && numberBase(a) == a && numberBase(b) == b
}

// numberValue is a house number's position along its street for nearest
// numbers: the leading digits of its key (24016 for 240-16).
func numberValue(key string) int64 {
	var v int64
	for i := 0; i < len(key) && i < 12 && isDigit(key[i]); i++ {
		v = v*10 + int64(key[i]-'0')
	}
	return v
}

// numberBase is the key's leading digits (12 of 12a and of 12 1/2).
func numberBase(key string) string {
	i := 0
	for i < len(key) && isDigit(key[i]) {
		i++
	}
	return key[:i]
}
