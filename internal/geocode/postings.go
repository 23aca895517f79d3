package geocode

import (
	"cmp"
	"slices"
)

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
