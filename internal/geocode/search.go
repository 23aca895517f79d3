package geocode

import (
	"cmp"
	"slices"
	"sort"

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
	numMissed  bool  // the query names a house number the street lacks
	numGap     int64 // numMissed: how far the street's nearest house number is from the query's
	nameMissed bool  // the query names a street word the street lacks (Jamaica of 219-33 Jamaica Avenue on Murdock Avenue)
	asTyped    bool  // the house number is written as the query writes it (21323, not 213-23)
	inOrder    bool  // an autocomplete whose street words are the street name's first words, in order
	got, den   float32
	unmatched  wordSet // query words this street leaves unmatched
	townish    wordSet // the unmatched words that may name its town
	contra     wordSet // the query's state (its first word) and ZIPs that are not the street's
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
		if !ok || focus == nil && len(gs) == keep && ix.before(&gs[keep-1], &g) {
			// a street that lacks the number is taken as if its
			// nearest were the number itself (numGap 0), the best it
			// could be: one that ranks after the last kept even so is
			// never kept, and its numbers are not searched
			continue
		}
		if g.numMissed {
			ix.nearest(qr, &g, focus)
		}
		if len(gs) == keep && ix.before(&gs[keep-1], &g) {
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

// nearest settles a street that lacks the query's house number: its
// address with the nearest number, how far that number is, and that
// address's distance to the focus.
func (ix *Index) nearest(qr *query, g *group, focus *geo.Point) {
	g.lo, g.numGap = ix.nearestNumber(ix.stAddr[g.street], ix.stAddr[g.street+1], qr)
	g.hi = g.lo + 1
	if focus != nil {
		g.dist = geo.Distance(*focus, geo.Point{Lat: float64(ix.adLat[g.lo]) / coordScale, Lon: float64(ix.adLon[g.lo]) / coordScale})
	}
}

// before orders streets: confidence, then completeness (the house number
// found, the share of the name said), then distance to the focus point,
// then, among streets that lack the house number, the one whose nearest
// number is nearest the query's (220-12 before 236-01 for 220-13 of a
// street name three towns share), then the house number written as the query writes it (21323 before
// 213-23), then, in an autocomplete, the street whose name the query's
// words begin in order (1001 Northwe is more likely Northwest 104th Street
// than 6th Street Northwest), then the more address points with the house
// number, then the longer street; never by name.
func (ix *Index) before(a, b *group) bool {
	return cmp.Or(-cmp.Compare(a.conf, b.conf), -cmp.Compare(a.complete, b.complete), cmp.Compare(a.dist, b.dist),
		cmp.Compare(a.numGap, b.numGap), -cmp.Compare(b2i(a.asTyped), b2i(b.asTyped)), -cmp.Compare(b2i(a.inOrder), b2i(b.inOrder)),
		-cmp.Compare(a.hi-a.lo, b.hi-b.lo), -cmp.Compare(ix.streetSize(int(a.street)), ix.streetSize(int(b.street))),
		cmp.Compare(a.street, b.street)) < 0
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wordSet is a set of a query's words by position (maxQueryTokens ≤ 32).
type wordSet uint32

func (w wordSet) with(k int) wordSet    { return w | 1<<k }
func (w wordSet) has(k int) bool        { return w&(1<<k) != 0 }
func (w wordSet) without(k int) wordSet { return w &^ (1 << k) }
