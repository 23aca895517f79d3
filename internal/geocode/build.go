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
	str := func(id uint32) string { return b.list[id] }

	// localities
	type locKey struct{ city, region, zip uint32 }
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
		return cmp.Or(strings.Compare(str(x.zip), str(y.zip)), strings.Compare(str(x.city), str(y.city)), strings.Compare(str(x.region), str(y.region)))
	})
	for i, k := range locs {
		locOf[k] = uint32(i)
	}

	// streets: one street name in one locality
	type stKey struct{ loc, name uint32 }
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

	// vocabulary: street words, city words, states
	roles := map[string]uint8{}
	stWords := make([][]string, len(sts))
	stRoles := make([][]uint8, len(sts))
	nameWords := map[uint32]int{} // street name → index of its first street, words computed once
	for i, k := range sts {
		if j, ok := nameWords[k.name]; ok {
			stWords[i], stRoles[i] = stWords[j], stRoles[j]
			continue
		}
		nameWords[k.name] = i
		stWords[i], stRoles[i] = streetWords(str(k.name))
		for j, w := range stWords[i] {
			roles[w] |= stRoles[i][j]
		}
	}
	locWords := make([][]string, len(locs))
	for i, k := range locs {
		locWords[i] = cityWords(str(k.city))
		for _, w := range locWords[i] {
			roles[w] |= roleCity
		}
		if s := Fold(str(k.region)); s != "" {
			roles[s] |= roleState
			if !slices.Contains(locWords[i], s) {
				locWords[i] = append(locWords[i], s)
			}
		}
	}
	vocab := make([]string, 0, len(roles))
	for w := range roles {
		vocab = append(vocab, w)
	}
	slices.Sort(vocab)
	ix.vocab = newStrtab(vocab)
	ix.role = make([]uint8, len(vocab))
	wordID := make(map[string]uint32, len(vocab))
	for i, w := range vocab {
		wordID[w] = uint32(i)
		ix.role[i] = roles[w]
	}

	// house-number keys and ZIPs
	numKeyOf := map[uint32]string{}
	keySet := map[string]bool{}
	zipSet := map[string]bool{}
	for i := range b.rows {
		r := &b.rows[i]
		if _, ok := numKeyOf[r.num]; !ok {
			k := numberKey(str(r.num))
			numKeyOf[r.num] = k
			keySet[k] = true
		}
	}
	for _, k := range locs {
		zipSet[Fold(str(k.zip))] = true
	}
	ix.nums = newStrtab(sortedKeys(keySet))
	ix.zips = newStrtab(sortedKeys(zipSet))
	numID := make(map[uint32]uint32, len(numKeyOf))
	for n, k := range numKeyOf {
		i, _ := ix.nums.find(k)
		numID[n] = uint32(i)
	}

	// addresses, by street then number
	order := make([]uint32, len(b.rows))
	for i := range order {
		order[i] = uint32(i)
	}
	rowNum := func(i uint32) uint32 { return numID[b.rows[i].num] }
	slices.SortFunc(order, func(x, y uint32) int {
		return cmp.Or(cmp.Compare(rowSt[x], rowSt[y]), cmp.Compare(rowNum(x), rowNum(y)),
			strings.Compare(str(b.rows[x].unit), str(b.rows[y].unit)), cmp.Compare(x, y))
	})
	n := len(order)
	ix.adLat, ix.adLon = make([]int32, n), make([]int32, n)
	ix.adNum, ix.adNumText, ix.adUnit, ix.adID = make([]uint32, n), make([]uint32, n), make([]uint32, n), make([]uint32, n)
	ix.stAddr = make([]uint32, len(sts)+1)
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

	// streets and localities
	ix.stName, ix.stLoc = make([]uint32, len(sts)), make([]uint32, len(sts))
	ix.locStreets = make([]uint32, len(locs)+1)
	var sw, lw [][]uint32
	for i, k := range sts {
		ix.stName[i], ix.stLoc[i] = k.name, k.loc
		ix.locStreets[k.loc+1]++
		ids := make([]uint32, len(stWords[i]))
		for j, w := range stWords[i] {
			ids[j] = wordID[w]
		}
		sw = append(sw, ids)
		ix.stRoles = append(ix.stRoles, stRoles[i]...)
	}
	for i := 1; i < len(ix.locStreets); i++ {
		ix.locStreets[i] += ix.locStreets[i-1]
	}
	ix.stWords = rowsCSR(sw)
	ix.locCity, ix.locState, ix.locZip = make([]uint32, len(locs)), make([]uint32, len(locs)), make([]uint32, len(locs))
	for i, k := range locs {
		ix.locCity[i], ix.locState[i], ix.locZip[i] = k.city, k.region, k.zip
		ids := make([]uint32, len(locWords[i]))
		for j, w := range locWords[i] {
			ids[j] = wordID[w]
		}
		lw = append(lw, ids)
	}
	ix.locWords = rowsCSR(lw)

	// postings
	ix.wordStreets = invert(ix.vocab.len(), len(sts), func(s int) []uint32 { return ix.stWords.row(s) })
	ix.wordLocs = invert(ix.vocab.len(), len(locs), func(l int) []uint32 { return ix.locWords.row(l) })
	ix.zipLocs = invert(ix.zips.len(), len(locs), func(l int) []uint32 {
		i, _ := ix.zips.find(Fold(str(locs[l].zip)))
		return []uint32{uint32(i)}
	})
	ix.numStreets = invert(ix.nums.len(), len(sts), func(s int) []uint32 {
		var out []uint32
		for a := ix.stAddr[s]; a < ix.stAddr[s+1]; a++ {
			if len(out) == 0 || out[len(out)-1] != ix.adNum[a] {
				out = append(out, ix.adNum[a])
			}
		}
		return out
	})
	ix.buildGrid()
	ix.derive()
	return ix
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
