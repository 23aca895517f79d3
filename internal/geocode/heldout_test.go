package geocode_test

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/fleethub/fleethub/internal/geocode"
)

// The held-out evaluation: queries made from the shared address files the
// way people type them, one class per way, each scored at top-1 and in the
// top 5. `go test -run TestHeldOut -v ./internal/geocode/` prints the
// table; the test fails when a class falls under its floor.

// evalRow is one address row of a shared file.
type evalRow struct {
	number, street, unit, city, region, zip string
	queens                                  bool
}

func readEvalRows(tb testing.TB, path string, queens bool) []evalRow {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	var out []evalRow
	for _, r := range recs[1:] {
		if r[2] == "" || r[3] == "" {
			continue
		}
		out = append(out, evalRow{number: r[2], street: r[3], unit: r[4], city: r[5], region: r[7], zip: r[8], queens: queens})
	}
	return out
}

// evalCase is one query and what answers it.
type evalCase struct {
	class, q string
	prefix   bool
	row      evalRow
	validate int // 0: a search; 1: must exist; -1: must not exist
	street   bool
}

// town is how a person names the row's town: Queens for the borough,
// whose rows rarely name one.
func (r evalRow) town() string {
	if r.queens {
		return "Queens, NY"
	}
	return strings.TrimSpace(r.city + ", " + r.region)
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

// heldOut makes the query classes from rows: per class up to n rows,
// chosen at random with a fixed seed.
func heldOut(rows []evalRow, n int) []evalCase {
	rng := rand.New(rand.NewPCG(17, 2026))
	streets := map[string]map[string]bool{} // street|zip → numbers
	zipsOf := map[string][]string{}         // street → zips
	for _, r := range rows {
		k := strings.ToLower(r.street) + "|" + r.zip
		if streets[k] == nil {
			streets[k] = map[string]bool{}
			zipsOf[strings.ToLower(r.street)] = append(zipsOf[strings.ToLower(r.street)], r.zip)
		}
		streets[k][r.number] = true
	}
	var allStreets []string
	for s := range zipsOf {
		allStreets = append(allStreets, s)
	}
	slices.Sort(allStreets)
	var out []evalCase
	// half the queries from each file, so the 16 states weigh as much as
	// the borough
	var files [2][]evalRow
	for _, r := range rows {
		if r.queens {
			files[1] = append(files[1], r)
		} else {
			files[0] = append(files[0], r)
		}
	}
	turn := 0
	pick := func() evalRow {
		turn++
		f := files[turn%2]
		if len(f) == 0 {
			f = rows
		}
		return f[rng.IntN(len(f))]
	}
	full := func(r evalRow, number, street string) string {
		return strings.TrimSpace(fmt.Sprintf("%s %s, %s %s", number, street, r.town(), r.zip))
	}
	add := func(class string, make func(r evalRow) (evalCase, bool)) {
		for got, tries := 0, 0; got < n && tries < 20*n; tries++ {
			r := pick()
			if c, ok := make(r); ok {
				c.class, c.row = class, r
				out = append(out, c)
				got++
			}
		}
	}
	add("exact", func(r evalRow) (evalCase, bool) { return evalCase{q: full(r, r.number, r.street)}, true })
	add("abbreviated", func(r evalRow) (evalCase, bool) {
		a := abbreviate(r.street)
		return evalCase{q: full(r, r.number, a)}, a != r.street
	})
	add("lowercase", func(r evalRow) (evalCase, bool) { return evalCase{q: strings.ToLower(full(r, r.number, r.street))}, true })
	add("without ZIP", func(r evalRow) (evalCase, bool) {
		return evalCase{q: fmt.Sprintf("%s %s, %s", r.number, abbreviate(r.street), r.town())}, true
	})
	add("reordered", func(r evalRow) (evalCase, bool) {
		return evalCase{q: fmt.Sprintf("%s %s %s, %s", r.street, r.number, r.zip, r.town())}, true
	})
	add("typo 1 edit", func(r evalRow) (evalCase, bool) {
		s := typo(rng, r.street, 1, false, 4)
		return evalCase{q: full(r, r.number, s)}, s != ""
	})
	add("typo 2 edits", func(r evalRow) (evalCase, bool) {
		s := typo(rng, r.street, 2, false, 8)
		return evalCase{q: full(r, r.number, s)}, s != ""
	})
	add("transposition", func(r evalRow) (evalCase, bool) {
		s := typo(rng, r.street, 1, true, 4)
		return evalCase{q: full(r, r.number, s)}, s != ""
	})
	add("accented", func(r evalRow) (evalCase, bool) {
		return evalCase{q: full(r, r.number, accented(r.street))}, true
	})
	add("Queens number without hyphen", func(r evalRow) (evalCase, bool) {
		return evalCase{q: full(r, strings.ReplaceAll(r.number, "-", ""), r.street)}, r.queens && strings.Contains(r.number, "-")
	})
	for _, k := range []int{6, 8, 10, 12, 14, 18} {
		add(fmt.Sprintf("prefix %d", k), func(r evalRow) (evalCase, bool) {
			s := r.number + " " + r.street
			return evalCase{q: s[:min(k, len(s))], prefix: true, street: true}, len(s) > k
		})
	}
	add("validate: true address", func(r evalRow) (evalCase, bool) {
		return evalCase{q: full(r, r.number, r.street), validate: 1}, true
	})
	add("validate: wrong number", func(r evalRow) (evalCase, bool) {
		num := r.number
		for i := 0; i < 20 && streets[strings.ToLower(r.street)+"|"+r.zip][num]; i++ {
			num = bump(rng, r.number)
		}
		return evalCase{q: full(r, num, r.street), validate: -1}, !streets[strings.ToLower(r.street)+"|"+r.zip][num]
	})
	add("validate: wrong street", func(r evalRow) (evalCase, bool) {
		other := allStreets[rng.IntN(len(allStreets))]
		if slices.Contains(zipsOf[other], r.zip) {
			return evalCase{}, false
		}
		return evalCase{q: full(r, r.number, titleCase(other)), validate: -1}, true
	})
	return out
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
func right(a geocode.Address, r evalRow, streetOnly bool) bool {
	if !strings.EqualFold(a.Street, r.street) || a.Postcode != r.zip {
		return false
	}
	return streetOnly || strings.ReplaceAll(a.Number, "-", "") == strings.ReplaceAll(r.number, "-", "")
}

// evalScore is one class's figures.
type evalScore struct {
	class       string
	n, top1, t5 int
	misses      []string
}

func evaluate(ix *geocode.Index, cases []evalCase) []evalScore {
	var out []evalScore
	byClass := map[string]int{}
	for _, c := range cases {
		i, ok := byClass[c.class]
		if !ok {
			i = len(out)
			byClass[c.class] = i
			out = append(out, evalScore{class: c.class})
		}
		s := &out[i]
		s.n++
		if c.validate != 0 {
			v := ix.Validate(c.q)
			ok := v.Exists == (c.validate > 0)
			if ok && v.Exists {
				ok = right(v.Match.Address, c.row, false)
			}
			if ok {
				s.top1++
				s.t5++
			} else if len(s.misses) < 8 {
				s.misses = append(s.misses, fmt.Sprintf("%q → exists %v %s", c.q, v.Exists, v.Match.Address.Text))
			}
			continue
		}
		ms := ix.Find(geocode.Query{Text: c.q, Limit: 5, Prefix: c.prefix})
		for j, m := range ms {
			if right(m.Address, c.row, c.street) {
				if j == 0 {
					s.top1++
				}
				s.t5++
				break
			}
		}
		if (len(ms) == 0 || !right(ms[0].Address, c.row, c.street)) && len(s.misses) < 8 {
			got := ""
			if len(ms) > 0 {
				got = ms[0].Address.Text
			}
			s.misses = append(s.misses, fmt.Sprintf("%q → %s (want %s %s %s)", c.q, got, c.row.number, c.row.street, c.row.zip))
		}
	}
	return out
}

// heldOutFloor is each class's required top-1 share (top-5 for short
// prefixes).
func heldOutFloor(class string) (float64, bool) {
	switch class {
	case "prefix 6": // a house number alone: every street that has it
		return 0.70, true
	case "prefix 8", "prefix 10":
		return 0.95, true
	}
	return 0.95, false
}

func TestHeldOut(t *testing.T) {
	rrad := sharedData(t, "addresses/us-rrad-openaddresses-sample.csv")
	queens := sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv")
	ix, err := geocode.Load(rrad, queens)
	if err != nil {
		t.Fatal(err)
	}
	rows := append(readEvalRows(t, rrad, false), readEvalRows(t, queens, true)...)
	n := 200
	if testing.Short() {
		n = 40
	}
	var all, top1 int
	for _, s := range evaluate(ix, heldOut(rows, n)) {
		t.Logf("%-30s %4d  top-1 %5.1f%%  top-5 %5.1f%%", s.class, s.n, 100*float64(s.top1)/float64(s.n), 100*float64(s.t5)/float64(s.n))
		all += s.n
		top1 += s.top1
		floor, inTop5 := heldOutFloor(s.class)
		share := float64(s.top1) / float64(s.n)
		if inTop5 {
			share = float64(s.t5) / float64(s.n)
		}
		if share < floor {
			t.Errorf("%s: %.1f%% right, floor %.0f%%", s.class, 100*share, 100*floor)
		}
		if testing.Verbose() {
			for _, m := range s.misses {
				t.Logf("    miss: %s", m)
			}
		}
	}
	t.Logf("all %d queries: top-1 %.1f%%", all, 100*float64(top1)/float64(all))
}
