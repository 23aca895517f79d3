// Package geocoding serves US address autocomplete, search and validation
// over address points loaded from OpenAddresses-layout CSV files
// (LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH), so
// an operator can point it at the files of their own region.
//
// The index is in memory: every address is normalized into tokens (lower
// case, punctuation dropped, USPS suffix and direction abbreviations
// expanded, e.g. "st" → "street", "n" → "north"); a token → addresses
// posting list answers exact tokens, a sorted token list answers prefixes
// (autocomplete) and tokens within one edit of a query token (fuzzy
// search).
package geocoding

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"github.com/fleethub/fleethub/internal/geo"
)

// Address is one indexed address point.
type Address struct {
	ID        string
	Text      string // standardized: "NUMBER STREET[ UNIT], CITY, REGION POSTCODE"
	Latitude  float64
	Longitude float64
	number    string
	tokens    []string
}

// Index is an in-memory address index.
type Index struct {
	addrs    []Address
	postings map[string][]int32
	tokens   []string // sorted distinct tokens
	grid     map[[2]int32][]int32
}

var abbrev = map[string]string{
	"st": "street", "str": "street", "ave": "avenue", "av": "avenue", "rd": "road", "blvd": "boulevard", "dr": "drive", "ln": "lane",
	"ct": "court", "pl": "place", "pkwy": "parkway", "hwy": "highway", "ter": "terrace", "cir": "circle", "sq": "square", "expy": "expressway",
	"tpke": "turnpike", "trl": "trail", "n": "north", "s": "south", "e": "east", "w": "west", "ne": "northeast", "nw": "northwest",
	"se": "southeast", "sw": "southwest", "apt": "apartment", "ste": "suite", "fl": "floor",
}

// Tokens normalizes text into index tokens.
func Tokens(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' })
	out := f[:0]
	for _, t := range f {
		t = strings.Trim(t, "-")
		if t == "" {
			continue
		}
		if x, ok := abbrev[t]; ok {
			t = x
		}
		out = append(out, t)
	}
	return out
}

// Load reads OpenAddresses-layout CSV files into an index.
func Load(paths ...string) (*Index, error) {
	ix := &Index{postings: map[string][]int32{}}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("geocoding: %w", err)
		}
		err = ix.read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("geocoding: %s: %w", p, err)
		}
	}
	ix.tokens = make([]string, 0, len(ix.postings))
	for t := range ix.postings {
		ix.tokens = append(ix.tokens, t)
	}
	sort.Strings(ix.tokens)
	ix.buildGrid()
	return ix, nil
}

func (ix *Index) read(r io.Reader) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToUpper(strings.TrimSpace(h))] = i
	}
	for _, need := range []string{"LON", "LAT", "NUMBER", "STREET"} {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("missing column %s (OpenAddresses layout expected)", need)
		}
	}
	get := func(rec []string, name string) string {
		if i, ok := col[name]; ok && i < len(rec) {
			return strings.TrimSpace(rec[i])
		}
		return ""
	}
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		lon, e1 := strconv.ParseFloat(get(rec, "LON"), 64)
		lat, e2 := strconv.ParseFloat(get(rec, "LAT"), 64)
		street := get(rec, "STREET")
		if e1 != nil || e2 != nil || street == "" || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
			continue // not an address point
		}
		num, unit, city, region, post := get(rec, "NUMBER"), get(rec, "UNIT"), get(rec, "CITY"), get(rec, "REGION"), get(rec, "POSTCODE")
		text := strings.TrimSpace(num + " " + street)
		if unit != "" {
			text += " " + unit
		}
		var tail []string
		if city != "" {
			tail = append(tail, city)
		}
		if rp := strings.TrimSpace(region + " " + post); rp != "" {
			tail = append(tail, rp)
		}
		if len(tail) > 0 {
			text += ", " + strings.Join(tail, ", ")
		}
		id := get(rec, "ID")
		if id == "" {
			id = "addr-" + strconv.Itoa(len(ix.addrs)+1)
		}
		a := Address{ID: id, Text: text, Latitude: lat, Longitude: lon, number: strings.ToLower(num)}
		seen := map[string]bool{}
		for _, t := range Tokens(text) {
			if !seen[t] {
				seen[t] = true
				a.tokens = append(a.tokens, t)
			}
		}
		n := int32(len(ix.addrs))
		ix.addrs = append(ix.addrs, a)
		for _, t := range a.tokens {
			ix.postings[t] = append(ix.postings[t], n)
		}
	}
}

// Len is the number of addresses.
func (ix *Index) Len() int { return len(ix.addrs) }

// Match is a scored address.
type Match struct {
	Address    *Address
	Confidence float64
}

// within1 reports whether a and b are at most one edit apart.
func within1(a, b string) bool {
	if a == b {
		return true
	}
	la, lb := len(a), len(b)
	if la-lb > 1 || lb-la > 1 {
		return false
	}
	i, j, edits := 0, 0, 0
	for i < la && j < lb {
		if a[i] == b[j] {
			i, j = i+1, j+1
			continue
		}
		edits++
		if edits > 1 {
			return false
		}
		switch {
		case la > lb:
			i++
		case lb > la:
			j++
		default:
			i, j = i+1, j+1
		}
	}
	return edits+(la-i)+(lb-j) <= 1
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

// Search scores addresses against a free-text query, best first.
func (ix *Index) Search(q string, limit int, prefix bool) []Match {
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

// cellKey is a 0.01° grid cell (about 1.1 km of latitude).
func cellKey(lat, lon float64) [2]int32 {
	return [2]int32{int32(math.Floor(lat * 100)), int32(math.Floor(lon * 100))}
}

// buildGrid indexes addresses by grid cell for Nearest.
func (ix *Index) buildGrid() {
	ix.grid = make(map[[2]int32][]int32, len(ix.addrs)/8+1)
	for i, a := range ix.addrs {
		k := cellKey(a.Latitude, a.Longitude)
		ix.grid[k] = append(ix.grid[k], int32(i))
	}
}

// Nearest returns the standardized address nearest to a point, within
// maxM meters (reverse geocoding for location_names enrichment).
func (ix *Index) Nearest(lat, lon, maxM float64) (string, bool) {
	c := cellKey(lat, lon)
	best, bestD := -1, maxM
	for dy := int32(-1); dy <= 1; dy++ {
		for dx := int32(-1); dx <= 1; dx++ {
			for _, i := range ix.grid[[2]int32{c[0] + dy, c[1] + dx}] {
				a := &ix.addrs[i]
				if d := geo.Distance(geo.Point{Lat: lat, Lon: lon}, geo.Point{Lat: a.Latitude, Lon: a.Longitude}); d <= bestD {
					best, bestD = int(i), d
				}
			}
		}
	}
	if best < 0 {
		return "", false
	}
	return ix.addrs[best].Text, true
}
