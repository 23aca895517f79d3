// Package heldout makes the geocoder's held-out query sets from address
// files, one class per way people type an address (exact, abbreviated,
// lowercase, without ZIP, reordered, one- and two-edit typos,
// transpositions, accents, Queens numbers without the hyphen, prefixes
// of 6 to 18 characters, and validation of true addresses, wrong numbers
// and wrong streets), and scores an index on them: top-1, top-5 and
// latency per class. internal/geocode's TestHeldOut and bench/addrgen's
// measure command both use it.
//
// A set depends only on the address file and the seed, and making one is safe
// for concurrent use; scoring runs the queries one after the other on the
// caller's goroutine, against an index that must itself be safe for
// concurrent reads (internal/geocode's is).
package heldout

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode"

	"github.com/fleethub/fleethub/internal/geocode"
)

// Row is one address row of a file.
type Row struct {
	Number, Street, Unit, City, Region, Zip string
	// Queens rows are named by the borough (Queens, NY), which their rows
	// rarely carry.
	Queens bool
}

// ReadRows reads the rows of an OpenAddresses CSV file that have a house
// number and a street.
func ReadRows(path string, queens bool) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[strings.ToUpper(h)] = i
	}
	get := func(r []string, k string) string {
		if i, ok := col[k]; ok && i < len(r) {
			return r[i]
		}
		return ""
	}
	var out []Row
	for _, r := range recs[1:] {
		if get(r, "NUMBER") == "" || get(r, "STREET") == "" {
			continue
		}
		out = append(out, Row{Number: get(r, "NUMBER"), Street: get(r, "STREET"), Unit: get(r, "UNIT"), City: get(r, "CITY"),
			Region: get(r, "REGION"), Zip: get(r, "POSTCODE"), Queens: queens})
	}
	return out, nil
}

// Case is one query and what answers it.
type Case struct {
	Class, Q string
	Prefix   bool // an autocomplete
	Row      Row
	Validate int  // 0: a search; 1: must exist; -1: must not exist
	Street   bool // the right street is enough (short prefixes)
}

// town is how a person names the row's town: Queens for the borough,
// whose rows rarely name one.
func (r Row) town() string {
	if r.Queens {
		return "Queens, NY"
	}
	return strings.TrimSpace(r.City + ", " + r.Region)
}

var shortForms = map[string]string{"avenue": "Ave", "street": "St", "road": "Rd", "boulevard": "Blvd", "drive": "Dr", "lane": "Ln",
	"court": "Ct", "place": "Pl", "parkway": "Pkwy", "terrace": "Ter", "circle": "Cir", "highway": "Hwy", "north": "N", "south": "S",
	"east": "E", "west": "W", "northeast": "NE", "northwest": "NW", "southeast": "SE", "southwest": "SW"}

func abbreviate(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		if x, ok := shortForms[strings.ToLower(w)]; ok {
			f[i] = x
		}
	}
	return strings.Join(f, " ")
}

// longestWord is the index of the street's longest word of letters.
func longestWord(f []string) int {
	best := -1
	for i, w := range f {
		if strings.IndexFunc(w, func(r rune) bool { return !unicode.IsLetter(r) }) >= 0 {
			continue
		}
		if _, ok := shortForms[strings.ToLower(w)]; ok {
			continue
		}
		if best < 0 || len(w) > len(f[best]) {
			best = i
		}
	}
	return best
}

// typo makes n random edits (substitute, delete, insert) in the street's
// longest word, or swaps two neighbouring letters; "" if the word is too
// short for it.
func typo(rng *rand.Rand, street string, n int, swap bool, minLen int) string {
	f := strings.Fields(street)
	i := longestWord(f)
	if i < 0 || len(f[i]) < minLen {
		return ""
	}
	w := []byte(strings.ToLower(f[i]))
	if swap {
		j := 1 + rng.IntN(len(w)-2)
		for w[j] == w[j+1] && j+2 < len(w) {
			j++
		}
		w[j], w[j+1] = w[j+1], w[j]
	} else {
		for range n {
			j := 1 + rng.IntN(len(w)-1)
			c := byte('a' + rng.IntN(26))
			switch rng.IntN(3) {
			case 0:
				for c == w[j] {
					c = byte('a' + rng.IntN(26))
				}
				w[j] = c
			case 1:
				w = append(w[:j], w[j+1:]...)
			default:
				w = append(w[:j], append([]byte{c}, w[j:]...)...)
			}
		}
	}
	if strings.EqualFold(string(w), f[i]) {
		return ""
	}
	f[i] = string(w)
	return strings.Join(f, " ")
}

var accents = map[rune]rune{'a': 'ä', 'e': 'ë', 'o': 'ö', 'u': 'ü', 'i': 'í', 'A': 'Ä', 'E': 'É', 'O': 'Ö', 'U': 'Ü', 'n': 'ñ', 'c': 'ç'}

func accented(s string) string {
	return strings.Map(func(r rune) rune {
		if x, ok := accents[r]; ok {
			return x
		}
		return r
	}, s)
}

// Cases makes up to n queries per class from rows, half from the
// borough's rows and half from the others when there are both, with a
// fixed seed: the same rows give the same queries.
func Cases(rows []Row, n int) []Case {
	m := newCaseMaker(rows, n)
	m.searches()
	m.prefixes()
	m.validations()
	return m.out
}

// caseMaker draws the rows the queries are made from, in turn from the
// borough's rows and the others, with one random source for the draws and
// the queries' changes.
type caseMaker struct {
	rng        *rand.Rand
	rows       []Row
	files      [2][]Row // the others' rows, the borough's
	turn       int
	n          int                        // queries per class
	streets    map[string]map[string]bool // street|zip → numbers
	zipsOf     map[string][]string        // street → zips
	allStreets []string                   // sorted
	out        []Case
}

func newCaseMaker(rows []Row, n int) *caseMaker {
	m := &caseMaker{rng: rand.New(rand.NewPCG(17, 2026)), rows: rows, n: n,
		streets: map[string]map[string]bool{}, zipsOf: map[string][]string{}}
	for _, r := range rows {
		k := strings.ToLower(r.Street) + "|" + r.Zip
		if m.streets[k] == nil {
			m.streets[k] = map[string]bool{}
			m.zipsOf[strings.ToLower(r.Street)] = append(m.zipsOf[strings.ToLower(r.Street)], r.Zip)
		}
		m.streets[k][r.Number] = true
	}
	for s := range m.zipsOf {
		m.allStreets = append(m.allStreets, s)
	}
	slices.Sort(m.allStreets)
	// half the queries from each file, so the 16 states weigh as much as
	// the borough
	for _, r := range rows {
		if r.Queens {
			m.files[1] = append(m.files[1], r)
		} else {
			m.files[0] = append(m.files[0], r)
		}
	}
	return m
}

// pick draws a row, from the file whose turn it is.
func (m *caseMaker) pick() Row {
	m.turn++
	f := m.files[m.turn%2]
	if len(f) == 0 {
		f = m.rows
	}
	return f[m.rng.IntN(len(f))]
}

// full is the whole address of row r with the given number and street.
func full(r Row, number, street string) string {
	return strings.TrimSpace(fmt.Sprintf("%s %s, %s %s", number, street, r.town(), r.Zip))
}

// add makes up to n cases of a class, from rows drawn until mk has made
// them or 20n rows were tried.
func (m *caseMaker) add(class string, mk func(r Row) (Case, bool)) {
	for got, tries := 0, 0; got < m.n && tries < 20*m.n; tries++ {
		r := m.pick()
		if c, ok := mk(r); ok {
			c.Class, c.Row = class, r
			m.out = append(m.out, c)
			got++
		}
	}
}

// searches adds the classes of whole addresses searched for, in the ways
// people write and mistype them.
func (m *caseMaker) searches() {
	rng := m.rng
	m.add("exact", func(r Row) (Case, bool) { return Case{Q: full(r, r.Number, r.Street)}, true })
	m.add("abbreviated", func(r Row) (Case, bool) {
		a := abbreviate(r.Street)
		return Case{Q: full(r, r.Number, a)}, a != r.Street
	})
	m.add("lowercase", func(r Row) (Case, bool) { return Case{Q: strings.ToLower(full(r, r.Number, r.Street))}, true })
	m.add("without ZIP", func(r Row) (Case, bool) {
		return Case{Q: fmt.Sprintf("%s %s, %s", r.Number, abbreviate(r.Street), r.town())}, true
	})
	m.add("reordered", func(r Row) (Case, bool) {
		return Case{Q: fmt.Sprintf("%s %s %s, %s", r.Street, r.Number, r.Zip, r.town())}, true
	})
	m.add("typo 1 edit", func(r Row) (Case, bool) {
		s := typo(rng, r.Street, 1, false, 4)
		return Case{Q: full(r, r.Number, s)}, s != ""
	})
	m.add("typo 2 edits", func(r Row) (Case, bool) {
		s := typo(rng, r.Street, 2, false, 8)
		return Case{Q: full(r, r.Number, s)}, s != ""
	})
	m.add("transposition", func(r Row) (Case, bool) {
		s := typo(rng, r.Street, 1, true, 4)
		return Case{Q: full(r, r.Number, s)}, s != ""
	})
	m.add("with unit", func(r Row) (Case, bool) {
		return Case{Q: full(r, r.Number, r.Street+" "+r.Unit)}, r.Unit != ""
	})
	m.add("typo in town or type", m.typoInTownOrType)
	m.add("no street type", func(r Row) (Case, bool) {
		f := strings.Fields(r.Street)
		if len(f) < 2 || shortForms[strings.ToLower(f[len(f)-1])] == "" {
			return Case{}, false
		}
		return Case{Q: full(r, r.Number, strings.Join(f[:len(f)-1], " "))}, true
	})
	m.add("accented", func(r Row) (Case, bool) {
		return Case{Q: full(r, r.Number, accented(r.Street))}, true
	})
	m.add("Queens number without hyphen", func(r Row) (Case, bool) {
		return Case{Q: full(r, strings.ReplaceAll(r.Number, "-", ""), r.Street)}, r.Queens && strings.Contains(r.Number, "-")
	})
	m.add("Queens number with a space", func(r Row) (Case, bool) {
		return Case{Q: full(r, strings.Replace(r.Number, "-", " ", 1), r.Street)}, r.Queens && strings.Contains(r.Number, "-")
	})
	m.add("ZIP+4", func(r Row) (Case, bool) {
		return Case{Q: full(r, r.Number, r.Street) + fmt.Sprintf("-%04d", rng.IntN(10000))}, len(r.Zip) == 5
	})
}

// typoInTownOrType is row r's address with one typo (an edit or a swap)
// in a long word that is not the street's: the town's, or the street
// type's where it is written out.
func (m *caseMaker) typoInTownOrType(r Row) (Case, bool) {
	q := full(r, r.Number, r.Street)
	f := strings.Fields(q)
	var long []int
	for i, w := range f[1:] {
		if len(strings.Trim(w, ",")) >= 5 && strings.IndexFunc(w, unicode.IsDigit) < 0 && !strings.Contains(r.Street, w) {
			long = append(long, i+1)
		}
	}
	if len(long) == 0 {
		return Case{}, false
	}
	i := long[m.rng.IntN(len(long))]
	w := strings.Trim(f[i], ",")
	t := typo(m.rng, w, 1, m.rng.IntN(2) == 0, 5)
	if t == "" {
		return Case{}, false
	}
	f[i] = strings.Replace(f[i], w, t, 1)
	return Case{Q: strings.Join(f, " ")}, true
}

// prefixes adds the autocomplete classes: the first 6 to 18 characters
// of a number and street, where the right street is enough.
func (m *caseMaker) prefixes() {
	for _, k := range []int{6, 8, 10, 12, 14, 18} {
		m.add(fmt.Sprintf("prefix %d", k), func(r Row) (Case, bool) {
			s := r.Number + " " + r.Street
			return Case{Q: s[:min(k, len(s))], Prefix: true, Street: true}, len(s) > k
		})
	}
}

// validations adds the validation classes: true addresses, written with
// a typo or a unit, that must be found to exist, and addresses with a
// number or a street their ZIP does not have, that must not.
func (m *caseMaker) validations() {
	rng := m.rng
	m.add("validate: true address", func(r Row) (Case, bool) {
		return Case{Q: full(r, r.Number, r.Street), Validate: 1}, true
	})
	m.add("validate: one typo", func(r Row) (Case, bool) {
		s := typo(rng, r.Street, 1, rng.IntN(2) == 0, 5)
		return Case{Q: full(r, r.Number, s), Validate: 1}, s != ""
	})
	m.add("validate: with unit", func(r Row) (Case, bool) {
		return Case{Q: full(r, r.Number, r.Street+" "+r.Unit), Validate: 1}, r.Unit != ""
	})
	m.add("validate: wrong number", func(r Row) (Case, bool) {
		numbers := m.streets[strings.ToLower(r.Street)+"|"+r.Zip]
		num := r.Number
		for i := 0; i < 20 && numbers[num]; i++ {
			num = bump(rng, r.Number)
		}
		return Case{Q: full(r, num, r.Street), Validate: -1}, !numbers[num]
	})
	m.add("validate: wrong street", func(r Row) (Case, bool) {
		other := m.allStreets[rng.IntN(len(m.allStreets))]
		if slices.Contains(m.zipsOf[other], r.Zip) {
			return Case{}, false
		}
		return Case{Q: full(r, r.Number, titleCase(other)), Validate: -1}, true
	})
}

// bump changes a house number's last digits.
func bump(rng *rand.Rand, num string) string {
	b := []byte(num)
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= '0' && b[i] <= '9' {
			b[i] = byte('0' + (int(b[i]-'0')+1+rng.IntN(8))%10)
			if i > 0 && b[i-1] >= '0' && b[i-1] <= '9' && rng.IntN(2) == 0 {
				b[i-1] = byte('0' + (int(b[i-1]-'0')+1+rng.IntN(8))%10)
			}
			break
		}
	}
	return string(b)
}

func titleCase(s string) string {
	f := strings.Fields(s)
	for i, w := range f {
		f[i] = strings.ToUpper(w[:1]) + w[1:]
	}
	return strings.Join(f, " ")
}

// right reports whether address a answers row r: the same street and ZIP,
// and the same house number unless only the street is asked for.
func right(a geocode.Address, r Row, streetOnly bool) bool {
	if !strings.EqualFold(a.Street, r.Street) || a.Postcode != r.Zip {
		return false
	}
	return streetOnly || strings.ReplaceAll(a.Number, "-", "") == strings.ReplaceAll(r.Number, "-", "")
}

// Class is one class's figures.
type Class struct {
	Name       string
	N          int
	Top1, Top5 int // right first, right in the first five (validation: right)
	Latencies  []time.Duration
	Misses     []string // the first few wrong answers
}

// Share is the part right at top-1 or, with top5, in the first five.
func (c *Class) Share(top5 bool) float64 {
	if c.N == 0 {
		return 0
	}
	if top5 {
		return float64(c.Top5) / float64(c.N)
	}
	return float64(c.Top1) / float64(c.N)
}

// Quantile is the q-quantile of the class's query latencies.
func (c *Class) Quantile(q float64) time.Duration {
	if len(c.Latencies) == 0 {
		return 0
	}
	l := slices.Clone(c.Latencies)
	sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
	return l[min(len(l)-1, int(q*float64(len(l))))]
}

// Evaluate runs the cases one after the other on ix.
func Evaluate(ix *geocode.Index, cases []Case) []Class {
	var out []Class
	byClass := map[string]int{}
	for _, c := range cases {
		i, ok := byClass[c.Class]
		if !ok {
			i = len(out)
			byClass[c.Class] = i
			out = append(out, Class{Name: c.Class})
		}
		s := &out[i]
		s.N++
		if c.Validate != 0 {
			start := time.Now()
			v := ix.Validate(c.Q)
			s.Latencies = append(s.Latencies, time.Since(start))
			ok := v.Exists == (c.Validate > 0)
			if ok && v.Exists {
				ok = right(v.Match.Address, c.Row, false)
			}
			if ok {
				s.Top1++
				s.Top5++
			} else if len(s.Misses) < 8 {
				s.Misses = append(s.Misses, fmt.Sprintf("%q → exists %v %s", c.Q, v.Exists, v.Match.Address.Text))
			}
			continue
		}
		start := time.Now()
		ms := ix.Find(geocode.Query{Text: c.Q, Limit: 5, Prefix: c.Prefix})
		s.Latencies = append(s.Latencies, time.Since(start))
		for j, m := range ms {
			if right(m.Address, c.Row, c.Street) {
				if j == 0 {
					s.Top1++
				}
				s.Top5++
				break
			}
		}
		if (len(ms) == 0 || !right(ms[0].Address, c.Row, c.Street)) && len(s.Misses) < 8 {
			got := ""
			if len(ms) > 0 {
				got = ms[0].Address.Text
			}
			s.Misses = append(s.Misses, fmt.Sprintf("%q → %s (want %s %s %s)", c.Q, got, c.Row.Number, c.Row.Street, c.Row.Zip))
		}
	}
	return out
}

// Bound is, per class of street-only prefix queries, the best share of
// them any ranking can expect to have right at top-1 and in the top 5. A
// prefix query could have been made from every row whose number and
// street begin with it (and go on past it), each as likely as Cases draws
// it: a ranking that puts first the streets holding most of those rows is
// right that share of the time on average, and none does better (one
// sample may do better or worse by chance). rows must be those the cases
// were made from.
func Bound(rows []Row, cases []Case) map[string][2]float64 {
	type entry struct {
		text, street string
		w            float64
	}
	var nq, no int
	for _, r := range rows {
		if r.Queens {
			nq++
		} else {
			no++
		}
	}
	es := make([]entry, 0, len(rows))
	for _, r := range rows {
		// Cases draws from the borough's rows and the others in turn
		w := 1 / float64(len(rows))
		switch {
		case r.Queens && no > 0:
			w = 1 / float64(nq)
		case !r.Queens && nq > 0:
			w = 1 / float64(no)
		}
		es = append(es, entry{r.Number + " " + r.Street, strings.ToLower(r.Street) + "|" + r.Zip, w})
	}
	sort.Slice(es, func(i, j int) bool { return es[i].text < es[j].text })
	sums := map[string][2]float64{}
	counts := map[string]int{}
	for _, c := range cases {
		if !c.Prefix || !c.Street {
			continue
		}
		lo := sort.Search(len(es), func(i int) bool { return es[i].text >= c.Q })
		byStreet := map[string]float64{}
		var all float64
		for i := lo; i < len(es) && strings.HasPrefix(es[i].text, c.Q); i++ {
			if len(es[i].text) > len(c.Q) {
				byStreet[es[i].street] += es[i].w
				all += es[i].w
			}
		}
		if all == 0 {
			continue
		}
		ws := make([]float64, 0, len(byStreet))
		for _, w := range byStreet {
			ws = append(ws, w)
		}
		sort.Sort(sort.Reverse(sort.Float64Slice(ws)))
		var top5 float64
		for _, w := range ws[:min(5, len(ws))] {
			top5 += w
		}
		s := sums[c.Class]
		sums[c.Class] = [2]float64{s[0] + ws[0]/all, s[1] + top5/all}
		counts[c.Class]++
	}
	out := map[string][2]float64{}
	for k, s := range sums {
		out[k] = [2]float64{s[0] / float64(counts[k]), s[1] / float64(counts[k])}
	}
	return out
}
