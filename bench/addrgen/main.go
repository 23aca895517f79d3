// Command addrgen makes a large synthetic address file for the geocoder's
// scale figures (docs/performance.md, Geocoding) from real OpenAddresses
// CSV rows: the real rows first, then copies of them with new street
// names (halves of two real names joined), new ordinal streets, new house
// numbers, new ZIPs within the same state's ZIP prefix, and shifted
// coordinates. Every copy of a street keeps its addresses together, so
// the output has streets of real length.
//
//	go run ./bench/addrgen -n 5000000 -o /tmp/addresses-5m.csv ../shared/data/addresses/*.csv
//
// `addrgen measure` opens an index (built, or read back from its saved
// copy) and reports the time, the memory, and per held-out query class
// the top-1, top-5 and latency of one sequential caller, then the
// searches per second of two (see measure.go).
package main

import (
	"bufio"
	"encoding/csv"
	"flag"
	"fmt"
	"hash/fnv"
	"io"
	"log"
	"os"
	"strconv"
	"strings"
	"unicode"
)

type row struct {
	lon, lat                                float64
	number, street, unit, city, region, zip string
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "measure" {
		measure(os.Args[2:])
		return
	}
	n := flag.Int("n", 5_000_000, "addresses to write")
	out := flag.String("o", "addresses-synthetic.csv", "output CSV")
	flag.Parse()
	if flag.NArg() == 0 {
		log.Fatal("usage: addrgen -n N -o out.csv input.csv...")
	}
	var rows []row
	for _, p := range flag.Args() {
		r, err := readRows(p)
		if err != nil {
			log.Fatal(err)
		}
		rows = append(rows, r...)
	}
	if len(rows) == 0 {
		log.Fatal("no rows")
	}
	words := nameWords(rows)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	cw := csv.NewWriter(w)
	cw.Write([]string{"LON", "LAT", "NUMBER", "STREET", "UNIT", "CITY", "DISTRICT", "REGION", "POSTCODE", "ID", "HASH"}) //nolint:errcheck // surfaces at Flush
	for i := range *n {
		r := rows[i%len(rows)]
		if c := i / len(rows); c > 0 {
			r = copyOf(r, c, words)
		}
		cw.Write([]string{ //nolint:errcheck // surfaces at Flush
			strconv.FormatFloat(r.lon, 'f', 7, 64), strconv.FormatFloat(r.lat, 'f', 7, 64),
			r.number, r.street, r.unit, r.city, "", r.region, r.zip, "syn-" + strconv.Itoa(i+1), "",
		})
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		log.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}

func readRows(p string) ([]row, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cr := csv.NewReader(f)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToUpper(h)] = i
	}
	get := func(rec []string, k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	var out []row
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		lon, e1 := strconv.ParseFloat(get(rec, "LON"), 64)
		lat, e2 := strconv.ParseFloat(get(rec, "LAT"), 64)
		if e1 != nil || e2 != nil || get(rec, "STREET") == "" || get(rec, "NUMBER") == "" {
			continue
		}
		out = append(out, row{lon, lat, get(rec, "NUMBER"), get(rec, "STREET"), get(rec, "UNIT"), get(rec, "CITY"), get(rec, "REGION"), get(rec, "POSTCODE")})
	}
}

// nameWords are the real streets' words of letters, longer than three.
func nameWords(rows []row) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range rows {
		for _, w := range strings.Fields(r.street) {
			if len(w) > 3 && strings.IndexFunc(w, func(c rune) bool { return !unicode.IsLetter(c) }) < 0 && !seen[w] {
				seen[w] = true
				out = append(out, w)
			}
		}
	}
	return out
}

func hash(parts ...string) uint64 {
	h := fnv.New64a()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return h.Sum64()
}

// copyOf is copy c of a real row: the same street of the same ZIP
// becomes the same new street in the same new ZIP.
func copyOf(r row, c int, words []string) row {
	cs := strconv.Itoa(c)
	h := hash(r.street, r.zip, cs)
	f := strings.Fields(r.street)
	for i, w := range f {
		switch {
		case len(w) > 3 && isOrdinal(w):
			if n, err := strconv.Atoi(w[:len(w)-2]); err == nil { // else the word stays
				f[i] = ordinal(1 + (n+7*c+int(h%5))%400)
			}
		case len(w) > 3 && i < len(f)-1 || len(f) == 1:
			o := words[h%uint64(len(words))]
			f[i] = w[:(len(w)+1)/2] + strings.ToLower(o[len(o)/2:])
			h /= uint64(len(words))
		}
	}
	r.street = strings.Join(f, " ")
	if len(r.zip) == 5 {
		z := hash(r.zip, cs) % 100
		r.zip = fmt.Sprintf("%s%02d", r.zip[:3], z)
	}
	if a, b, ok := strings.Cut(r.number, "-"); ok {
		if x, err := strconv.Atoi(a); err == nil {
			r.number = strconv.Itoa(x+c%7) + "-" + b
		}
	} else if x, err := strconv.Atoi(r.number); err == nil {
		r.number = strconv.Itoa(x + 2*(c%37))
	}
	r.lat += float64(c%13)*0.07 - 0.42
	r.lon += float64(c/13%13)*0.07 - 0.42
	return r
}

func isOrdinal(w string) bool {
	n := len(w)
	if n < 3 {
		return false
	}
	if _, err := strconv.Atoi(w[:n-2]); err != nil {
		return false
	}
	switch strings.ToLower(w[n-2:]) {
	case "st", "nd", "rd", "th":
		return true
	}
	return false
}

func ordinal(n int) string {
	suf := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suf = "st"
	case n%10 == 2:
		suf = "nd"
	case n%10 == 3:
		suf = "rd"
	}
	return strconv.Itoa(n) + suf
}
