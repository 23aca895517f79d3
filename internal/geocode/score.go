package geocode

import (
	"math"
	"slices"
	"strings"

	"github.com/fleethub/fleethub/internal/geo"
)

// score matches every query word against street s: its name words, its
// locality, its house numbers.
func (ix *Index) score(qr *query, s uint32, focus *geo.Point) (group, bool) {
	g := group{street: s}
	st := ix.streetView(s)
	numTok, numScore, lo, hi := ix.houseNumber(qr, &st)
	g.lo, g.hi = lo, hi
	g.numMatched = numTok >= 0
	if g.numMatched && !(numTok == 0 && qr.joinedID >= 0 && int(ix.adNum[g.lo]) == qr.joinedID) {
		typed, text := qr.toks[numTok].text, Fold(ix.strs.at(int(ix.adNumText[g.lo])))
		g.asTyped = text == typed || qr.prefix && numTok == len(qr.toks)-1 && strings.HasPrefix(text, typed)
	}
	t := ix.matchWords(qr, &st, numTok, numScore, &g)
	placeWords(qr, &st, &t, &g, numTok)
	ix.leftOver(qr, &st, &t, &g)
	if t.got == 0 || t.den == 0 {
		return g, false
	}
	ix.confidence(qr, &st, &t, &g, focus)
	return g, true
}

// streetView is what scoring reads of one street: its name's words and
// their roles, its locality's words (the state's last) and ZIP, and its
// addresses [a0, a1).
type streetView struct {
	words     []uint32
	roles     []uint8
	lwords    []uint32
	hasCity   bool
	hasState  bool
	zipID     int
	hasZip    bool
	state     string // its state's USPS code, "" where unknown
	typeWord  []bool // the index's (see Index.typeWord)
	plainName bool   // its name has a word that is not a street type or direction: a type inside the name then weighs as a type (Avenue of Jamaica Avenue Eastbound Roadbed, not Manor of Manor Road)
	a0, a1    uint32
}

func (ix *Index) streetView(s uint32) streetView {
	loc := ix.stLoc[s]
	st := streetView{
		words:    ix.stWords.row(int(s)),
		roles:    ix.stRoles[ix.stWords.off[s]:ix.stWords.off[s+1]],
		lwords:   ix.locWords.row(int(loc)),
		hasCity:  ix.locCity[loc] != 0,
		hasState: ix.locState[loc] != 0,
		zipID:    int(ix.locZipID[loc]),
		hasZip:   ix.locZip[loc] != 0,
		state:    ix.locCode[loc],
		typeWord: ix.typeWord,
		a0:       ix.stAddr[s],
		a1:       ix.stAddr[s+1],
	}
	for j, w := range st.words {
		st.plainName = st.plainName || st.roles[j] == roleName && !ix.typeWord[w]
	}
	return st
}

// houseNumber finds the query's house number among the street's: the
// query word that says it (0 for the first two words joined), what it
// scores, and the addresses [lo, hi) that hold it; the word is -1 where
// the street has none of the query's numbers.
func (ix *Index) houseNumber(qr *query, st *streetView) (tok int, score float32, lo, hi uint32) {
	a0, a1 := st.a0, st.a1
	if qr.joinedID >= 0 {
		if lo, hi := numRange(ix.adNum[a0:a1], uint32(qr.joinedID)); lo < hi {
			return 0, wNumber, a0 + lo, a0 + hi
		}
	}
	for k := range qr.toks {
		tk := &qr.toks[k]
		if !tk.num {
			continue
		}
		if score, lo, hi, ok := ix.numberOf(tk, a0, a1); ok {
			return k, score, lo, hi
		}
	}
	return -1, 0, 0, 0
}

// numberOf finds number word tk among the house numbers of addresses
// [a0, a1): what it scores and the addresses that hold it, if any do. A
// range (100-110) is first the Queens number with its digits where the
// street has one, then either end, the first first; then come the
// numbers the last word of an autocomplete begins, then the leading
// digits (12 of 12A).
func (ix *Index) numberOf(tk *qtok, a0, a1 uint32) (score float32, lo, hi uint32, ok bool) {
	isRange := tk.ends != [2]int{-1, -1}
	exLo, exHi := uint32(0), uint32(0)
	if tk.numID >= 0 {
		exLo, exHi = numRange(ix.adNum[a0:a1], uint32(tk.numID))
		if exLo < exHi && (!isRange || ix.hyphenated(a0+exLo)) {
			return wNumber, a0 + exLo, a0 + exHi, true
		}
	}
	if isRange {
		for _, e := range tk.ends {
			if e < 0 {
				continue
			}
			if lo, hi := numRange(ix.adNum[a0:a1], uint32(e)); lo < hi {
				return sRange * wNumber, a0 + lo, a0 + hi, true
			}
		}
		if exLo < exHi {
			return sRange * wNumber, a0 + exLo, a0 + exHi, true
		}
	}
	if tk.numPreHi > tk.numPreLo {
		lo, _ := numRange(ix.adNum[a0:a1], uint32(tk.numPreLo))
		if a0+lo < a1 && int(ix.adNum[a0+lo]) < tk.numPreHi {
			hi := lo
			for a0+hi < a1 && ix.adNum[a0+hi] == ix.adNum[a0+lo] {
				hi++
			}
			return sPrefix * wNumber, a0 + lo, a0 + hi, true
		}
	}
	if tk.baseID >= 0 {
		if lo, hi := numRange(ix.adNum[a0:a1], uint32(tk.baseID)); lo < hi {
			return sBase * wNumber, a0 + lo, a0 + hi, true
		}
	}
	return 0, 0, 0, false
}

// wordTally is what a street's words answer of a query: the score got
// and the most it could have been (den), the share of the street's name
// said, and the order the street's words were said in.
type wordTally struct {
	got, den      float32
	matched       wordSet // the query words the street matches
	nameGot       float32 // name words said count one, other street words half
	nameAll       float32 // the same, of all the street's words
	namesSaid     int     // name words said
	namesAll      int     // name words
	lastStreetTok int     // the last query word that said a street word, -1
	nextWord      int     // the street word the query's next street word should be
	inOrder       bool    // the street words said are in the name's order, from its first
}

// matchWords scores every query word against the street's words, its
// locality and its ZIP (the house number's word scores numScore), and
// marks in g the words the street leaves unmatched.
func (ix *Index) matchWords(qr *query, st *streetView, numTok int, numScore float32, g *group) wordTally {
	t := wordTally{lastStreetTok: -1, inOrder: true}
	for _, r := range st.roles {
		if r == roleName {
			t.nameAll++
			t.namesAll++
		} else {
			t.nameAll += 0.5
		}
	}
	cityPart := st.cityPart(qr)
	var said [16]bool                       // street words the query said
	var town [16]struct{ got, den float32 } // the words matched in the locality
	firstStreetTok := -1                    // the first query word that said a street word
	joined := numTok == 0 && qr.joinedID >= 0
	for k := range qr.toks {
		tk := &qr.toks[k]
		if tk.pw == 0 && !(k == 1 && joined) {
			continue
		}
		var best, bestDen float32
		if k == numTok || (k == 1 && joined) {
			best, bestDen = numScore, wNumber
		}
		best, bestDen, bestWord := st.bestWord(tk, best, bestDen, cityPart)
		if best == 0 {
			g.unmatched = g.unmatched.with(k)
			continue
		}
		t.got += best
		t.den += bestDen
		t.matched = t.matched.with(k)
		if bestWord < 0 && k < len(town) {
			town[k].got, town[k].den = best, bestDen
		}
		if bestWord >= 0 {
			if firstStreetTok < 0 {
				firstStreetTok = k
			}
			t.lastStreetTok = k
			t.inOrder = t.inOrder && bestWord == t.nextWord
			t.nextWord = bestWord + 1
		}
		if bestWord >= 0 && bestWord < len(said) && !said[bestWord] {
			said[bestWord] = true
			if st.roles[bestWord] == roleName {
				t.nameGot++
				t.namesSaid++
			} else {
				t.nameGot += 0.5
			}
		}
	}
	// A word between the house number and the first word of the street
	// is part of the street the query names, not its town: Hollis of
	// "203-06 Hollis Ave" on Murdock Avenue in the town of Hollis is a
	// street word the street lacks (leftOver weighs it as one), so the
	// street named, at its nearest number, comes before that address.
	// Town words after the street's first word stay the town's (Manchester
	// of "82 Queen Court, Manchester, CT", CT also read as Court).
	for k := numTok + 1; k < firstStreetTok && k < len(town); k++ {
		if town[k].den == 0 || !t.matched.has(k) || k == 1 && joined || qr.toks[k].zip || !ix.nameWord(&qr.toks[k]) {
			continue
		}
		t.got -= town[k].got
		t.den -= town[k].den
		t.matched = t.matched.without(k)
		g.unmatched = g.unmatched.with(k)
	}
	return t
}

// cityPart is what the locality's city words weigh: a city named in part
// (Queens of Queens Village) counts half.
func (st *streetView) cityPart(qr *query) float32 {
	nCity := len(st.lwords)
	if st.hasState {
		nCity--
	}
	for _, w := range st.lwords[:max(nCity, 0)] {
		found := false
		for k := range qr.toks {
			if sc, _ := qr.toks[k].wordScore(w); sc > 0 {
				found = true
				break
			}
		}
		if !found {
			return 0.5
		}
	}
	return 1
}

// bestWord is query word tk's best match on the street, starting from
// best of bestDen (what it scores as the house number, or 0): among the
// street's words, its locality's and its ZIP. It returns the score, the
// most it could have been, and the street word matched, -1 for none or
// for the locality.
func (st *streetView) bestWord(tk *qtok, best, bestDen, cityPart float32) (float32, float32, int) {
	bestWord := -1
	for j, w := range st.words {
		sc, _ := tk.wordScore(w)
		if sc == 0 {
			continue
		}
		rw := float32(wName)
		if st.roles[j] != roleName || st.plainName && st.typeWord[w] {
			rw = wType // Avenue of Jamaica Avenue Eastbound Roadbed
		}
		if sc*rw > best {
			best, bestDen, bestWord = sc*rw, rw, j
		}
	}
	for j, w := range st.lwords {
		sc, _ := tk.wordScore(w)
		if sc == 0 {
			continue
		}
		rw := float32(wCity) * cityPart
		if st.hasState && j == len(st.lwords)-1 {
			rw = wState
		}
		if sc*rw > best {
			best, bestDen, bestWord = sc*rw, rw, -1
		}
	}
	if tk.zip && tk.zipID >= 0 && tk.zipID == st.zipID && wZip > best {
		best, bestDen, bestWord = wZip, wZip, -1
	}
	if tk.zipPreHi > tk.zipPreLo && st.zipID >= tk.zipPreLo && st.zipID < tk.zipPreHi && sPrefix*wZip > best {
		best, bestDen, bestWord = sPrefix*wZip, wZip, -1
	}
	return best, bestDen, bestWord
}

// placeWords settles the query's state and ZIPs that the street's words
// left over: a state (by code or name, see lastState) or a five-digit
// ZIP after the street that is not the street's contradicts it, whether
// or not the index knows that state or ZIP, and weighs what it would
// have matched; a state named otherwise than the index has it (New York
// for NY) counts as the street's state. Neither is then a town.
func placeWords(qr *query, st *streetView, t *wordTally, g *group, numTok int) {
	if m := qr.state; m.n > 0 && m.at > t.lastStreetTok && st.state != "" {
		free := true
		for k := m.at; k < m.at+m.n; k++ {
			free = free && !t.matched.has(k)
		}
		if free {
			for k := m.at; k < m.at+m.n; k++ {
				g.unmatched = g.unmatched.without(k)
			}
			t.den += wState
			if m.code == st.state {
				t.got += wState
				t.matched = t.matched.with(m.at)
			} else {
				g.contra = g.contra.with(m.at)
			}
		}
	}
	if !st.hasZip {
		return
	}
	for k := range qr.toks {
		tk := &qr.toks[k]
		if !tk.zip || tk.afterUnit || k == numTok || t.matched.has(k) || tk.num && k <= t.lastStreetTok || qr.prefix && k == len(qr.toks)-1 {
			continue
		}
		g.unmatched = g.unmatched.without(k)
		g.contra = g.contra.with(k)
		t.den += wZip
	}
}

// leftOver adds to t.den what the words left over cost: a town the rows
// do not name counts half, and nothing where the locality has no city at
// all; so does a word after the whole street name that is not a number
// (Queens of "… 109th Avenue, Queens, NY", a word of other streets too).
// It marks in g the words that may name the street's town.
func (ix *Index) leftOver(qr *query, st *streetView, t *wordTally, g *group) {
	streetDone := t.namesSaid == t.namesAll
	for k := range qr.toks {
		if !g.unmatched.has(k) {
			continue
		}
		tk := &qr.toks[k]
		d := tk.pw
		if tk.pwCity || streetDone && k > t.lastStreetTok && !tk.num && !tk.zip && !tk.unit && !ix.exactRole(tk, roleType|roleDir|roleState) {
			g.townish = g.townish.with(k)
			d = min(d, wCity) * 0.5
			if !st.hasCity {
				d = 0
			}
		} else if !tk.num && !tk.zip && !tk.unit && ix.nameWord(tk) {
			g.nameMissed = true
		}
		t.den += d
	}
}

// nameWord reports whether a query word names a street (Jamaica), by the
// index's words it stands for or, being typed, begins: not a street type,
// direction or state, whatever else it also is.
func (ix *Index) nameWord(tk *qtok) bool {
	if tk.preHi > tk.preLo {
		return true
	}
	if ix.exactRole(tk, roleType|roleDir|roleState) {
		return false
	}
	exact := tk.exact()
	for _, w := range tk.words {
		if (!exact || w.score == 1) && ix.role[w.id]&roleName != 0 {
			return true
		}
	}
	return false
}

// confidence settles a scored street: its confidence, how complete the
// match is, the address shown when the house number is not found, and
// the distance to the focus.
func (ix *Index) confidence(qr *query, st *streetView, t *wordTally, g *group, focus *geo.Point) {
	g.got, g.den = t.got, t.den
	cover := float64(0)
	if t.nameAll > 0 {
		cover = float64(t.nameGot / t.nameAll)
	}
	conf := 0.9*float64(t.got/t.den) + 0.1*cover
	if g.contra != 0 {
		conf *= sContra
	}
	if g.nameMissed {
		conf *= sNameMissed
	}
	if qr.hasNum && !g.numMatched && numberWordLeft(qr, t, g) {
		g.numMissed = true
		conf *= 0.8
		// the nearest number is found when the street may rank among
		// those kept (rank, nearest): how near it is ranks the streets
		// that lack the number (before)
		g.lo, g.hi = st.a0, st.a0+1
	} else if !g.numMatched {
		g.lo, g.hi = st.a0, st.a0+1
		if focus != nil {
			g.lo = ix.nearestTo(st.a0, st.a1, *focus)
			g.hi = g.lo + 1
		}
	}
	g.conf = math.Round(min(conf, 1)*1000) / 1000
	g.inOrder = qr.prefix && t.inOrder && t.nextWord > 0
	g.complete = cover
	if g.numMatched {
		g.complete++
	}
	if focus != nil {
		g.dist = geo.Distance(*focus, geo.Point{Lat: float64(ix.adLat[g.lo]) / coordScale, Lon: float64(ix.adLon[g.lo]) / coordScale})
	}
}

// numberWordLeft reports whether the query has a word that says a house
// number (as qr.hasNum counts them) other than one this street (t) read
// as something else: its ZIP, a ZIP that contradicts it (g.contra), a word
// of its name (109 of 109th Avenue; in a search or a validation, not
// while an address is typed). "Braddock Avenue 11004" and "109 Ave" name
// no house number the street lacks.
func numberWordLeft(qr *query, t *wordTally, g *group) bool {
	for k := range qr.toks {
		tk := &qr.toks[k]
		if !tk.num || k > 0 && len(tk.words) > 0 || tk.zip && (t.matched.has(k) || g.contra.has(k)) {
			continue
		}
		if t.matched.has(k) && !qr.prefix {
			// while an address is typed a leading number is still most
			// likely its house number (58 of "58 Nor"): the autocomplete
			// ranks the streets that have it first
			continue
		}
		return true
	}
	return false
}

// numRange is the range of ids equal to id in sorted ids.
func numRange(ids []uint32, id uint32) (uint32, uint32) {
	lo, _ := slices.BinarySearch(ids, id)
	hi := lo
	for hi < len(ids) && ids[hi] == id {
		hi++
	}
	return uint32(lo), uint32(hi)
}

// hyphenated reports whether address a's house number is written with a
// hyphen (a Queens number, 90-01).
func (ix *Index) hyphenated(a uint32) bool {
	return strings.Contains(ix.strs.at(int(ix.adNumText[a])), "-")
}

// exactRole reports whether a query word is, exactly, a word of one of
// the roles somewhere: a street type or direction (Place, North) or a
// state (OH) is never a town.
func (ix *Index) exactRole(tk *qtok, roles uint8) bool {
	for _, w := range tk.words {
		if w.score == 1 && ix.role[w.id]&roles != 0 {
			return true
		}
	}
	return false
}
