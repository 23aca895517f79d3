package geocode

import (
	"slices"
	"strings"
)

// validConfidence is the confidence above which an address can exist.
const validConfidence = 0.7

// Correction is one change between the query and the address it
// validated as, or the suggestion: a typo in the street or city, a house
// number written another way, a town the rows name otherwise; for a
// suggestion also the house number it has in place of the query's, and a
// state or ZIP the query names that is not the address's.
type Correction struct {
	Field string // street, city, number, state, postcode
	From  string // as the query says it (folded)
	To    string // as the index has it
}

// Validation is Validate's answer.
type Validation struct {
	Exists      bool
	Match       Match        // the best match, when there is one
	Corrections []Correction // what was changed to match, when Exists or with a Suggestion
	// Suggestion is the address the query most likely means when it does
	// not exist as written but its street does: the street's nearest house
	// number when the number is not on it, or the address itself when the
	// query names a state or ZIP other than its own. Its confidence is its
	// score, as search gives it.
	Suggestion *Match
}

// Validate reports whether an address exists: the best match names the
// query's street (every word of its name, each within one typo), the
// query's house number is on that street (203-06 and 20306 are the same
// number), no other word of the query contradicts it (a ZIP, a state,
// another street's word), and its confidence is above 0.7. A town the
// rows name otherwise is accepted and reported as a correction. A state
// or ZIP other than the address's contradicts it whether or not the
// index holds any address there (see placeWords); the address is then
// the suggestion, as is the street's nearest number when the query's
// number is not on the street.
func (ix *Index) Validate(q string) Validation {
	var v Validation
	if ix.Len() == 0 {
		return v
	}
	sc := ix.getScratch()
	defer ix.putScratch(sc)
	qr := ix.parse(q, false, sc)
	gs := ix.rank(&qr, sc, nil, 1)
	if len(gs) == 0 {
		return v
	}
	g := &gs[0]
	best := ix.byUnit(&qr, g)[0]
	v.Match = Match{Address: ix.address(int(best.addr)), Confidence: best.conf}

	s := g.street
	words, roles := ix.stWords.row(int(s)), ix.stRoles[ix.stWords.off[s]:ix.stWords.off[s+1]]
	streetOK := true
	for j, w := range words {
		if roles[j] != roleName {
			continue
		}
		found := false
		for k := range qr.toks {
			if sc, d := qr.toks[k].wordScore(w); sc > 0 && d <= 1 {
				found = true
				if d > 0 {
					v.Corrections = append(v.Corrections, Correction{Field: "street", From: qr.toks[k].text, To: ix.vocab.at(int(w))})
				}
				break
			}
		}
		streetOK = streetOK && found
	}
	// a typo in the street's type or direction is reported as one in its
	// name is, though the street exists without them
	for j, w := range words {
		if roles[j] == roleName || saidExactly(&qr, w) {
			continue
		}
		for k := range qr.toks {
			tk := &qr.toks[k]
			if tk.exact() || saysName(tk, words, roles) {
				continue // a word of its own, or the name's (reported above)
			}
			if sc, d := tk.wordScore(w); sc > 0 && d == 1 {
				v.Corrections = append(v.Corrections, Correction{Field: "street", From: tk.text, To: ix.vocab.at(int(w))})
				break
			}
		}
	}
	if streetOK && ix.namedWithoutDirection(&qr, s, words, roles) {
		// the query names the town's street without the direction
		// (Main Street beside North Main Street), not this one
		streetOK = false
	}
	v.Corrections = append(v.Corrections, ix.cityTypos(&qr, s, words)...)
	contradicted := false
	unitWords := Tokens(v.Match.Address.Unit)
	for k := range qr.toks {
		if !g.unmatched.has(k) {
			continue
		}
		tk := &qr.toks[k]
		switch {
		case tk.unit, inUnit(unitWords, tk.text):
			// the address's own unit (a bare D or 12 as well), never
			// read as a town the rows name otherwise
		case g.townish.has(k):
			if v.Match.Address.City != "" {
				v.Corrections = append(v.Corrections, Correction{Field: "city", From: tk.text, To: v.Match.Address.City})
			}
		default:
			contradicted = true
		}
	}
	// a typo of two edits matched a word: not within one typo
	for k := range qr.toks {
		tk := &qr.toks[k]
		for _, w := range words {
			if sc, d := tk.wordScore(w); sc > 0 && d > 1 && !exactAnywhere(tk, words) && !tk.exact() {
				contradicted = true
			}
		}
	}
	num := ix.strs.at(int(ix.adNumText[best.addr]))
	numberOK := g.numMatched && ix.numberExact(&qr, best.addr) || num == "" && qr.numberless(v.Match.Address.Postcode)
	if g.numMatched && numberOK {
		for k := range qr.toks {
			key := ix.nums.at(int(ix.adNum[best.addr]))
			if tk := &qr.toks[k]; tk.num && tk.text != Fold(num) && (numberKey(tk.text) == key || tk.inRange(int(ix.adNum[best.addr]))) {
				v.Corrections = append(v.Corrections, Correction{Field: "number", From: tk.text, To: num})
			}
		}
		// joinedID is set only when the query has two words to join
		if qr.joinedID >= 0 && int(ix.adNum[best.addr]) == qr.joinedID {
			if from := qr.toks[0].text + " " + qr.toks[1].text; from != Fold(num) {
				v.Corrections = append(v.Corrections, Correction{Field: "number", From: from, To: num})
			}
		}
	}
	v.Exists = streetOK && numberOK && !contradicted && g.contra == 0 && v.Match.Confidence > validConfidence
	if v.Exists {
		return v
	}
	switch {
	case streetOK && g.numMissed:
		if tk := qr.firstNumber(); tk != nil {
			v.Corrections = append(v.Corrections, Correction{Field: "number", From: tk.text, To: num})
		}
	case streetOK && numberOK && !contradicted && g.contra != 0:
	default:
		v.Corrections = nil
		return v
	}
	m := v.Match
	v.Suggestion = &m
	v.Corrections = append(v.Corrections, ix.placeCorrections(&qr, g, &m.Address)...)
	return v
}

// namedWithoutDirection reports whether street s (words, roles) has a
// direction the query does not say, within one typo, and its town (the
// same city and state) has a street of the same words without those
// directions: Main Street beside North Main Street, which the query
// then names rather than s.
func (ix *Index) namedWithoutDirection(qr *query, s uint32, words []uint32, roles []uint8) bool {
	var rest []uint32 // s's words but the directions the query does not say
	unsaid := false
	for j, w := range words {
		if roles[j] == roleDir && !saidWithin1(qr, w) {
			unsaid = true
			continue
		}
		rest = append(rest, w)
	}
	if !unsaid || len(rest) == 0 {
		return false
	}
	town := ix.locWords.row(int(ix.stLoc[s]))
	for _, s2 := range ix.wordStreets.row(int(rest[0])) {
		if s2 == s || !slices.Equal(ix.locWords.row(int(ix.stLoc[s2])), town) {
			continue
		}
		if w2 := ix.stWords.row(int(s2)); len(w2) == len(rest) && sameWords(w2, rest) {
			return true
		}
	}
	return false
}

// saysName reports whether the query word matches one of the street's
// name words (words, roles) within one edit.
func saysName(tk *qtok, words []uint32, roles []uint8) bool {
	for j, w := range words {
		if sc, d := tk.wordScore(w); roles[j] == roleName && sc > 0 && d <= 1 {
			return true
		}
	}
	return false
}

// saidExactly reports whether a query word is vocabulary word w, as
// written or in a form of it (St for Street).
func saidExactly(qr *query, w uint32) bool {
	for k := range qr.toks {
		if sc, d := qr.toks[k].wordScore(w); sc > 0 && d == 0 {
			return true
		}
	}
	return false
}

// saidWithin1 reports whether a query word matches vocabulary word w
// within one edit.
func saidWithin1(qr *query, w uint32) bool {
	for k := range qr.toks {
		if sc, d := qr.toks[k].wordScore(w); sc > 0 && d <= 1 {
			return true
		}
	}
	return false
}

// sameWords reports whether a and b hold the same words, in any order.
func sameWords(a, b []uint32) bool {
	for _, w := range a {
		if !slices.Contains(b, w) {
			return false
		}
	}
	for _, w := range b {
		if !slices.Contains(a, w) {
			return false
		}
	}
	return true
}

// cityTypos are the corrections of the words of street s's town that
// the query says with a typo (Westervile for Westerville), as a street
// word's typo is reported: a query word that matches none of the town's
// words exactly, none of the street's (words) within an edit, and is
// within an edit of one of the town's words.
func (ix *Index) cityTypos(qr *query, s uint32, words []uint32) []Correction {
	loc := ix.stLoc[s]
	city := ix.locWords.row(int(loc))
	if ix.locState[loc] != 0 && len(city) > 0 {
		city = city[:len(city)-1] // the state, last
	}
	var out []Correction
	for _, w := range city {
		said := false
		for k := range qr.toks {
			if sc, d := qr.toks[k].wordScore(w); sc > 0 && d == 0 {
				said = true
				break
			}
		}
		if said {
			continue
		}
		for k := range qr.toks {
			tk := &qr.toks[k]
			if sc, d := tk.wordScore(w); sc > 0 && d > 0 && !exactIn(tk, city) && !exactAnywhere(tk, words) {
				out = append(out, Correction{Field: "city", From: tk.text, To: ix.vocab.at(int(w))})
				break
			}
		}
	}
	return out
}

// exactIn reports whether the query word is exactly one of words.
func exactIn(tk *qtok, words []uint32) bool {
	for _, w := range words {
		if sc, d := tk.wordScore(w); sc > 0 && d == 0 {
			return true
		}
	}
	return false
}

// numberless reports whether the query names no house number: no word
// of it may be one but a ZIP that is postcode (the ZIP that ends the text
// of an address without a number).
func (qr *query) numberless(postcode string) bool {
	zip := Fold(postcode)
	for k := range qr.toks {
		if tk := &qr.toks[k]; tk.num && !(tk.zip && zip != "" && tk.text == zip) {
			return false
		}
	}
	return true
}

// firstNumber is the query's first word that may be a house number, nil
// for none.
func (qr *query) firstNumber() *qtok {
	for k := range qr.toks {
		if qr.toks[k].num {
			return &qr.toks[k]
		}
	}
	return nil
}

// placeCorrections are the state and ZIPs of the query that street g's
// address a contradicts (see placeWords).
func (ix *Index) placeCorrections(qr *query, g *group, a *Address) []Correction {
	var out []Correction
	for k := range qr.toks {
		if !g.contra.has(k) {
			continue
		}
		if m := qr.state; k == m.at && m.n > 0 {
			words := make([]string, m.n)
			for j := range m.n {
				words[j] = qr.toks[k+j].text
			}
			out = append(out, Correction{Field: "state", From: strings.Join(words, " "), To: a.Region})
			continue
		}
		out = append(out, Correction{Field: "postcode", From: qr.toks[k].text, To: a.Postcode})
	}
	return out
}

// inRange reports whether number id is one end of the query word's
// range.
func (tk *qtok) inRange(id int) bool {
	return id >= 0 && (tk.ends[0] == id || tk.ends[1] == id)
}

// exactAnywhere reports whether the query word matches one of words
// within one edit.
func exactAnywhere(tk *qtok, words []uint32) bool {
	for _, w := range words {
		if sc, d := tk.wordScore(w); sc > 0 && d <= 1 {
			return true
		}
	}
	return false
}

// numberExact reports whether address a's house number is the query's (or
// one end of its range), not a prefix or the same leading digits only.
func (ix *Index) numberExact(qr *query, a uint32) bool {
	id := int(ix.adNum[a])
	if qr.joinedID == id {
		return true
	}
	for k := range qr.toks {
		if tk := &qr.toks[k]; tk.num && (tk.numID == id || tk.inRange(id)) {
			return true
		}
	}
	return false
}
