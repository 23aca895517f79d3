package geocode

import (
	"cmp"
	"math"
	"slices"

	"github.com/fleethub/fleethub/internal/geo"
)

// nearestNumber is the address of [a0, a1) whose house number is closest
// to the query's (to a range's numbers, for a range), and how far its
// number is from the query's.
func (ix *Index) nearestNumber(a0, a1 uint32, qr *query) (uint32, int64) {
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
	return best, bestD
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
