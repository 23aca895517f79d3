package geocode

import (
	"slices"
)

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
		pool = ix.withTied(cand, sc)
	}
	found := make([]int, len(qr.toks)) // typo matches per word, first found here
	ix.typosAmong(qr, pool, len(cand), exact, found, sc)
	changed := ix.scoreTypos(qr, pool, found, sc)
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

// withTied is the candidates followed by the streets gathered so far that
// are tied with the last of them, up to typoPool streets in all.
func (ix *Index) withTied(cand []uint32, sc *scratch) []uint32 {
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
	pool := append(sc.pool[:0], cand...)
	for _, s := range sc.touched {
		if len(pool) >= typoPool {
			break
		}
		if sc.score[s] == cut && sc.inCand[s] != sc.gen {
			pool = append(pool, s)
		}
	}
	sc.pool = pool
	return pool
}

// typosAmong adds to the query words the typos found among the words of
// the pool's streets and of their towns: for every word among the first
// nCand streets (the candidates), past them only for the words the index
// lacks (exact false). It sets found, per query word, to where the
// matches it found begin in the word's matches.
func (ix *Index) typosAmong(qr *query, pool []uint32, nCand int, exact []bool, found []int, sc *scratch) {
	sc.gen++
	if len(sc.seen) < ix.vocab.len() {
		sc.seen = make([]uint32, ix.vocab.len())
	}
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
		if i == nCand {
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
}

// scoreTypos adds to the scores of the pool's streets what the typos
// found (the matches from found on) match of their words. It reports
// whether any typo was found.
func (ix *Index) scoreTypos(qr *query, pool []uint32, found []int, sc *scratch) bool {
	changed := false
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
	return changed
}
