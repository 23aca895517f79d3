package geocode_test

import (
	"encoding/csv"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/geocode"
)

func TestSearch(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct {
		name, q, top string
	}{
		{"exact", "18 N State St, Westerville, OH 43081", "fx-17"},
		{"abbreviations expanded", "24 North State Street Suite 100", "fx-18"},
		{"Queens number", "90-05 212th St", "fx-07"},
		{"Queens number, town and state", "240-16 Braddock Ave Glen Oaks NY", "fx-02"},
		{"suffix abbreviated in the query", "86-20 Commonwealth Blvd", "fx-14"},
		{"typo: a letter missing", "240-16 Bradock Avenue", "fx-02"},
		{"typo: a letter missing, second town", "401 Aplegate Lane", "fx-29"},
		{"typo: a letter wrong", "51 W Maim St", "fx-22"},
		{"typo: a letter missing, with the town", "150 Schrok Road Westerville", "fx-25"},
		{"case and punctuation", "  12, n. STATE st.; westerville ", "fx-16"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ms := ix.Search(c.q, 3)
			if len(ms) == 0 || ms[0].Address.ID != c.top {
				t.Fatalf("Search(%q) top %+v, want %s", c.q, first(ms), c.top)
			}
			if len(ms) > 1 && ms[1].Confidence >= ms[0].Confidence {
				t.Errorf("Search(%q): the top match is not ahead: %v then %v", c.q, ms[0].Confidence, ms[1].Confidence)
			}
		})
	}
	if ms := ix.Search("18 N State St, Westerville, OH 43081", 1); len(ms) != 1 || ms[0].Confidence != 1 {
		t.Errorf("an exact address: %+v, want confidence 1", ms)
	}
	// a number that is not on the street: the street's nearest number
	// first, with low confidence
	ms := ix.Search("240-99 Braddock Avenue", 10)
	if len(ms) < 5 || ms[0].Address.ID != "fx-05" || ms[0].Confidence > 0.5 {
		t.Fatalf("240-99 Braddock Avenue: %+v, want 241-02 (the nearest number) under 0.5", first(ms))
	}
	for _, q := range []string{"", "  ", ",;-", "Lakeview"} {
		if ms := ix.Search(q, 10); len(ms) != 0 {
			t.Errorf("Search(%q): %d matches, want none", q, len(ms))
		}
	}
	if ms := ix.Search("Westerville", 1<<40); len(ms) != 15 {
		t.Errorf("no limit: %d matches, want Westerville's 15", len(ms))
	}
	if ms := ix.Search("Westerville", 4); len(ms) != 4 {
		t.Errorf("limit 4: %d matches", len(ms))
	}
}

func TestAutocomplete(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct {
		q      string
		top    string // ID of the first suggestion
		street string // every suggestion is on this street
		n      int    // number of suggestions
	}{
		{"240-16 Brad", "fx-02", "Braddock Avenue", 5},
		{"12 N Sta", "fx-16", "N State St", 5},
		{"Schr", "", "Schrock Road", 4},
		{"Hills", "", "Hillside Ave", 3},
		{"90-0", "fx-06", "212th Street", 4},
		{"86-2", "fx-14", "Commonwealth Boulevard", 3},
	} {
		ms := ix.Autocomplete(c.q, 5)
		if len(ms) != c.n || (c.top != "" && ms[0].Address.ID != c.top) {
			t.Errorf("Autocomplete(%q): %d, top %+v; want %d, top %s", c.q, len(ms), first(ms), c.n, c.top)
		}
		for _, m := range ms {
			if !strings.Contains(m.Address.Text, c.street) {
				t.Errorf("Autocomplete(%q): %s is not on %s", c.q, m.Address.Text, c.street)
			}
		}
	}
	// a typo in the word being typed
	if ms := ix.Autocomplete("240-16 Bradoc", 5); len(ms) == 0 || ms[0].Address.ID != "fx-02" {
		t.Errorf("Autocomplete(240-16 Bradoc): %+v", first(ms))
	}
	// the town being typed
	if ms := ix.Autocomplete("Schrock Rd Wester", 5); len(ms) == 0 || ms[0].Address.Street != "Schrock Road" || ms[0].Confidence < 0.9 {
		t.Errorf("Autocomplete(Schrock Rd Wester): %+v", ms)
	}
	if ms := ix.Autocomplete("Westervi", 5); len(ms) != 5 || ms[0].Address.City != "Westerville" {
		t.Errorf("Autocomplete(Westervi): %+v", ms)
	}
	// a prefix is not a search: Search wants whole tokens
	if ms := ix.Search("Schr", 5); len(ms) != 0 {
		t.Errorf("Search(Schr): %d matches", len(ms))
	}
}

func TestValidate(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct {
		q  string
		id string // "" for no such address
	}{
		{"240-16 Braddock Avenue, Glen Oaks, NY 11004", "fx-02"},
		{"36 N State St, Westerville, OH 43081", "fx-20"},
		{"36 north state street westerville", "fx-20"},
		{"162 Schrok Rd", "fx-27"}, // one typo
		{"17 Lakeview Terrace, Westerville, OH", ""},
		{"99999 Nowhere Boulevard Atlantis", ""},
		{"240-99 Braddock Avenue", ""},
		{"", ""},
	} {
		v := ix.Validate(c.q)
		if v.Exists != (c.id != "") || (v.Exists && v.Match.Address.ID != c.id) {
			t.Errorf("Validate(%q) = %v %+v, want %q", c.q, v.Exists, v.Match.Address, c.id)
		}
		if v.Exists && v.Match.Confidence <= 0.7 {
			t.Errorf("Validate(%q): valid at confidence %v", c.q, v.Match.Confidence)
		}
	}
}

// A loaded index serves concurrent queries (run with -race).
func TestConcurrentQueries(t *testing.T) {
	ix := loadFixture(t)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				if ms := ix.Search("240-16 Bradock Avenue", 3); len(ms) == 0 || ms[0].Address.ID != "fx-02" {
					t.Errorf("goroutine %d: search %+v", g, first(ms))
					return
				}
				ix.Autocomplete("12 N Sta", 5)
				ix.Validate("36 N State St")
				ix.Nearest(40.7415, -73.7171, 250)
			}
		}()
	}
	wg.Wait()
}

func first(ms []geocode.Match) any {
	if len(ms) == 0 {
		return nil
	}
	return ms[0].Address
}

// Ties go to the street with more addresses, then to the one nearer the
// focus point; never to the first in the alphabet.
func TestTiesAreNotAlphabetical(t *testing.T) {
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-73.7500,40.7100,86-01,85th Avenue,,NY,11426,av-1\n" +
		"-73.7400,40.7200,86-01,85th Road,,NY,11426,rd-1\n" +
		"-73.7401,40.7201,86-03,85th Road,,NY,11426,rd-2\n" +
		"-73.7402,40.7202,86-05,85th Road,,NY,11426,rd-3\n"
	ix, err := geocode.Load(writeTemp(t, "ties.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	if ms := ix.Autocomplete("86-01 85th", 2); len(ms) != 2 || ms[0].Address.ID != "rd-1" || ms[1].Address.ID != "av-1" {
		t.Errorf("86-01 85th: %+v, want 85th Road (more addresses) first", ms)
	}
	near := &geo.Point{Lat: 40.7100, Lon: -73.7500}
	if ms := ix.Find(geocode.Query{Text: "86-01 85th", Limit: 2, Prefix: true, Focus: near}); len(ms) != 2 || ms[0].Address.ID != "av-1" {
		t.Errorf("86-01 85th near 85th Avenue: %+v, want it first", ms)
	}
}

// A word the index does not know costs every candidate nothing; a town
// the rows do not name costs nothing where the row names none.
func TestUnknownWordsCostNothing(t *testing.T) {
	ix := loadFixture(t)
	base := ix.Search("240-16 Braddock Avenue 11004", 1)
	for _, q := range []string{"240-16 Braddock Avenue Atlantis 11004", "240-16 Braddock Avenue, Xyzzy, 11004"} {
		ms := ix.Search(q, 1)
		if len(ms) != 1 || ms[0].Address.ID != base[0].Address.ID || ms[0].Confidence != base[0].Confidence {
			t.Errorf("%q: %+v, want %+v", q, ms, base)
		}
	}
}

// Validation reads a Queens number without its hyphen, or with a space,
// as the number, and says so.
func TestValidateCorrections(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct{ q, from string }{{"24016 Braddock Avenue Glen Oaks NY", "24016"}, {"240 16 Braddock Avenue Glen Oaks NY", "240 16"}} {
		v := ix.Validate(c.q)
		if !v.Exists || v.Match.Address.ID != "fx-02" || len(v.Corrections) != 1 || v.Corrections[0] != (geocode.Correction{Field: "number", From: c.from, To: "240-16"}) {
			t.Errorf("%q: %+v", c.q, v)
		}
	}
	// a typo in the town is read differently to match, as one in the
	// street: reported, the word as the index has it
	for _, c := range []struct{ q, from, to string }{
		{"240-16 Braddock Avenue, Glen Oak, NY 11004", "oak", "oaks"},
		{"240-16 Braddock Avenue, Glenn Oaks, NY", "glenn", "glen"},
		{"12 N State St, Westervile, OH 43081", "westervile", "westerville"},
	} {
		v := ix.Validate(c.q)
		want := geocode.Correction{Field: "city", From: c.from, To: c.to}
		if !v.Exists || len(v.Corrections) != 1 || v.Corrections[0] != want {
			t.Errorf("%q: %+v, want it to exist with the correction %+v", c.q, v, want)
		}
	}
	// so is a typo in the street's type or direction, as in its name
	for _, c := range []struct{ q, from, to string }{
		{"240-16 Braddock Avenuw, Glen Oaks, NY 11004", "avenuw", "avenue"}, // (Avenu is a USPS form of Avenue)
		{"12 Nrth State St, Westerville, OH 43081", "nrth", "north"},
		{"12 N State Stret, Westerville, OH 43081", "stret", "street"},
	} {
		v := ix.Validate(c.q)
		want := geocode.Correction{Field: "street", From: c.from, To: c.to}
		if !v.Exists || len(v.Corrections) != 1 || v.Corrections[0] != want {
			t.Errorf("%q: %+v, want it to exist with the correction %+v", c.q, v, want)
		}
	}
	if v := ix.Validate("240-16 Braddock Avenue, Glen Oaks, NY 11004"); !v.Exists || len(v.Corrections) != 0 {
		t.Errorf("the town as the rows name it: %+v, want no correction", v)
	}
	if v := ix.Validate("240-16 Braddock Road Glen Oaks NY"); v.Exists {
		t.Errorf("another street type: %+v", v)
	}
	if v := ix.Validate("240-16 Braddock Avenue Glen Oaks OH"); v.Exists {
		t.Errorf("another state: %+v", v)
	}
	if v := ix.Validate("240-16 Braddock Avenue Glen Oaks NY 43081"); v.Exists {
		t.Errorf("another ZIP: %+v", v)
	}
}

// Between streets the query cannot otherwise tell apart, the house number
// written as the query writes it comes first (21323, not 213-23), and in
// an autocomplete the street whose name the query's words begin in order
// (1001 Northwe: Northwest 104th Street, not 6th Street Northwest), both
// ahead of the street with more addresses.
func TestTiesGoToWhatWasTyped(t *testing.T) {
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-97.5300,35.5769,1001,Northwest 104th Street,Oklahoma City,OK,73114,nw-1001\n" +
		"-77.0199,38.9025,1001,6th Street Northwest,Washington,DC,20001,dc-1001\n" +
		"-77.0198,38.9026,1003,6th Street Northwest,Washington,DC,20001,dc-1003\n" +
		"-77.0197,38.9027,1005,6th Street Northwest,Washington,DC,20001,dc-1005\n" +
		"-85.6000,38.1000,21323,Stream View Trail,Louisville,KY,40258,ky-21323\n" +
		"-73.7400,40.7200,213-23,Murdock Avenue,,NY,11429,q-213-23\n" +
		"-73.7401,40.7201,213-25,Murdock Avenue,,NY,11429,q-213-25\n" +
		"-73.7402,40.7202,213-27,Murdock Avenue,,NY,11429,q-213-27\n"
	ix, err := geocode.Load(writeTemp(t, "typed.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	if ms := ix.Autocomplete("1001 Northwe", 2); len(ms) != 2 || ms[0].Address.ID != "nw-1001" || ms[1].Address.ID != "dc-1001" {
		t.Errorf("1001 Northwe: %+v, want Northwest 104th Street, then 6th Street Northwest", ms)
	}
	for _, q := range []string{"21323 ", "2132"} {
		if ms := ix.Autocomplete(q, 2); len(ms) != 2 || ms[0].Address.ID != "ky-21323" || ms[1].Address.ID != "q-213-23" {
			t.Errorf("Autocomplete(%q): %+v, want 21323 Stream View Trail, then 213-23 Murdock Avenue", q, ms)
		}
	}
	if ms := ix.Autocomplete("213-2", 1); len(ms) != 1 || ms[0].Address.ID != "q-213-23" {
		t.Errorf("213-2: %+v, want 213-23 Murdock Avenue", ms)
	}
}

// A state or ZIP the query names that is not the address's contradicts
// it, whether or not the index holds any address in that state or ZIP:
// the address does not exist as written, its confidence is under the
// validation threshold, and it is suggested with what differs.
func TestForeignStateOrZIP(t *testing.T) {
	ix := loadFixture(t)
	for _, c := range []struct {
		q    string
		want []geocode.Correction
	}{
		{"240-16 Braddock Avenue, Glen Oaks, TX 11004", []geocode.Correction{{Field: "state", From: "tx", To: "NY"}}},
		{"240-16 Braddock Avenue, Glen Oaks, California 11004", []geocode.Correction{{Field: "state", From: "california", To: "NY"}}},
		{"240-16 Braddock Avenue, Glen Oaks, New Jersey", []geocode.Correction{{Field: "state", From: "new jersey", To: "NY"}}},
		{"240-16 Braddock Avenue NJ 11004", []geocode.Correction{{Field: "state", From: "nj", To: "NY"}}},
		{"240-16 Braddock Avenue, Glen Oaks, OH 11004", []geocode.Correction{{Field: "state", From: "oh", To: "NY"}}},
		{"240-16 Braddock Avenue, Glen Oaks, NY 90210", []geocode.Correction{{Field: "postcode", From: "90210", To: "11004"}}},
		{"240-16 Braddock Avenue, Glen Oaks, NY 43081", []geocode.Correction{{Field: "postcode", From: "43081", To: "11004"}}},
		{"240-16 Braddock Avenue TX 90210", []geocode.Correction{{Field: "state", From: "tx", To: "NY"}, {Field: "postcode", From: "90210", To: "11004"}}},
	} {
		v := ix.Validate(c.q)
		if v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "fx-02" || v.Suggestion.Confidence > 0.7 || v.Suggestion.Confidence <= 0 ||
			!slices.Equal(v.Corrections, c.want) {
			t.Errorf("Validate(%q) = %+v, want no such address, fx-02 suggested under 0.7 with %v", c.q, v, c.want)
		}
		if ms := ix.Search(c.q, 1); len(ms) != 1 || ms[0].Address.ID != "fx-02" || ms[0].Confidence > 0.7 {
			t.Errorf("Search(%q) = %+v, want fx-02 under 0.7", c.q, ms)
		}
	}
	// the address's own state, by code or name, and a state that is the
	// town (Delaware, OH) or part of the street are no contradiction
	for _, q := range []string{"240-16 Braddock Avenue, Glen Oaks, NY 11004", "240-16 Braddock Avenue, Glen Oaks, New York 11004",
		"36 N State St, Westerville, Ohio", "36 N State St, Delaware, OH 43081"} {
		if v := ix.Validate(q); !v.Exists || v.Suggestion != nil || slices.ContainsFunc(v.Corrections, func(c geocode.Correction) bool { return c.Field == "state" }) {
			t.Errorf("Validate(%q) = %+v, want it to exist", q, v)
		}
	}
}

// On the Queens Village file (skipped without it): a state or ZIP that no
// row has still contradicts the address.
func TestQueensForeignStateOrZIP(t *testing.T) {
	ix, err := geocode.Load(sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"219-32 Jamaica Avenue, Queens Village, TX 11429", "219-32 Jamaica Avenue, Queens Village, California 11429",
		"219-32 Jamaica Avenue, Queens Village, CA", "219-32 Jamaica Avenue NJ 11429", "219-32 Jamaica Avenue, Queens Village, NY 90210",
		"219-32 Jamaica Avenue, Queens Village, NY 11428"} {
		v := ix.Validate(q)
		if v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "n2545546163" || len(v.Corrections) == 0 {
			t.Errorf("Validate(%q) = %+v, want no such address and n2545546163 suggested with what differs", q, v)
		}
		if ms := ix.Search(q, 1); len(ms) != 1 || ms[0].Address.ID != "n2545546163" || ms[0].Confidence > 0.7 {
			t.Errorf("Search(%q) = %+v, want n2545546163 at 0.7 or less", q, ms)
		}
	}
	if v := ix.Validate("219-32 Jamaica Avenue, Queens Village, NY 11429"); !v.Exists || v.Match.Address.ID != "n2545546163" {
		t.Errorf("the address as it is: %+v", v)
	}
}

// The street the query names outranks streets that only share its house
// number: a street word the street lacks costs as much as a house number
// it lacks, so the named street's nearest number comes first and is the
// suggestion.
func TestNamedStreetBeforeSharedNumber(t *testing.T) {
	ix := loadFixture(t)
	for _, q := range []string{"241-05 Braddock Avenue", "241-05 Braddock Avenue 11004", "241-05 Braddock Ave, Glen Oaks, NY"} {
		if ms := ix.Search(q, 2); len(ms) != 2 || ms[0].Address.ID != "fx-05" || ms[1].Address.Street != "Hillside Ave" {
			t.Errorf("Search(%q) = %+v, want 241-02 Braddock Avenue (the nearest number), then 241-05 Hillside Ave", q, ms)
		}
		if v := ix.Validate(q); v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "fx-05" {
			t.Errorf("Validate(%q) = %+v, want no such address and 241-02 Braddock Avenue suggested", q, v)
		}
	}
	// a street type inside a longer name weighs as a type: Jamaica Avenue
	// Eastbound Roadbed is not more Jamaica Avenue than Jamaica Avenue
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-73.7400,40.7200,212-01,Murdock Avenue,Queens Village,NY,11429,mu-1\n" +
		"-73.7410,40.7210,212-01,110th Avenue,Queens Village,NY,11429,110-1\n" +
		"-73.7420,40.7220,212-02,Jamaica Avenue,Queens Village,NY,11429,ja-1\n" +
		"-73.7421,40.7221,212-10,Jamaica Avenue,Queens Village,NY,11429,ja-2\n" +
		"-73.7314,40.7207,222-14,Jamaica Avenue Eastbound Roadbed,,NY,11428,rb-1\n" +
		"-73.7500,40.7300,90-01,Manor Road,,NY,11427,mr-1\n"
	ix, err := geocode.Load(writeTemp(t, "jamaica.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"212-01 Jamaica Ave", "212-01 Jamaica Avenue 11429"} {
		if ms := ix.Search(q, 3); len(ms) == 0 || ms[0].Address.ID != "ja-1" {
			t.Errorf("Search(%q) = %+v, want 212-02 Jamaica Avenue first", q, ms)
		}
		if v := ix.Validate(q); v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "ja-1" {
			t.Errorf("Validate(%q) = %+v, want 212-02 Jamaica Avenue suggested", q, v)
		}
	}
	if v := ix.Validate("90-01 Manor Road"); !v.Exists || v.Match.Confidence != 1 {
		t.Errorf("a street named by a type word alone: %+v, want it to exist at confidence 1", v)
	}
}

// On the Queens Village file (skipped without it): Jamaica Avenue has
// 219-31, 219-32 and 219-36, not 219-33, and the query names it.
func TestQueensNamedStreet(t *testing.T) {
	ix, err := geocode.Load(sharedData(t, "addresses/us-ny-queens-village-osm-addresses.csv"))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"219-33 Jamaica Avenue 11429", "219-33 Jamaica Avenue", "212-01 Jamaica Ave"} {
		if ms := ix.Search(q, 1); len(ms) != 1 || ms[0].Address.Street != "Jamaica Avenue" {
			t.Errorf("Search(%q) = %+v, want Jamaica Avenue first", q, ms)
		}
		if v := ix.Validate(q); v.Exists || v.Suggestion == nil || v.Suggestion.Address.Street != "Jamaica Avenue" {
			t.Errorf("Validate(%q) = %+v, want a number of Jamaica Avenue suggested", q, v)
		}
	}
}

// TestAddressesValidateAsThemselves: the standardized text of every
// address of the shared OpenAddresses sample validates as existing with
// nothing corrected; a unit written bare after the street (74 Springfield
// Street B) is the address's unit, never read as a town the rows name
// otherwise (city "b" corrected to Agawam), and the ZIP that ends the
// text of an address without a house number (Career Avenue, Washington,
// DC 20032) is its ZIP, not a number missing from the street.
func TestAddressesValidateAsThemselves(t *testing.T) {
	file := sharedData(t, "addresses/us-rrad-openaddresses-sample.csv")
	ix, err := geocode.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	checked, bad := 0, 0
	for _, r := range rows[1:] { // LON,LAT,NUMBER,STREET,UNIT,CITY,DISTRICT,REGION,POSTCODE,ID,HASH
		text := ""
		for _, m := range ix.Search(strings.TrimSpace(r[2]+" "+r[3]+" "+r[8]), 30) {
			if m.Address.ID == r[9] {
				text = m.Address.Text
			}
		}
		if text == "" {
			t.Fatalf("%s (%s %s) not found", r[9], r[2], r[3])
		}
		checked++
		if v := ix.Validate(text); !v.Exists || v.Match.Address.ID != r[9] || len(v.Corrections) != 0 {
			if bad++; bad <= 5 {
				t.Errorf("%q: exists %v as %s, corrections %+v; want %s, none", text, v.Exists, v.Match.Address.ID, v.Corrections, r[9])
			}
		}
	}
	if bad > 0 || checked < 3000 {
		t.Errorf("%d of %d addresses do not validate as themselves", bad, checked)
	}
}

// A word between the house number and the street's words is a street
// word, not a town: "203-06 Hollis Ave" names Hollis Avenue, so Hollis
// Avenue's nearest number comes before 203-06 Murdock Avenue in the town
// of Hollis, which has the number but is not the street named, and that
// address is never reported with the confidence of a full match.
func TestTownWordInsideStreetIsAStreetWord(t *testing.T) {
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-73.7514,40.7004,203-06,Murdock Avenue,Hollis,NY,11412,mu-1\n" +
		"-73.7460,40.7088,203-07,Hollis Avenue,Hollis,NY,11412,ho-1\n" +
		"-73.7450,40.7090,211-04,Hollis Avenue,Queens Village,NY,11429,ho-2\n"
	ix, err := geocode.Load(writeTemp(t, "hollis.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"203-06 Hollis Ave", "203-06 Hollis Avenue", "203-06 Hollis Avenue, Hollis, NY 11412"} {
		ms := ix.Search(q, 3)
		if len(ms) == 0 || ms[0].Address.ID != "ho-1" {
			t.Errorf("Search(%q) = %+v, want 203-07 Hollis Avenue first", q, ms)
		}
		for _, m := range ms {
			if m.Address.ID == "mu-1" && m.Confidence > 0.7 {
				t.Errorf("Search(%q): 203-06 Murdock Avenue at confidence %v, above the validation threshold", q, m.Confidence)
			}
		}
		if v := ix.Validate(q); v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "ho-1" {
			t.Errorf("Validate(%q) = %+v, want 203-07 Hollis Avenue suggested", q, v)
		}
	}
	// the town after the street stays a town
	if ms := ix.Search("203-06 Murdock Avenue, Hollis, NY", 1); len(ms) != 1 || ms[0].Address.ID != "mu-1" || ms[0].Confidence < 0.9 {
		t.Errorf("the town after the street: %+v, want 203-06 Murdock Avenue at 0.9 or more", ms)
	}
}

// A direction is part of a street's name where the town has the street
// without it: "768 Main Street, Manchester" names Main Street, which has
// no 768, not North Main Street, so it does not exist as written. Where
// the town has no street without the direction, leaving it out is
// accepted (12 State St for 12 N State St).
func TestDirectionTellsStreetsApart(t *testing.T) {
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-72.5458,41.7955,768,North Main Street,Manchester,CT,06040,nm-768\n" +
		"-72.5200,41.7700,824,Main Street,Manchester,CT,06040,m-824\n" +
		"-72.5210,41.7710,143,Main Street,Manchester,CT,06042,m-143\n" +
		"-82.9295,40.1261,12,N State St,Westerville,OH,43081,ns-12\n"
	ix, err := geocode.Load(writeTemp(t, "manchester.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"768 Main Street, Manchester, CT 06040", "768 Main St, Manchester, CT", "768 Main Street"} {
		if v := ix.Validate(q); v.Exists {
			t.Errorf("Validate(%q) = %+v, want no such address: Main Street has no 768", q, v)
		}
	}
	for _, q := range []string{"768 North Main Street, Manchester, CT 06040", "768 N Main St, Manchester, CT"} {
		if v := ix.Validate(q); !v.Exists || v.Match.Address.ID != "nm-768" {
			t.Errorf("Validate(%q) = %+v, want 768 North Main Street", q, v)
		}
	}
	if v := ix.Validate("12 State St, Westerville, OH"); !v.Exists || v.Match.Address.ID != "ns-12" {
		t.Errorf("no State St without the direction: %+v, want 12 N State St", v)
	}
}

// A ZIP that ends a query without a house number is the street's ZIP, not
// a house number the street lacks: "Braddock Avenue 11004" scores as
// "Braddock Avenue, Glen Oaks" does, and validation never reports the ZIP
// as a number to correct (from 11004 to 240-10).
func TestZIPIsNoMissingNumber(t *testing.T) {
	ix := loadFixture(t)
	for _, q := range []string{"Braddock Avenue 11004", "Braddock Avenue, Glen Oaks, NY 11004", "Braddock Ave 11005"} {
		ms := ix.Search(q, 1)
		if len(ms) != 1 || ms[0].Address.Street != "Braddock Avenue" {
			t.Fatalf("Search(%q) = %+v, want Braddock Avenue", q, ms)
		}
		if q != "Braddock Ave 11005" && ms[0].Confidence < 0.9 {
			t.Errorf("Search(%q): confidence %v, want 0.9 or more: the ZIP is the street's", q, ms[0].Confidence)
		}
		v := ix.Validate(q)
		for _, c := range v.Corrections {
			if c.Field == "number" {
				t.Errorf("Validate(%q) = %+v: the ZIP corrected as a house number", q, v)
			}
		}
	}
	if a, b := ix.Search("Braddock Avenue 11004", 1), ix.Search("Braddock Avenue", 1); a[0].Confidence < b[0].Confidence {
		t.Errorf("the street's own ZIP lowers the confidence: %v with it, %v without", a[0].Confidence, b[0].Confidence)
	}
}

// A number that names the street (109 of "109 Ave", 109th Avenue) is no
// house number the street lacks: "109 Ave" scores as "109th Ave", and
// validation never reports it as a number to correct.
func TestOrdinalStreetNumberIsNoMissingNumber(t *testing.T) {
	csv := "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
		"-73.7597,40.7070,104-49,109th Avenue,Hollis,NY,11412,a-1\n" +
		"-73.7548,40.7078,203-06,109th Avenue,Hollis,NY,11412,a-2\n" +
		"-73.7500,40.7100,109-01,Murdock Avenue,Hollis,NY,11412,m-1\n"
	ix, err := geocode.Load(writeTemp(t, "ordinal.csv", csv))
	if err != nil {
		t.Fatal(err)
	}
	a, b := ix.Search("109 Ave", 1), ix.Search("109th Ave", 1)
	if len(a) != 1 || len(b) != 1 || a[0].Address.Street != "109th Avenue" || a[0].Confidence < b[0].Confidence*0.95 {
		t.Errorf("109 Ave: %+v, want 109th Avenue at about the confidence of 109th Ave (%+v)", a, b)
	}
	for _, q := range []string{"109 Avenue, Hollis", "109 Ave"} {
		v := ix.Validate(q)
		for _, c := range v.Corrections {
			if c.Field == "number" {
				t.Errorf("Validate(%q) = %+v: the street's number corrected as a house number", q, v)
			}
		}
	}
	if v := ix.Validate("203-06 109 Ave"); !v.Exists || v.Match.Address.ID != "a-2" {
		t.Errorf("with a house number: %+v, want 203-06 109th Avenue", v)
	}
}
