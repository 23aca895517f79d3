package geocode

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// Load reads address files (see readSource for the layouts) into an index,
// without a saved copy (Open keeps one).
func Load(paths ...string) (*Index, error) {
	b := newBuilder()
	for _, p := range paths {
		if err := b.readFile(p); err != nil {
			return nil, err
		}
	}
	return b.build(), nil
}

// builder collects rows, interning their strings.
type builder struct {
	strs  map[string]uint32
	list  []string
	ids   []byte   // every row's ID, one after the other
	idEnd []uint32 // where each ends in ids
	rows  []brow
}

// brow is a row with interned strings: 36 bytes, so that five million
// rows fit in under 200 MB while the index is built.
type brow struct {
	lat, lon                                  int32
	num, street, unit, city, region, zip, ord uint32
}

func newBuilder() *builder {
	return &builder{strs: map[string]uint32{"": 0}, list: []string{""}}
}

func (b *builder) intern(s string) uint32 {
	if id, ok := b.strs[s]; ok {
		return id
	}
	id := uint32(len(b.list))
	s = strings.Clone(s) // not the reader's line it was cut from
	b.strs[s] = id
	b.list = append(b.list, s)
	return id
}

func (b *builder) readFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return fmt.Errorf("geocode: %w", err)
	}
	defer f.Close()
	if err := readSource(f, b.add); err != nil {
		return fmt.Errorf("geocode: %s: %w", p, err)
	}
	return nil
}

func (b *builder) add(r *row) {
	if r.id != "" {
		b.ids = append(b.ids, r.id...)
	} else {
		b.ids = append(b.ids, "addr-"...)
		b.ids = strconv.AppendInt(b.ids, int64(len(b.rows)+1), 10)
	}
	b.idEnd = append(b.idEnd, uint32(len(b.ids)))
	b.rows = append(b.rows, brow{
		lat: int32(math.Round(r.lat * coordScale)), lon: int32(math.Round(r.lon * coordScale)),
		num: b.intern(r.number), street: b.intern(r.street), unit: b.intern(r.unit), city: b.intern(r.city),
		region: b.intern(strings.ToUpper(r.region)), zip: b.intern(r.postcode), ord: uint32(len(b.rows)),
	})
}

// deriveLocality fills a row's missing city and state from the other rows
// of its ZIP (the most frequent), and a missing state from the ZIP's first
// three digits.
func (b *builder) deriveLocality() {
	type pair struct{ zip, v uint32 }
	cities, states := map[pair]int{}, map[pair]int{}
	for i := range b.rows {
		r := &b.rows[i]
		if r.zip == 0 {
			continue
		}
		if r.city != 0 {
			cities[pair{r.zip, r.city}]++
		}
		if r.region != 0 {
			states[pair{r.zip, r.region}]++
		}
	}
	best := func(m map[pair]int) map[uint32]uint32 {
		top, n := map[uint32]uint32{}, map[uint32]int{}
		for k, c := range m {
			if c > n[k.zip] || c == n[k.zip] && b.list[k.v] < b.list[top[k.zip]] {
				top[k.zip], n[k.zip] = k.v, c
			}
		}
		return top
	}
	city, state := best(cities), best(states)
	for i := range b.rows {
		r := &b.rows[i]
		if r.zip == 0 {
			continue
		}
		if r.city == 0 {
			r.city = city[r.zip]
		}
		if r.region == 0 {
			if s, ok := state[r.zip]; ok {
				r.region = s
			} else if s := zipState(b.list[r.zip]); s != "" {
				r.region = b.intern(s)
			}
		}
	}
}

// streetWords are the words of a street name and their roles: the last
// word a street type (Avenue) when a name comes before it, leading and
// trailing directions, the rest name. "St" first in a longer name is
// Saint.
func streetWords(name string) ([]string, []uint8) {
	raw := rawTokens(Fold(name))
	words := make([]string, 0, len(raw))
	for i, t := range raw {
		if t == "st" && i == 0 && len(raw) > 1 {
			t = "saint"
		} else if x, ok := abbrev[t]; ok {
			t = x
		}
		words = append(words, t)
	}
	roles := make([]uint8, len(words))
	lo, hi := 0, len(words)
	for hi-lo > 1 && directions[words[hi-1]] {
		roles[hi-1] = roleDir
		hi--
	}
	for hi-lo > 1 && directions[words[lo]] {
		roles[lo] = roleDir
		lo++
	}
	if hi-lo > 1 && suffixes[words[hi-1]] {
		roles[hi-1] = roleType
		hi--
	}
	for i := lo; i < hi; i++ {
		roles[i] = roleName
	}
	// one word per street: the first role wins
	out, outRoles := words[:0], roles[:0]
	for i, w := range words {
		if !slices.Contains(out, w) {
			out = append(out, w)
			outRoles = append(outRoles, roles[i])
		}
	}
	return out, outRoles
}

// cityWords are the words of a city name ("St" is Saint).
func cityWords(city string) []string {
	raw := rawTokens(Fold(city))
	out := raw[:0]
	for _, t := range raw {
		if t == "st" {
			t = "saint"
		} else if x, ok := abbrev[t]; ok {
			t = x
		}
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// build turns the rows into an index.
func (b *builder) build() *Index {
	b.deriveLocality()
	ix := &Index{}
	locs, locOf := b.localities()
	sts, rowSt := b.streets(locOf)
	v := b.vocabulary(ix, sts, locs)
	numID := b.numberKeys(ix, locs)
	b.addresses(ix, rowSt, numID, len(sts))
	ix.streetTables(sts, len(locs), v)
	ix.localityTables(locs, v)
	b.postings(ix, locs, len(sts))
	ix.buildGrid()
	ix.derive()
	return ix
}

// str is the interned string id.
func (b *builder) str(id uint32) string { return b.list[id] }

// locKey is a locality: a city, a state and a ZIP.
type locKey struct{ city, region, zip uint32 }

// stKey is a street: one street name in one locality.
type stKey struct{ loc, name uint32 }

// localities are the rows' localities sorted by ZIP, city and state, and
// each one's position in that order.
func (b *builder) localities() ([]locKey, map[locKey]uint32) {
	locOf := map[locKey]uint32{}
	var locs []locKey
	for i := range b.rows {
		r := &b.rows[i]
		k := locKey{r.city, r.region, r.zip}
		if _, ok := locOf[k]; !ok {
			locOf[k] = 0
			locs = append(locs, k)
		}
	}
	slices.SortFunc(locs, func(x, y locKey) int {
		return cmp.Or(strings.Compare(b.str(x.zip), b.str(y.zip)), strings.Compare(b.str(x.city), b.str(y.city)),
			strings.Compare(b.str(x.region), b.str(y.region)))
	})
	for i, k := range locs {
		locOf[k] = uint32(i)
	}
	return locs, locOf
}

// streets are the rows' streets, one street name in one locality, and
// each row's street.
func (b *builder) streets(locOf map[locKey]uint32) ([]stKey, []uint32) {
	stOf := map[stKey]uint32{}
	var sts []stKey
	rowSt := make([]uint32, len(b.rows))
	for i := range b.rows {
		r := &b.rows[i]
		k := stKey{locOf[locKey{r.city, r.region, r.zip}], r.street}
		if _, ok := stOf[k]; !ok {
			stOf[k] = 0
			sts = append(sts, k)
		}
	}
	// by locality, then in the files' order (sts is in it): a street's
	// position is the last tie-break of a ranking, never its name
	slices.SortStableFunc(sts, func(x, y stKey) int { return cmp.Compare(x.loc, y.loc) })
	for i, k := range sts {
		stOf[k] = uint32(i)
	}
	for i := range b.rows {
		r := &b.rows[i]
		rowSt[i] = stOf[stKey{locOf[locKey{r.city, r.region, r.zip}], r.street}]
	}
	return sts, rowSt
}

// wordTables are the words of the streets and localities, before they
// are numbered in the index, and the number of each.
type wordTables struct {
	stWords  [][]string // per street
	stRoles  [][]uint8  // per street, per word
	locWords [][]string // per locality: the city's words, then the state
	wordID   map[string]uint32
}

// vocabulary sets the index's vocabulary, the street words, city words
// and states, with the roles each word plays somewhere.
func (b *builder) vocabulary(ix *Index, sts []stKey, locs []locKey) wordTables {
	roles := map[string]uint8{}
	v := wordTables{stWords: make([][]string, len(sts)), stRoles: make([][]uint8, len(sts)), locWords: make([][]string, len(locs))}
	nameWords := map[uint32]int{} // street name → index of its first street, words computed once
	for i, k := range sts {
		if j, ok := nameWords[k.name]; ok {
			v.stWords[i], v.stRoles[i] = v.stWords[j], v.stRoles[j]
			continue
		}
		nameWords[k.name] = i
		v.stWords[i], v.stRoles[i] = streetWords(b.str(k.name))
		for j, w := range v.stWords[i] {
			roles[w] |= v.stRoles[i][j]
		}
	}
	for i, k := range locs {
		v.locWords[i] = cityWords(b.str(k.city))
		for _, w := range v.locWords[i] {
			roles[w] |= roleCity
		}
		if s := Fold(b.str(k.region)); s != "" {
			roles[s] |= roleState
			if !slices.Contains(v.locWords[i], s) {
				v.locWords[i] = append(v.locWords[i], s)
			}
		}
	}
	words := make([]string, 0, len(roles))
	for w := range roles {
		words = append(words, w)
	}
	slices.Sort(words)
	ix.vocab = newStrtab(words)
	ix.role = make([]uint8, len(words))
	v.wordID = make(map[string]uint32, len(words))
	for i, w := range words {
		v.wordID[w] = uint32(i)
		ix.role[i] = roles[w]
	}
	return v
}

// numberKeys sets the index's house-number keys and ZIPs, and returns
// the key of every house number the rows hold.
func (b *builder) numberKeys(ix *Index, locs []locKey) map[uint32]uint32 {
	numKeyOf := map[uint32]string{}
	keySet := map[string]bool{}
	zipSet := map[string]bool{}
	for i := range b.rows {
		r := &b.rows[i]
		if _, ok := numKeyOf[r.num]; !ok {
			k := numberKey(b.str(r.num))
			numKeyOf[r.num] = k
			keySet[k] = true
		}
	}
	for _, k := range locs {
		zipSet[Fold(b.str(k.zip))] = true
	}
	ix.nums = newStrtab(sortedKeys(keySet))
	ix.zips = newStrtab(sortedKeys(zipSet))
	numID := make(map[uint32]uint32, len(numKeyOf))
	for n, k := range numKeyOf {
		i, _ := ix.nums.find(k)
		numID[n] = uint32(i)
	}
	return numID
}

// addresses lays the rows out as the index's addresses, by street then
// number, with the strings and the rows' IDs.
func (b *builder) addresses(ix *Index, rowSt []uint32, numID map[uint32]uint32, nStreets int) {
	order := make([]uint32, len(b.rows))
	for i := range order {
		order[i] = uint32(i)
	}
	rowNum := func(i uint32) uint32 { return numID[b.rows[i].num] }
	slices.SortFunc(order, func(x, y uint32) int {
		return cmp.Or(cmp.Compare(rowSt[x], rowSt[y]), cmp.Compare(rowNum(x), rowNum(y)),
			strings.Compare(b.str(b.rows[x].unit), b.str(b.rows[y].unit)), cmp.Compare(x, y))
	})
	n := len(order)
	ix.adLat, ix.adLon = make([]int32, n), make([]int32, n)
	ix.adNum, ix.adNumText, ix.adUnit, ix.adID = make([]uint32, n), make([]uint32, n), make([]uint32, n), make([]uint32, n)
	ix.stAddr = make([]uint32, nStreets+1)
	idBase := uint32(len(b.list))
	for i, o := range order {
		r := &b.rows[o]
		ix.adLat[i], ix.adLon[i] = r.lat, r.lon
		ix.adNum[i], ix.adNumText[i], ix.adUnit[i] = numID[r.num], r.num, r.unit
		ix.adID[i] = idBase + r.ord
		ix.stAddr[rowSt[o]+1]++
	}
	for i := 1; i < len(ix.stAddr); i++ {
		ix.stAddr[i] += ix.stAddr[i-1]
	}
	ix.strs = newStrtab(b.list)
	base := uint32(len(ix.strs.data))
	ix.strs.data += string(b.ids)
	for _, e := range b.idEnd {
		ix.strs.off = append(ix.strs.off, base+e)
	}
}

// streetTables sets the streets' names, localities, words and roles, and
// the streets of each locality.
func (ix *Index) streetTables(sts []stKey, nLocs int, v wordTables) {
	ix.stName, ix.stLoc = make([]uint32, len(sts)), make([]uint32, len(sts))
	ix.locStreets = make([]uint32, nLocs+1)
	var sw [][]uint32
	for i, k := range sts {
		ix.stName[i], ix.stLoc[i] = k.name, k.loc
		ix.locStreets[k.loc+1]++
		ids := make([]uint32, len(v.stWords[i]))
		for j, w := range v.stWords[i] {
			ids[j] = v.wordID[w]
		}
		sw = append(sw, ids)
		ix.stRoles = append(ix.stRoles, v.stRoles[i]...)
	}
	for i := 1; i < len(ix.locStreets); i++ {
		ix.locStreets[i] += ix.locStreets[i-1]
	}
	ix.stWords = rowsCSR(sw)
}

// localityTables sets the localities' cities, states, ZIPs and words.
func (ix *Index) localityTables(locs []locKey, v wordTables) {
	var lw [][]uint32
	ix.locCity, ix.locState, ix.locZip = make([]uint32, len(locs)), make([]uint32, len(locs)), make([]uint32, len(locs))
	for i, k := range locs {
		ix.locCity[i], ix.locState[i], ix.locZip[i] = k.city, k.region, k.zip
		ids := make([]uint32, len(v.locWords[i]))
		for j, w := range v.locWords[i] {
			ids[j] = v.wordID[w]
		}
		lw = append(lw, ids)
	}
	ix.locWords = rowsCSR(lw)
}

// postings sets the index's postings: the streets and localities of
// every word, the localities of every ZIP, the streets of every house
// number.
func (b *builder) postings(ix *Index, locs []locKey, nStreets int) {
	ix.wordStreets = invert(ix.vocab.len(), nStreets, func(s int) []uint32 { return ix.stWords.row(s) })
	ix.wordLocs = invert(ix.vocab.len(), len(locs), func(l int) []uint32 { return ix.locWords.row(l) })
	ix.zipLocs = invert(ix.zips.len(), len(locs), func(l int) []uint32 {
		i, _ := ix.zips.find(Fold(b.str(locs[l].zip)))
		return []uint32{uint32(i)}
	})
	ix.numStreets = invert(ix.nums.len(), nStreets, func(s int) []uint32 {
		var out []uint32
		for a := ix.stAddr[s]; a < ix.stAddr[s+1]; a++ {
			if len(out) == 0 || out[len(out)-1] != ix.adNum[a] {
				out = append(out, ix.adNum[a])
			}
		}
		return out
	})
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func rowsCSR(rows [][]uint32) csr {
	c := csr{off: make([]uint32, 1, len(rows)+1)}
	for _, r := range rows {
		c.val = append(c.val, r...)
		c.off = append(c.off, uint32(len(c.val)))
	}
	return c
}

// invert turns item → keys into key → items (items ascending).
func invert(keys, items int, of func(int) []uint32) csr {
	c := csr{off: make([]uint32, keys+1)}
	for i := range items {
		for _, k := range of(i) {
			c.off[k+1]++
		}
	}
	for k := 1; k <= keys; k++ {
		c.off[k] += c.off[k-1]
	}
	c.val = make([]uint32, c.off[keys])
	next := slices.Clone(c.off[:keys])
	for i := range items {
		for _, k := range of(i) {
			c.val[next[k]] = uint32(i)
			next[k]++
		}
	}
	return c
}
