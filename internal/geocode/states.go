package geocode

import "strings"

// usStates are the USPS codes of the states, DC and the territories, with
// their names folded.
var usStates = map[string]string{
	"al": "alabama", "ak": "alaska", "az": "arizona", "ar": "arkansas", "ca": "california", "co": "colorado",
	"ct": "connecticut", "de": "delaware", "dc": "district of columbia", "fl": "florida", "ga": "georgia", "hi": "hawaii",
	"id": "idaho", "il": "illinois", "in": "indiana", "ia": "iowa", "ks": "kansas", "ky": "kentucky", "la": "louisiana",
	"me": "maine", "md": "maryland", "ma": "massachusetts", "mi": "michigan", "mn": "minnesota", "ms": "mississippi",
	"mo": "missouri", "mt": "montana", "ne": "nebraska", "nv": "nevada", "nh": "new hampshire", "nj": "new jersey",
	"nm": "new mexico", "ny": "new york", "nc": "north carolina", "nd": "north dakota", "oh": "ohio", "ok": "oklahoma",
	"or": "oregon", "pa": "pennsylvania", "ri": "rhode island", "sc": "south carolina", "sd": "south dakota",
	"tn": "tennessee", "tx": "texas", "ut": "utah", "vt": "vermont", "va": "virginia", "wa": "washington",
	"wv": "west virginia", "wi": "wisconsin", "wy": "wyoming", "pr": "puerto rico", "vi": "virgin islands", "gu": "guam",
	"as": "american samoa", "mp": "northern mariana islands",
}

// stateNames are the states' folded names (and D.C.), to their codes.
var stateNames = map[string]string{"d c": "dc"}

// nameEnds are the last words of the names of more than one word (York
// of New York).
var nameEnds = map[string]bool{}

// maxStateWords is the most words a state's name has.
const maxStateWords = 3

func init() {
	for code, name := range usStates {
		stateNames[name] = code
	}
	for name := range stateNames {
		if i := strings.LastIndexByte(name, ' '); i >= 0 {
			nameEnds[name[i+1:]] = true
		}
	}
}

// IsStateCode reports whether code is the USPS code of a state, D.C. or
// a territory, in capitals as it is written (OH, DC, PR): the state of an
// address this index can hold.
func IsStateCode(code string) bool {
	if len(code) != 2 || strings.ToUpper(code) != code {
		return false
	}
	_, ok := usStates[strings.ToLower(code)]
	return ok
}

// stateCode is the USPS code of a state written as its code or its name
// (NY, new york), "" for none.
func stateCode(s string) string {
	s = strings.Join(strings.Fields(Fold(s)), " ")
	if _, ok := usStates[s]; ok {
		return s
	}
	return stateNames[s]
}

// stateMention is a state the query names: its words [at, at+n) and its
// code; n is 0 for none.
type stateMention struct {
	at, n int
	code  string
}

// lastState is the last state the query names after its first word (a
// state follows the street: Delaware of "Delaware, OH" is the town), by
// code or by name, the longest name ending at a word first (West
// Virginia, not Virginia); the word still being typed is not one. A code
// that is also a street abbreviation (CT Court, NE Northeast, FL Floor)
// is a state only before a ZIP.
func lastState(toks []qtok, prefix bool) stateMention {
	end := len(toks)
	if prefix {
		end--
	}
	for e := end - 1; e >= 1; e-- {
		for n := min(maxStateWords, e); n >= 2 && nameEnds[toks[e].text]; n-- {
			var words [maxStateWords]string
			for j := range n {
				words[j] = toks[e-n+1+j].text
			}
			if code, ok := stateNames[strings.Join(words[:n], " ")]; ok {
				return stateMention{at: e - n + 1, n: n, code: code}
			}
		}
		t := toks[e].text
		if code, ok := stateNames[t]; ok {
			return stateMention{at: e, n: 1, code: code}
		}
		if _, ok := usStates[t]; !ok {
			continue
		}
		if _, abbr := abbrev[t]; abbr && !(e+1 < len(toks) && toks[e+1].zip) {
			continue
		}
		return stateMention{at: e, n: 1, code: t}
	}
	return stateMention{}
}
