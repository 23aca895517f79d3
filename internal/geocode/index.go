package geocode

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
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

// Index is an in-memory address index. Load builds it; it is read-only
// afterwards (see the package doc).
type Index struct {
	addrs    []Address
	postings map[string][]int32
	tokens   []string // sorted distinct tokens
	grid     map[[2]int32][]int32
}

// Load reads OpenAddresses-layout CSV files into an index.
func Load(paths ...string) (*Index, error) {
	ix := &Index{postings: map[string][]int32{}}
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("geocode: %w", err)
		}
		err = ix.read(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("geocode: %s: %w", p, err)
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
