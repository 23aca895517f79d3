package geocode

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// Field weights: what a query word is worth when it matches a part of an
// address. A street's name outweighs its type and direction, which
// outweigh the city; a house number weighs as much as the name.
const (
	wName   = 1.0
	wType   = 0.35
	wDir    = 0.35
	wCity   = 0.5
	wState  = 0.3
	wZip    = 0.6
	wNumber = 1.0
	wUnit   = 0.3
)

// Scores of a word matched other than exactly.
const (
	sPrefix = 0.9  // the last word of an autocomplete, a prefix of the indexed word
	sEdit1  = 0.8  // one edit (a transposition is one)
	sEdit2  = 0.6  // two edits, in words of eight letters or more
	sBase   = 0.7  // 12 for 12A
	sRange  = 0.95 // 100 or 110 for the range 100-110
	sOrd    = 0.95 // 109 for 109th
)

// sContra is what a street's confidence is multiplied by when the query
// names a state or ZIP that is not the street's: never above the
// validation threshold.
const sContra = validConfidence

// sNameMissed is what a street's confidence is multiplied by when the
// query names a street word it does not have, as for a house number it
// does not have: the street the query names, without the number, comes
// before the streets that have the number and not the name.
const sNameMissed = 0.8

// Limits of a query.
const (
	maxQueryBytes  = 1000 // longer queries are cut (the API refuses over 500 characters)
	maxQueryTokens = 16
)

// wordMatch is a vocabulary word a query word stands for.
type wordMatch struct {
	id    uint32
	score float32
	dist  uint8 // edits; 0 for exact and ordinals
}

// qtok is one analysed word of a query.
type qtok struct {
	text  string
	words []wordMatch // exact, alternatives (st: street or saint), ordinals, typos
	// prefix ranges, for the last word of an autocomplete
	preLo, preHi       int // vocabulary
	numPreLo, numPreHi int // house-number keys
	zipPreLo, zipPreHi int // ZIPs

	pw     float32 // what the word is worth where it matches best (0: unknown to the index)
	pwCity bool    // it is worth that only as a city word

	num       bool   // may be the house number
	numID     int    // its key in nums, -1 if no address has it
	baseID    int    // the key of its leading digits (12 of 12a), -1
	ends      [2]int // a range's numbers (100 and 110 of 100-110), -1 where no address has it
	zip       bool   // may be the ZIP
	zipID     int    // -1 if no locality has it
	unit      bool   // follows a unit word (Apt 2)
	afterUnit bool   // directly follows a unit word: never a ZIP of its own (#19201)
	typo      string // the word typos are looked for of, "" for none (see typos)
}

// query is an analysed query.
type query struct {
	toks     []qtok
	prefix   bool
	joinedID int // key of the first two words joined (203 06 → 20306), -1
	hasNum   bool
	state    stateMention // the state the query names, if any
}

// parse analyses a query against the index's vocabulary.
func (ix *Index) parse(q string, prefix bool, sc *scratch) query {
	raw, endsInSpace := queryWords(q)
	qr := query{prefix: prefix && !endsInSpace, joinedID: -1}
	seenNum := false
	unitLeft := 0 // words of a unit still to come: Apt 4, #R 16, Suite C 55
	for i, t := range raw {
		if i > 0 && len(t) == 10 && t[5] == '-' && numberBase(t[:5]) == t[:5] && numberBase(t[6:]) == t[6:] {
			t = t[:5] // ZIP+4
		}
		tk := qtok{text: t, numID: -1, baseID: -1, ends: [2]int{-1, -1}, zipID: -1, afterUnit: unitLeft == 2}
		last := qr.prefix && i == len(raw)-1
		if unitLeft > 0 && (isNumeric(t) || len(t) <= 3) && !(len(t) == 5 && numberBase(t) == t) {
			tk.unit = true
			unitLeft--
		} else {
			unitLeft = 0
		}
		alts := wordForms(t)
		if unitWords[alts[0]] || t == "unit" {
			unitLeft = 2
		}
		numeric := isNumeric(t)
		if numeric {
			ix.numberWord(&tk, i, len(raw), last, seenNum)
			seenNum = true
		}
		for _, a := range alts {
			if id, ok := ix.vocab.find(a); ok {
				tk.words = append(tk.words, wordMatch{id: uint32(id), score: 1})
			}
		}
		if last {
			tk.preLo, tk.preHi = ix.vocab.prefixRange(t)
		}
		// the word being typed has typos only when no word begins with it
		if !numeric && (!last || tk.preHi == tk.preLo) && len(alts[0]) >= 3 && !strings.ContainsAny(alts[0], "0123456789") {
			tk.typo = alts[0]
		}
		tk.words = bestPerWord(tk.words)
		if tk.num && (i == 0 || len(tk.words) == 0) {
			qr.hasNum = true
		}
		ix.potential(&tk)
		qr.toks = append(qr.toks, tk)
	}
	qr.joinedID = ix.joinedNumber(qr.toks)
	qr.state = lastState(qr.toks, qr.prefix)
	return qr
}

// queryWords are the folded words of a query, cut to maxQueryBytes and
// maxQueryTokens (# is the word unit: #8 is a unit), and whether the
// query ends in a space or a comma (its last word is complete).
func queryWords(q string) (raw []string, endsInSpace bool) {
	if len(q) > maxQueryBytes {
		q = q[:maxQueryBytes]
	}
	q = strings.ToValidUTF8(q, " ")
	if r, _ := utf8.DecodeLastRuneInString(q); r == ' ' || r == ',' {
		endsInSpace = true
	}
	raw = rawTokens(strings.ReplaceAll(Fold(q), "#", " unit ")) // #8 is a unit
	if len(raw) > maxQueryTokens {
		raw = raw[:maxQueryTokens]
	}
	return raw, endsInSpace
}

// wordForms are the words a query word may stand for, the main one
// first: St is Street or Saint, an abbreviation its long form or itself
// (CT is Court and Connecticut), and an ordinal its other spelling
// (First and 1st).
func wordForms(t string) []string {
	alts := []string{t}
	switch x, ok := abbrev[t]; {
	case t == "st":
		alts = []string{"street", "saint"}
	case ok:
		alts = []string{x, t} // CT is Court and Connecticut
	}
	if o, ok := ordinals[t]; ok {
		alts = append(alts, o)
	}
	return alts
}

// numberWord analyses word i of n, numeric, as a house number (unless it
// is a unit's, or a ZIP after the number), a ZIP, and a street's number;
// last is the word of an autocomplete being typed, seenNum whether a
// number came before.
func (ix *Index) numberWord(tk *qtok, i, n int, last, seenNum bool) {
	t := tk.text
	five := len(t) == 5 && numberBase(t) == t
	tk.zip = five && (i > 0 || n == 1)
	tk.num = !tk.unit && !(tk.zip && seenNum)
	if tk.num {
		key := numberKey(t)
		if id, ok := ix.nums.find(key); ok {
			tk.numID = id
		}
		if b := numberBase(key); b != key && b != "" {
			if id, ok := ix.nums.find(b); ok {
				tk.baseID = id
			}
		}
		if a, b, ok := numberRange(t); ok {
			for e, end := range [2]string{a, b} {
				if id, ok := ix.nums.find(end); ok {
					tk.ends[e] = id
				}
			}
		}
		if last {
			tk.numPreLo, tk.numPreHi = ix.nums.prefixRange(key)
		}
	}
	if tk.zip {
		if id, ok := ix.zips.find(t); ok {
			tk.zipID = id
		}
	}
	if last && i > 0 && len(t) >= 3 && len(t) < 5 && numberBase(t) == t {
		tk.zipPreLo, tk.zipPreHi = ix.zips.prefixRange(t)
	}
	// a number may also be a street's: Route 9, 109 for 109th
	for _, suf := range []string{"th", "st", "nd", "rd"} {
		if id, ok := ix.vocab.find(t + suf); ok {
			tk.words = append(tk.words, wordMatch{id: uint32(id), score: sOrd})
		}
	}
}

// joinedNumber is the key of the house number the first two words make
// together, -1 for none: a Queens number typed with a space (203 06,
// 87 64A, 211 1), or a number and its fraction (12 1/2, 227-16 1/2).
func (ix *Index) joinedNumber(toks []qtok) int {
	if len(toks) <= 2 || !toks[0].num {
		return -1
	}
	first, second := toks[0].text, toks[1].text
	digits := numberBase(second)
	switch {
	case isFraction(second):
		if id, ok := ix.nums.find(numberKey(first) + second); ok {
			return id
		}
	case numberBase(first) == first && len(digits) >= 1 && len(digits) <= 3 && len(second)-len(digits) <= 1 && isNumeric(second):
		if id, ok := ix.nums.find(first + second); ok {
			return id
		}
	}
	return -1
}

// Typos. A query word stands for the words within reach of it: one edit
// (a transposition is one) where either word has four letters or more,
// two where the indexed word has eight or more and the query's six. They
// are looked for even when the word itself is a word of the index (a
// typo can make another real word), first among the words of the
// streets the rest of the query found (its house number, ZIP, town,
// other words), which both restricts them to what the query is about and
// keeps the search small; across the whole vocabulary only for a word
// that matches nothing at all. Words with digits (109th) have none: a
// digit changed is another street.

// maxEdits is how many edits a query word of n bytes may carry.
func maxEdits(n int) int {
	if n >= 6 {
		return 2
	}
	return 1
}

// typoScore is the score of a word d edits from the query's, or 0 where
// the lengths do not allow d.
func typoScore(d, queryLen, wordLen int) float32 {
	switch {
	case d == 1 && max(queryLen, wordLen) >= 4:
		return sEdit1
	case d == 2 && wordLen >= 8 && queryLen >= 6:
		return sEdit2
	}
	return 0
}

// typos looks for w's typos across the vocabulary (the trie walk of
// fuzzy).
func (ix *Index) typos(tk *qtok, sc *scratch) {
	w := tk.typo
	ix.vocab.fuzzy(w, maxEdits(len(w)), &sc.rows, func(i, d int) {
		if s := typoScore(d, len(w), int(ix.vocab.off[i+1]-ix.vocab.off[i])); s > 0 {
			tk.words = append(tk.words, wordMatch{id: uint32(i), score: s, dist: uint8(d)})
		}
	})
}

// bestPerWord keeps each word once, at its best score, sorted by ID.
func bestPerWord(ws []wordMatch) []wordMatch {
	slices.SortFunc(ws, func(a, b wordMatch) int {
		if a.id != b.id {
			return int(a.id) - int(b.id)
		}
		if a.score != b.score {
			if a.score > b.score {
				return -1
			}
			return 1
		}
		return 0
	})
	return slices.CompactFunc(ws, func(a, b wordMatch) bool { return a.id == b.id })
}

// roleWeight is the weight of the best of a word's roles.
func roleWeight(r uint8) float32 {
	switch {
	case r&roleName != 0:
		return wName
	case r&roleCity != 0:
		return wCity
	case r&(roleType|roleDir) != 0:
		return wType
	case r&roleState != 0:
		return wState
	}
	return 0
}

// potential sets what a query word is worth where it matches best: a
// word the index does not know is worth nothing, so it costs no candidate
// anything.
func (ix *Index) potential(tk *qtok) {
	var pw float32
	city := true
	exact := slices.ContainsFunc(tk.words, func(w wordMatch) bool { return w.score == 1 })
	for _, w := range tk.words {
		if exact && w.score < 1 {
			continue // a word of the index is worth what it is, not what its typos would be
		}
		r := ix.role[w.id]
		if v := roleWeight(r) * w.score; v > pw {
			pw = v
		}
		if r&^roleCity != 0 {
			city = false
		}
	}
	if tk.preHi > tk.preLo {
		pw = max(pw, wName*sPrefix)
		city = false
	}
	if tk.num && (tk.numID >= 0 || tk.baseID >= 0 || tk.ends[0] >= 0 || tk.ends[1] >= 0 || tk.numPreHi > tk.numPreLo) {
		pw, city = max(pw, wNumber), false
	}
	if tk.zip && tk.zipID >= 0 || tk.zipPreHi > tk.zipPreLo {
		pw, city = max(pw, wZip), false
	}
	if tk.num && tk.text != "" && tk.numID < 0 && tk.baseID < 0 && tk.ends == [2]int{-1, -1} && tk.numPreHi <= tk.numPreLo {
		// a house number no address has: it still says the address is
		// not one of those found
		pw, city = max(pw, wNumber), false
	}
	if tk.unit {
		pw, city = max(pw, wUnit), false
	}
	tk.pw = pw
	tk.pwCity = city && pw > 0
}

// exact reports whether the query word is itself a word of the index
// (Worcester is a town, not a typo of Dorchester).
func (tk *qtok) exact() bool {
	return slices.ContainsFunc(tk.words, func(w wordMatch) bool { return w.score == 1 })
}

// wordScore is how well the query word matches vocabulary word id.
func (tk *qtok) wordScore(id uint32) (float32, uint8) {
	var best float32
	var dist uint8
	for _, w := range tk.words {
		if w.id == id {
			best, dist = w.score, w.dist
			break
		}
		if w.id > id {
			break
		}
	}
	if best < 1 && int(id) >= tk.preLo && int(id) < tk.preHi {
		best, dist = sPrefix, 0
	}
	return best, dist
}
