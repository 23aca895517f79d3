package geocode

// validConfidence is the confidence above which an address can exist.
const validConfidence = 0.7

// Correction is one change between the query and the address it
// validated as: a typo in the street or city, a house number written
// another way, a town the rows name otherwise.
type Correction struct {
	Field string // street, city, number
	From  string // as the query says it (folded)
	To    string // as the index has it
}

// Validation is Validate's answer.
type Validation struct {
	Exists      bool
	Match       Match        // the best match, when there is one
	Corrections []Correction // what was changed to match, when Exists
	// Suggestion is the address of the street's nearest house number when
	// the street is right but the number is not on it, with its
	// confidence: its score, as search gives it.
	Suggestion *Match
}

// Validate reports whether an address exists: the best match names the
// query's street (every word of its name, each within one typo), the
// query's house number is on that street (203-06 and 20306 are the same
// number), no other word of the query contradicts it (a ZIP, a state,
// another street's word), and its confidence is above 0.7. A town the
// rows name otherwise is accepted and reported as a correction.
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
	ix.answer(&qr, g)
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
	contradicted := false
	unitWords := Tokens(v.Match.Address.Unit)
	for k := range qr.toks {
		if !g.unmatched.has(k) {
			continue
		}
		tk := &qr.toks[k]
		switch {
		case g.townish.has(k):
			if v.Match.Address.City != "" {
				v.Corrections = append(v.Corrections, Correction{Field: "city", From: tk.text, To: v.Match.Address.City})
			}
		case tk.unit, inUnit(unitWords, tk.text):
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
	numberOK := g.numMatched && ix.numberExact(&qr, best.addr) || !qr.hasNum && num == ""
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
	v.Exists = streetOK && numberOK && !contradicted && v.Match.Confidence > validConfidence
	if !v.Exists {
		v.Corrections = nil
		if streetOK && qr.hasNum && !g.numMatched {
			m := v.Match
			v.Suggestion = &m
		}
	}
	return v
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
