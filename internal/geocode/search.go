package geocode

import (
	"cmp"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fleethub/fleethub/internal/geo"
)

// Match is a scored address.
type Match struct {
	Address    Address
	Confidence float64 // 0 to 1, rounded to three decimals
}

// Query is a search: the text, how many results, whether its last word is
// still being typed (autocomplete), and an optional point that breaks ties
// by distance.
type Query struct {
	Text   string
	Limit  int
	Prefix bool
	Focus  *geo.Point
}

// Search scores addresses against a free-text query, best first, at most
// limit of them.
func (ix *Index) Search(q string, limit int) []Match {
	return ix.Find(Query{Text: q, Limit: limit})
}

// Autocomplete is Search with the query's last word taken as a prefix,
// for a query still being typed.
func (ix *Index) Autocomplete(q string, limit int) []Match {
	return ix.Find(Query{Text: q, Limit: limit, Prefix: true})
}

// maxLimit bounds the results of one query.
const maxLimit = 1000

// Candidate limits. Streets are gathered from the query's words whose
// postings are at most genCap streets long (the cheapest word is used
// whatever its length), and the best topStreets of them are scored in
// full.
const (
	genCap     = 20000
	topStreets = 200
)

// scratch is one query's working memory, pooled per index.
type scratch struct {
	score   []float32 // per street
	tmp     []float32 // per street, one word's best
	touched []uint32
	tokHit  []uint32
	cand    []uint32
	seen    []uint32 // per vocabulary word: gen when looked at
	inCand  []uint32 // per street: gen when a candidate
	pool    []uint32
	gen     uint32
	rows    []uint8
}

func (ix *Index) getScratch() *scratch {
	if sc, ok := ix.pool.Get().(*scratch); ok {
		return sc
	}
	n := len(ix.stName)
	return &scratch{score: make([]float32, n), tmp: make([]float32, n)}
}

func (ix *Index) putScratch(sc *scratch) {
	for _, s := range sc.touched {
		sc.score[s] = 0
	}
	sc.touched = sc.touched[:0]
	ix.pool.Put(sc)
}

// group is a street scored against a query, with the addresses that
// answer it.
type group struct {
	street     uint32
	conf       float64
	complete   float64 // house number found, share of the street's name said
	dist       float64 // meters to the focus, or 0
	lo, hi     uint32  // addresses holding the house number, or the nearest one
	numMatched bool
	numMissed  bool // the query names a house number the street lacks
	asTyped    bool // the house number is written as the query writes it (21323, not 213-23)
	inOrder    bool // an autocomplete whose street words are the street name's first words, in order
	got, den   float32
	unmatched  wordSet // query words this street leaves unmatched
	townish    wordSet // the unmatched words that may name its town
}

// Find runs a query.
func (ix *Index) Find(q Query) []Match {
	if q.Limit <= 0 || ix.Len() == 0 {
		return nil
	}
	q.Limit = min(q.Limit, maxLimit)
	sc := ix.getScratch()
	defer ix.putScratch(sc)
	qr := ix.parse(q.Text, q.Prefix, sc)
	gs := ix.rank(&qr, sc, q.Focus, q.Limit)
	return ix.results(&qr, gs, q.Limit)
}

// rank gathers candidate streets and scores them, best first.
func (ix *Index) rank(qr *query, sc *scratch, focus *geo.Point, keep int) []group {
	if len(qr.toks) == 0 {
		return nil
	}
	ix.gather(qr, sc)
	cand := ix.candidates(sc)
	if ix.nearTypos(qr, cand, sc) {
		cand = ix.candidates(sc)
	}
	// the best keep groups, kept sorted by insertion: each answers at
	// least one result, so no more are ever shown
	gs := make([]group, 0, keep+1)
	for _, s := range cand {
		g, ok := ix.score(qr, s, focus)
		if !ok || len(gs) == keep && ix.before(&gs[keep-1], &g) {
			continue
		}
		i := sort.Search(len(gs), func(i int) bool { return ix.before(&g, &gs[i]) })
		gs = slices.Insert(gs, i, g)
		if len(gs) > keep {
			gs = gs[:keep]
		}
	}
	return gs
}

// before orders streets: confidence, then completeness (the house number
// found, the share of the name said), then distance to the focus point,
// then the house number written as the query writes it (21323 before
// 213-23), then, in an autocomplete, the street whose name the query's
// words begin in order (1001 Northwe is more likely Northwest 104th Street
// than 6th Street Northwest), then the more address points with the house
// number, then the longer street; never by name.
func (ix *Index) before(a, b *group) bool {
	return cmp.Or(-cmp.Compare(a.conf, b.conf), -cmp.Compare(a.complete, b.complete), cmp.Compare(a.dist, b.dist),
		-cmp.Compare(b2i(a.asTyped), b2i(b.asTyped)), -cmp.Compare(b2i(a.inOrder), b2i(b.inOrder)),
		-cmp.Compare(a.hi-a.lo, b.hi-b.lo), -cmp.Compare(ix.streetSize(int(a.street)), ix.streetSize(int(b.street))),
		cmp.Compare(a.street, b.street)) < 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// candidates are the best topStreets streets gathered so far.
func (ix *Index) candidates(sc *scratch) []uint32 {
	cand := append(sc.cand[:0], sc.touched...)
	if len(cand) > topStreets {
		selectTop(cand, sc.score, topStreets)
		cand = cand[:topStreets]
	}
	sc.cand = cand
	return cand
}

// typoPool bounds the streets whose words typos are looked for among:
// the candidates and the streets tied with the last of them.
const typoPool = 5000

// nearTypos finds the query words' typos among the words of the
// candidate streets (with those tied with the last candidate) and of
// their towns, and adds what they match to those streets' scores; across
// the vocabulary for a word that matched nothing there. It reports
// whether the scores changed.
func (ix *Index) nearTypos(qr *query, cand []uint32, sc *scratch) bool {
	any := false
	for k := range qr.toks {
		any = any || qr.toks[k].typo != ""
	}
	if !any {
		return false
	}
	// a word the index does not have is most likely the typo: only then
	// are the streets tied with the last candidate looked at too
	unknown := false
	exact := make([]bool, len(qr.toks))
	for k := range qr.toks {
		tk := &qr.toks[k]
		exact[k] = slices.ContainsFunc(tk.words, func(w wordMatch) bool { return w.score == 1 })
		unknown = unknown || tk.typo != "" && !exact[k]
	}
	pool := cand
	if len(cand) == topStreets && unknown {
		cut := sc.score[cand[0]]
		for _, s := range cand {
			cut = min(cut, sc.score[s])
		}
		sc.gen++
		if len(sc.inCand) < len(ix.stName) {
			sc.inCand = make([]uint32, len(ix.stName))
		}
		for _, s := range cand {
			sc.inCand[s] = sc.gen
		}
		pool = append(sc.pool[:0], cand...)
		for _, s := range sc.touched {
			if len(pool) >= typoPool {
				break
			}
			if sc.score[s] == cut && sc.inCand[s] != sc.gen {
				pool = append(pool, s)
			}
		}
		sc.pool = pool
	}
	sc.gen++
	if len(sc.seen) < ix.vocab.len() {
		sc.seen = make([]uint32, ix.vocab.len())
	}
	found := make([]int, len(qr.toks)) // typo matches per word, first found here
	for k := range qr.toks {
		found[k] = len(qr.toks[k].words)
	}
	inCand := true // the candidates first; past them, only the words the index lacks
	look := func(w uint32) {
		if sc.seen[w] == sc.gen {
			return
		}
		sc.seen[w] = sc.gen
		word := ix.vocab.at(int(w))
		for k := range qr.toks {
			tk := &qr.toks[k]
			if tk.typo == "" || word == tk.typo || !inCand && exact[k] {
				continue
			}
			maxd := maxEdits(len(tk.typo))
			if d := osaWithin(tk.typo, word, maxd); d <= maxd {
				if s := typoScore(d, len(tk.typo), len(word)); s > 0 {
					tk.words = append(tk.words, wordMatch{id: w, score: s, dist: uint8(d)})
				}
			}
		}
	}
	lastLoc := ^uint32(0)
	for i, s := range pool {
		if i == len(cand) {
			inCand = false
			sc.gen++ // words seen among the candidates are looked at again, for fewer query words
		}
		for _, w := range ix.stWords.row(int(s)) {
			look(w)
		}
		if l := ix.stLoc[s]; l != lastLoc {
			lastLoc = l
			for _, w := range ix.locWords.row(int(l)) {
				look(w)
			}
		}
	}
	changed := false
	// what the typos found add to the pool's streets
	for k := range qr.toks {
		tk := &qr.toks[k]
		typos := tk.words[found[k]:]
		if len(typos) == 0 {
			continue
		}
		changed = true
		for _, s := range pool {
			var best float32
			for _, w := range ix.stWords.row(int(s)) {
				for _, m := range typos {
					if m.id == w && m.score > best {
						best = m.score
					}
				}
			}
			if best > 0 {
				if sc.score[s] == 0 {
					sc.touched = append(sc.touched, s)
				}
				sc.score[s] += best * wName
			}
		}
	}
	for k := range qr.toks {
		tk := &qr.toks[k]
		if tk.typo == "" {
			continue
		}
		if len(tk.words) == 0 {
			ix.typos(tk, sc)
			if len(tk.words) > 0 {
				tk.words = bestPerWord(tk.words)
				ix.post(qr, k, sc)
				changed = true
			}
		}
		tk.words = bestPerWord(tk.words)
		ix.potential(tk)
	}
	return changed
}

// gather accumulates, per street, each query word's best match found
// through the postings: words, house numbers, ZIPs and cities.
func (ix *Index) gather(qr *query, sc *scratch) {
	type source struct {
		k    int
		cost int
	}
	srcs := make([]source, 0, len(qr.toks))
	for k := range qr.toks {
		if c := ix.cost(qr, k); c > 0 {
			srcs = append(srcs, source{k, c})
		}
	}
	if len(srcs) == 0 {
		return
	}
	cheapest := slices.MinFunc(srcs, func(a, b source) int { return cmp.Compare(a.cost, b.cost) })
	for _, s := range srcs {
		if s.cost <= genCap || s.k == cheapest.k {
			ix.post(qr, s.k, sc)
		}
	}
}

// cost is how many streets word k's postings hold.
func (ix *Index) cost(qr *query, k int) int {
	tk := &qr.toks[k]
	n := 0
	for _, w := range tk.words {
		n += len(ix.wordStreets.row(int(w.id)))
		for _, l := range ix.wordLocs.row(int(w.id)) {
			n += int(ix.locStreets[l+1] - ix.locStreets[l])
		}
	}
	if tk.preHi > tk.preLo {
		n += int(ix.wordStreets.off[tk.preHi] - ix.wordStreets.off[tk.preLo])
		for _, l := range ix.wordLocs.val[ix.wordLocs.off[tk.preLo]:ix.wordLocs.off[tk.preHi]] {
			n += int(ix.locStreets[l+1] - ix.locStreets[l])
		}
	}
	if tk.numID >= 0 {
		n += len(ix.numStreets.row(tk.numID))
	}
	if tk.baseID >= 0 {
		n += len(ix.numStreets.row(tk.baseID))
	}
	for _, e := range tk.ends {
		if e >= 0 {
			n += len(ix.numStreets.row(e))
		}
	}
	if tk.numPreHi > tk.numPreLo {
		n += int(ix.numStreets.off[tk.numPreHi] - ix.numStreets.off[tk.numPreLo])
	}
	if k == 1 && qr.joinedID >= 0 {
		n += len(ix.numStreets.row(qr.joinedID))
	}
	if tk.zipID >= 0 {
		for _, l := range ix.zipLocs.row(tk.zipID) {
			n += int(ix.locStreets[l+1] - ix.locStreets[l])
		}
	}
	if tk.zipPreHi > tk.zipPreLo {
		for _, l := range ix.zipLocs.val[ix.zipLocs.off[tk.zipPreLo]:ix.zipLocs.off[tk.zipPreHi]] {
			n += int(ix.locStreets[l+1] - ix.locStreets[l])
		}
	}
	return n
}

// post adds word k's postings to the street scores.
func (ix *Index) post(qr *query, k int, sc *scratch) {
	tk := &qr.toks[k]
	sc.tokHit = sc.tokHit[:0]
	hit := func(s uint32, v float32) {
		if sc.tmp[s] == 0 {
			sc.tokHit = append(sc.tokHit, s)
		}
		if v > sc.tmp[s] {
			sc.tmp[s] = v
		}
	}
	streetsOf := func(l uint32, v float32) {
		for s := ix.locStreets[l]; s < ix.locStreets[l+1]; s++ {
			hit(s, v)
		}
	}
	for _, w := range tk.words {
		r := ix.role[w.id]
		v := w.score * roleWeight(r&^(roleCity|roleState))
		for _, s := range ix.wordStreets.row(int(w.id)) {
			hit(s, v)
		}
		if r&(roleCity|roleState) != 0 {
			v := w.score * roleWeight(r&(roleCity|roleState))
			for _, l := range ix.wordLocs.row(int(w.id)) {
				streetsOf(l, v)
			}
		}
	}
	if tk.preHi > tk.preLo {
		for _, s := range ix.wordStreets.val[ix.wordStreets.off[tk.preLo]:ix.wordStreets.off[tk.preHi]] {
			hit(s, sPrefix*wName)
		}
		for _, l := range ix.wordLocs.val[ix.wordLocs.off[tk.preLo]:ix.wordLocs.off[tk.preHi]] {
			streetsOf(l, sPrefix*wCity)
		}
	}
	if tk.numID >= 0 {
		for _, s := range ix.numStreets.row(tk.numID) {
			hit(s, wNumber)
		}
	}
	if tk.baseID >= 0 {
		for _, s := range ix.numStreets.row(tk.baseID) {
			hit(s, sBase*wNumber)
		}
	}
	for _, e := range tk.ends {
		if e >= 0 {
			for _, s := range ix.numStreets.row(e) {
				hit(s, sRange*wNumber)
			}
		}
	}
	if tk.numPreHi > tk.numPreLo {
		for _, s := range ix.numStreets.val[ix.numStreets.off[tk.numPreLo]:ix.numStreets.off[tk.numPreHi]] {
			hit(s, sPrefix*wNumber)
		}
	}
	if k == 1 && qr.joinedID >= 0 {
		for _, s := range ix.numStreets.row(qr.joinedID) {
			hit(s, 2*wNumber)
		}
	}
	if tk.zipID >= 0 {
		for _, l := range ix.zipLocs.row(tk.zipID) {
			streetsOf(l, wZip)
		}
	}
	if tk.zipPreHi > tk.zipPreLo {
		for _, l := range ix.zipLocs.val[ix.zipLocs.off[tk.zipPreLo]:ix.zipLocs.off[tk.zipPreHi]] {
			streetsOf(l, sPrefix*wZip)
		}
	}
	for _, s := range sc.tokHit {
		if sc.score[s] == 0 {
			sc.touched = append(sc.touched, s)
		}
		sc.score[s] += sc.tmp[s]
		sc.tmp[s] = 0
	}
}

// selectTop moves the n best-scored streets to the front of ids
// (quickselect; the front is not sorted).
func selectTop(ids []uint32, score []float32, n int) {
	lo, hi := 0, len(ids)-1
	for lo < hi {
		p := score[ids[(lo+hi)/2]]
		i, j := lo, hi
		for i <= j {
			for score[ids[i]] > p {
				i++
			}
			for score[ids[j]] < p {
				j--
			}
			if i <= j {
				ids[i], ids[j] = ids[j], ids[i]
				i++
				j--
			}
		}
		switch {
		case n-1 <= j:
			hi = j
		case n-1 >= i:
			lo = i
		default:
			return
		}
	}
}

// score matches every query word against street s: its name words, its
// locality, its house numbers.
func (ix *Index) score(qr *query, s uint32, focus *geo.Point) (group, bool) {
	g := group{street: s}
	loc := ix.stLoc[s]
	words, roles := ix.stWords.row(int(s)), ix.stRoles[ix.stWords.off[s]:ix.stWords.off[s+1]]
	lwords := ix.locWords.row(int(loc))
	hasCity := ix.locCity[loc] != 0
	hasState := ix.locState[loc] != 0
	zipID := int(ix.locZipID[loc])
	a0, a1 := ix.stAddr[s], ix.stAddr[s+1]

	// the house number
	numTok := -1
	var numScore float32
	if qr.joinedID >= 0 {
		if lo, hi := numRange(ix.adNum[a0:a1], uint32(qr.joinedID)); lo < hi {
			numTok, numScore, g.lo, g.hi = 0, wNumber, a0+lo, a0+hi
		}
	}
	for k := range qr.toks {
		if numTok >= 0 {
			break
		}
		tk := &qr.toks[k]
		if !tk.num {
			continue
		}
		// a range (100-110) is first the Queens number with its digits
		// where the street has one, then either end, the first first
		isRange := tk.ends != [2]int{-1, -1}
		exLo, exHi := uint32(0), uint32(0)
		if tk.numID >= 0 {
			exLo, exHi = numRange(ix.adNum[a0:a1], uint32(tk.numID))
			if exLo < exHi && (!isRange || ix.hyphenated(a0+exLo)) {
				numTok, numScore, g.lo, g.hi = k, wNumber, a0+exLo, a0+exHi
				break
			}
		}
		if isRange {
			for _, e := range tk.ends {
				if e < 0 {
					continue
				}
				if lo, hi := numRange(ix.adNum[a0:a1], uint32(e)); lo < hi {
					numTok, numScore, g.lo, g.hi = k, sRange*wNumber, a0+lo, a0+hi
					break
				}
			}
			if numTok < 0 && exLo < exHi {
				numTok, numScore, g.lo, g.hi = k, sRange*wNumber, a0+exLo, a0+exHi
			}
			if numTok >= 0 {
				break
			}
		}
		if tk.numPreHi > tk.numPreLo {
			lo, _ := numRange(ix.adNum[a0:a1], uint32(tk.numPreLo))
			if a0+lo < a1 && int(ix.adNum[a0+lo]) < tk.numPreHi {
				hi := lo
				for a0+hi < a1 && ix.adNum[a0+hi] == ix.adNum[a0+lo] {
					hi++
				}
				numTok, numScore, g.lo, g.hi = k, sPrefix*wNumber, a0+lo, a0+hi
				break
			}
		}
		if tk.baseID >= 0 {
			if lo, hi := numRange(ix.adNum[a0:a1], uint32(tk.baseID)); lo < hi {
				numTok, numScore, g.lo, g.hi = k, sBase*wNumber, a0+lo, a0+hi
				break
			}
		}
	}
	g.numMatched = numTok >= 0
	if g.numMatched && !(numTok == 0 && qr.joinedID >= 0 && int(ix.adNum[g.lo]) == qr.joinedID) {
		typed, text := qr.toks[numTok].text, Fold(ix.strs.at(int(ix.adNumText[g.lo])))
		g.asTyped = text == typed || qr.prefix && numTok == len(qr.toks)-1 && strings.HasPrefix(text, typed)
	}

	var got, den float32
	var nameGot, nameAll float32
	for _, r := range roles {
		if r == roleName {
			nameAll++
		} else {
			nameAll += 0.5
		}
	}
	// a city named in part (Queens of Queens Village) counts half
	cityPart := float32(1)
	nCity := len(lwords)
	if hasState {
		nCity--
	}
	for _, w := range lwords[:max(nCity, 0)] {
		found := false
		for k := range qr.toks {
			if sc, _ := qr.toks[k].wordScore(w); sc > 0 {
				found = true
				break
			}
		}
		if !found {
			cityPart = 0.5
		}
	}
	var said [16]bool // street words the query said
	lastStreetTok, namesSaid, namesAll := -1, 0, 0
	nextWord, inOrder := 0, true // the street word the query's next street word should be
	for _, r := range roles {
		if r == roleName {
			namesAll++
		}
	}
	for k := range qr.toks {
		tk := &qr.toks[k]
		if tk.pw == 0 && !(k == 1 && numTok == 0 && qr.joinedID >= 0) {
			continue
		}
		var best, bestDen float32
		bestWord := -1
		if k == numTok || (k == 1 && numTok == 0 && qr.joinedID >= 0) {
			best, bestDen = numScore, wNumber
		}
		for j, w := range words {
			sc, _ := tk.wordScore(w)
			if sc == 0 {
				continue
			}
			rw := float32(wName)
			if roles[j] != roleName {
				rw = wType
			}
			if sc*rw > best {
				best, bestDen, bestWord = sc*rw, rw, j
			}
		}
		for j, w := range lwords {
			sc, _ := tk.wordScore(w)
			if sc == 0 {
				continue
			}
			rw := float32(wCity) * cityPart
			if hasState && j == len(lwords)-1 {
				rw = wState
			}
			if sc*rw > best {
				best, bestDen, bestWord = sc*rw, rw, -1
			}
		}
		if tk.zip && tk.zipID >= 0 && tk.zipID == zipID && wZip > best {
			best, bestDen, bestWord = wZip, wZip, -1
		}
		if tk.zipPreHi > tk.zipPreLo && zipID >= tk.zipPreLo && zipID < tk.zipPreHi && sPrefix*wZip > best {
			best, bestDen, bestWord = sPrefix*wZip, wZip, -1
		}
		if best == 0 {
			g.unmatched = g.unmatched.with(k)
			continue
		}
		got += best
		den += bestDen
		if bestWord >= 0 {
			lastStreetTok = k
			inOrder = inOrder && bestWord == nextWord
			nextWord = bestWord + 1
		}
		if bestWord >= 0 && bestWord < len(said) && !said[bestWord] {
			said[bestWord] = true
			if roles[bestWord] == roleName {
				nameGot++
				namesSaid++
			} else {
				nameGot += 0.5
			}
		}
	}
	// what the words left over cost: a town the rows do not name counts
	// half, and nothing where the locality has no city at all; so does a
	// word after the whole street name that is not a number (Queens of
	// "… 109th Avenue, Queens, NY", a word of other streets too)
	streetDone := namesSaid == namesAll
	for k := range qr.toks {
		if !g.unmatched.has(k) {
			continue
		}
		tk := &qr.toks[k]
		d := tk.pw
		if tk.pwCity || streetDone && k > lastStreetTok && !tk.num && !tk.zip && !tk.unit && !ix.exactRole(tk, roleType|roleDir|roleState) {
			g.townish = g.townish.with(k)
			d = min(d, wCity) * 0.5
			if !hasCity {
				d = 0
			}
		}
		den += d
	}
	if got == 0 || den == 0 {
		return g, false
	}
	g.got, g.den = got, den
	cover := float64(0)
	if nameAll > 0 {
		cover = float64(nameGot / nameAll)
	}
	conf := 0.9*float64(got/den) + 0.1*cover
	if qr.hasNum && !g.numMatched {
		g.numMissed = true
		conf *= 0.8
		g.lo, g.hi = a0, a0+1 // the nearest number, found if the street is shown (answer)
	} else if !g.numMatched {
		g.lo, g.hi = a0, a0+1
		if focus != nil {
			g.lo = ix.nearestTo(a0, a1, *focus)
			g.hi = g.lo + 1
		}
	}
	g.conf = math.Round(min(conf, 1)*1000) / 1000
	g.inOrder = qr.prefix && inOrder && nextWord > 0
	g.complete = cover
	if g.numMatched {
		g.complete++
	}
	if focus != nil {
		g.dist = geo.Distance(*focus, geo.Point{Lat: float64(ix.adLat[g.lo]) / coordScale, Lon: float64(ix.adLon[g.lo]) / coordScale})
	}
	return g, true
}

// answer settles the address of a street whose house numbers do not
// hold the query's: the nearest number.
func (ix *Index) answer(qr *query, g *group) {
	if g.numMissed {
		g.lo = ix.nearestNumber(ix.stAddr[g.street], ix.stAddr[g.street+1], qr)
		g.hi = g.lo + 1
	}
}

// wordSet is a set of a query's words by position (maxQueryTokens ≤ 32).
type wordSet uint32

func (w wordSet) with(k int) wordSet { return w | 1<<k }
func (w wordSet) has(k int) bool     { return w&(1<<k) != 0 }

// numRange is the range of ids equal to id in sorted ids.
func numRange(ids []uint32, id uint32) (uint32, uint32) {
	lo, _ := slices.BinarySearch(ids, id)
	hi := lo
	for hi < len(ids) && ids[hi] == id {
		hi++
	}
	return uint32(lo), uint32(hi)
}

// nearestNumber is the address of [a0, a1) whose house number is closest
// to the query's (to a range's numbers, for a range).
func (ix *Index) nearestNumber(a0, a1 uint32, qr *query) uint32 {
	lo, hi := int64(-1), int64(-1)
	for _, tk := range qr.toks {
		if tk.num {
			lo = numberValue(numberKey(tk.text))
			hi = lo
			if a, b, ok := numberRange(tk.text); ok {
				lo, hi = numberValue(a), numberValue(b)
			}
			break
		}
	}
	best, bestD := a0, int64(math.MaxInt64)
	for a := a0; a < a1; a++ {
		v := numberValue(ix.nums.at(int(ix.adNum[a])))
		d := int64(0)
		switch {
		case v < lo:
			d = lo - v
		case v > hi:
			d = v - hi
		}
		if d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// hyphenated reports whether address a's house number is written with a
// hyphen (a Queens number, 90-01).
func (ix *Index) hyphenated(a uint32) bool {
	return strings.Contains(ix.strs.at(int(ix.adNumText[a])), "-")
}

// nearestTo is the address of [a0, a1) closest to p.
func (ix *Index) nearestTo(a0, a1 uint32, p geo.Point) uint32 {
	best, bestD := a0, math.Inf(1)
	for a := a0; a < a1; a++ {
		if d := geo.Distance(p, geo.Point{Lat: float64(ix.adLat[a]) / coordScale, Lon: float64(ix.adLon[a]) / coordScale}); d < bestD {
			best, bestD = a, d
		}
	}
	return best
}

// results turns ranked streets into addresses: first each street's best
// answer (the address with the house number whose unit the query best
// matches, or the nearest number), so that the first few results are as
// many streets; then the streets' other addresses with the number (other
// units); then, while the limit allows, their other addresses. The same
// text is shown once, and a confidence never rises down the list.
func (ix *Index) results(qr *query, gs []group, limit int) []Match {
	out := make([]Match, 0, limit)
	add := func(a uint32, conf float64) bool {
		if len(out) >= limit {
			return false
		}
		addr := ix.address(int(a))
		for _, m := range out {
			if m.Address.Text == addr.Text {
				return true
			}
		}
		if n := len(out); n > 0 {
			conf = min(conf, out[n-1].Confidence)
		}
		out = append(out, Match{Address: addr, Confidence: conf})
		return true
	}
	answers := make([][]scoredAddr, len(gs))
	for i := range gs {
		ix.answer(qr, &gs[i])
		answers[i] = ix.byUnit(qr, &gs[i])
		if !add(answers[i][0].addr, answers[i][0].conf) {
			return out
		}
	}
	for i := range gs {
		for _, a := range answers[i][1:] {
			if !add(a.addr, a.conf) {
				return out
			}
		}
	}
	for i := range gs {
		g := &gs[i]
		conf := math.Round(g.conf*500) / 1000
		if !g.numMatched && !g.numMissed {
			conf = math.Round(g.conf*900) / 1000
		}
		for a := ix.stAddr[g.street]; a < ix.stAddr[g.street+1]; a++ {
			if a >= g.lo && a < g.hi {
				continue
			}
			if !add(a, conf) {
				return out
			}
		}
	}
	return out
}

// inUnit reports whether a query word is one of a unit's words (E and
// East alike).
func inUnit(unitWords []string, w string) bool {
	x, ok := abbrev[w]
	return slices.Contains(unitWords, w) || ok && slices.Contains(unitWords, x)
}

type scoredAddr struct {
	addr uint32
	conf float64
}

// byUnit orders a street's answering addresses by how well their unit
// matches the query's words the street left unmatched.
func (ix *Index) byUnit(qr *query, g *group) []scoredAddr {
	out := make([]scoredAddr, 0, g.hi-g.lo)
	for a := g.lo; a < g.hi; a++ {
		conf := g.conf
		unit := ix.strs.at(int(ix.adUnit[a]))
		if unit != "" && g.unmatched != 0 {
			uw := Tokens(unit)
			var extra float32
			for k := range qr.toks {
				if g.unmatched.has(k) && inUnit(uw, qr.toks[k].text) {
					extra += max(qr.toks[k].pw, wUnit)
				}
			}
			if extra > 0 {
				conf = math.Round(min(1, conf+0.9*float64(extra/g.den))*1000) / 1000
			}
		} else if unit != "" {
			conf = math.Round(conf*990) / 1000 // a unit the query did not ask for
		}
		out = append(out, scoredAddr{a, conf})
	}
	slices.SortStableFunc(out, func(x, y scoredAddr) int { return -cmp.Compare(x.conf, y.conf) })
	return out
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
