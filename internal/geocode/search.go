package geocode

import (
	"sort"
	"strings"
)

// Match is a scored address.
type Match struct {
	Address    *Address
	Confidence float64 // 0 to 1, rounded to three decimals
}

// validConfidence is the best match's confidence above which Validate
// says an address exists.
const validConfidence = 0.7

// Search scores addresses against a free-text query, best first, at most
// limit of them. A query token matches an index token exactly or, when
// nothing matches exactly and it has four letters or more, within one
// edit (a typo).
func (ix *Index) Search(q string, limit int) []Match { return ix.search(q, limit, false) }

// Autocomplete is Search with the query's last token taken as a prefix,
// for a query still being typed.
func (ix *Index) Autocomplete(q string, limit int) []Match { return ix.search(q, limit, true) }

// Validate reports whether an address exists: the best Search match, if
// its confidence is above 0.7.
func (ix *Index) Validate(q string) (Match, bool) {
	if ms := ix.search(q, 1, false); len(ms) > 0 && ms[0].Confidence > validConfidence {
		return ms[0], true
	}
	return Match{}, false
}

// expand returns the index tokens a query token stands for, with weights:
// exact 1, prefix (autocomplete of the last token) 0.9, one edit 0.75.
func (ix *Index) expand(q string, prefix bool) map[string]float64 {
	out := map[string]float64{}
	if _, ok := ix.postings[q]; ok {
		out[q] = 1
	}
	if prefix {
		i := sort.SearchStrings(ix.tokens, q)
		for n := 0; i < len(ix.tokens) && strings.HasPrefix(ix.tokens[i], q) && n < 200; i, n = i+1, n+1 {
			if _, ok := out[ix.tokens[i]]; !ok {
				out[ix.tokens[i]] = 0.9
			}
		}
	}
	if len(q) >= 4 && len(out) == 0 {
		// candidates share the first letter: a bounded scan of that range
		lo := sort.SearchStrings(ix.tokens, q[:1])
		for i := lo; i < len(ix.tokens) && ix.tokens[i][0] == q[0]; i++ {
			if within1(q, ix.tokens[i]) {
				out[ix.tokens[i]] = 0.75
			}
		}
	}
	return out
}

// search scores addresses against the query's tokens; with prefix the
// last token also matches the index tokens it begins.
func (ix *Index) search(q string, limit int, prefix bool) []Match {
	qt := Tokens(q)
	if len(qt) == 0 {
		return nil
	}
	// dense score arrays: a common token ("avenue") touches most of the
	// index, where a map would cost a hash insert per address
	scores := make([]float32, len(ix.addrs))
	best := make([]float32, len(ix.addrs))
	var touched []int32
	for k, t := range qt {
		exp := ix.expand(t, prefix && k == len(qt)-1)
		var hit []int32
		for tok, w := range exp {
			for _, id := range ix.postings[tok] {
				if best[id] == 0 {
					hit = append(hit, id)
				}
				if float32(w) > best[id] {
					best[id] = float32(w)
				}
			}
		}
		for _, id := range hit {
			if scores[id] == 0 {
				touched = append(touched, id)
			}
			scores[id] += best[id]
			best[id] = 0
		}
	}
	out := make([]Match, 0, min(len(touched), 4*limit+16))
	for _, id := range touched {
		s := float64(scores[id])
		a := &ix.addrs[id]
		conf := s / float64(len(qt))
		// a house number that does not match the query's costs confidence
		if n := qt[0]; n[0] >= '0' && n[0] <= '9' && a.number != n {
			conf *= 0.6
		}
		// coverage: how much of the address the query named
		cov := float64(min(len(qt), len(a.tokens))) / float64(len(a.tokens))
		conf = conf*0.85 + 0.15*cov
		out = append(out, Match{Address: a, Confidence: float64(int(conf*1000+0.5)) / 1000})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Confidence != out[j].Confidence {
			return out[i].Confidence > out[j].Confidence
		}
		return out[i].Address.Text < out[j].Address.Text
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out
}
