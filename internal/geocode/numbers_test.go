package geocode_test

import (
	"testing"

	"github.com/fleethub/fleethub/internal/geocode"
)

// numbersCSV has house numbers with unit suffixes (12A) and fractions
// (12 1/2) beside plain ones, plain numbers that a range names at either
// end, and Queens numbers that read like ranges (12-14).
const numbersCSV = "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
	"-89.6500,39.8000,12,Main Street,Springfield,IL,62701,m-12\n" +
	"-89.6501,39.8001,12A,Main Street,Springfield,IL,62701,m-12a\n" +
	"-89.6502,39.8002,12 1/2,Main Street,Springfield,IL,62701,m-12h\n" +
	"-89.6503,39.8003,14,Main Street,Springfield,IL,62701,m-14\n" +
	"-89.6510,39.8010,100,Main Street,Springfield,IL,62701,m-100\n" +
	"-89.6512,39.8012,104,Main Street,Springfield,IL,62701,m-104\n" +
	"-89.6515,39.8015,110,Main Street,Springfield,IL,62701,m-110\n" +
	"-89.6600,39.8100,14,Elm Street,Springfield,IL,62702,e-14\n" +
	"-89.6601,39.8101,16,Elm Street,Springfield,IL,62702,e-16\n" +
	"-89.6602,39.8102,1214,Elm Street,Springfield,IL,62702,e-1214\n" +
	"-73.8100,40.7900,12-14,150th Street,Whitestone,NY,11357,q-12-14\n" +
	"-73.8101,40.7901,12-20,150th Street,Whitestone,NY,11357,q-12-20\n" +
	"-73.8102,40.7902,14,150th Street,Whitestone,NY,11357,q-14\n" +
	"-73.7500,40.7100,203-06,109th Avenue,,NY,11412,q-203-06\n" +
	"-73.7501,40.7101,203,109th Avenue,,NY,11412,q-203\n"

func loadNumbers(t *testing.T) *geocode.Index {
	t.Helper()
	ix, err := geocode.Load(writeTemp(t, "numbers.csv", numbersCSV))
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// A unit suffix (12A) and a fraction (12 1/2, 12½) are numbers of their
// own: each finds its address, not the plain number's, and the plain
// number finds the plain address.
func TestUnitSuffixesAndFractions(t *testing.T) {
	ix := loadNumbers(t)
	for _, c := range []struct{ q, id string }{
		{"12A Main St, Springfield, IL 62701", "m-12a"},
		{"12a main street springfield", "m-12a"},
		{"12 1/2 Main St, Springfield, IL 62701", "m-12h"},
		{"12½ Main St, Springfield, IL", "m-12h"},
		{"12 Main St, Springfield, IL 62701", "m-12"},
		{"12B Main St, Springfield, IL 62701", "m-12"}, // no 12B: the number it is a unit of
	} {
		ms := ix.Search(c.q, 3)
		if len(ms) == 0 || ms[0].Address.ID != c.id {
			t.Errorf("Search(%q) top %+v, want %s", c.q, first(ms), c.id)
		}
	}
	for _, c := range []struct {
		q  string
		id string // "" for no such address
	}{
		{"12A Main St, Springfield, IL 62701", "m-12a"},
		{"12 1/2 Main St, Springfield, IL 62701", "m-12h"},
		{"12 Main St, Springfield, IL 62701", "m-12"},
		{"12B Main St, Springfield, IL 62701", ""},
		{"14 1/2 Main St, Springfield, IL 62701", ""},
	} {
		v := ix.Validate(c.q)
		if v.Exists != (c.id != "") || v.Exists && (v.Match.Address.ID != c.id || len(v.Corrections) != 0) {
			t.Errorf("Validate(%q) = %v %+v %+v, want %q", c.q, v.Exists, v.Match.Address, v.Corrections, c.id)
		}
	}
}

// A range of house numbers finds its street and the address at its first
// number, or at its last when the first is not on the street; a Queens
// number with the same digits comes first where the street has one, and
// Queens numbers that are not ranges (203-06) stay what they are.
func TestNumberRanges(t *testing.T) {
	ix := loadNumbers(t)
	for _, c := range []struct{ q, id string }{
		{"100-110 Main St, Springfield, IL 62701", "m-100"},
		{"100-110 Main Street", "m-100"},
		{"102-110 Main St, Springfield, IL", "m-110"}, // no 102: the other end
		{"101-102 Main St, Springfield, IL", "m-100"}, // neither end: the nearest number
		{"12-14 Elm St, Springfield, IL 62702", "e-14"},
		{"12-14 Main St, Springfield, IL 62701", "m-12"},
		{"12-14 150th St, Whitestone, NY 11357", "q-12-14"}, // the Queens number, not 14
		{"12-20 150th Street", "q-12-20"},
		{"203-06 109th Avenue, NY 11412", "q-203-06"},
		{"20306 109th Avenue", "q-203-06"},
	} {
		ms := ix.Search(c.q, 3)
		if len(ms) == 0 || ms[0].Address.ID != c.id {
			t.Errorf("Search(%q) top %+v, want %s", c.q, first(ms), c.id)
		}
	}
	// autocomplete reads a range the same way
	if ms := ix.Autocomplete("100-110 Mai", 3); len(ms) == 0 || ms[0].Address.ID != "m-100" {
		t.Errorf("Autocomplete(100-110 Mai) top %+v, want m-100", first(ms))
	}

	v := ix.Validate("100-110 Main St, Springfield, IL 62701")
	if !v.Exists || v.Match.Address.ID != "m-100" || len(v.Corrections) != 1 ||
		v.Corrections[0] != (geocode.Correction{Field: "number", From: "100-110", To: "100"}) {
		t.Errorf("Validate(100-110 Main St): %+v", v)
	}
	if v := ix.Validate("12-14 150th St, Whitestone, NY 11357"); !v.Exists || v.Match.Address.ID != "q-12-14" || len(v.Corrections) != 0 {
		t.Errorf("Validate(12-14 150th St): %+v", v)
	}
	v = ix.Validate("101-102 Main St, Springfield, IL 62701")
	if v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "m-100" {
		t.Errorf("Validate(101-102 Main St): %+v, want no such address and 100 suggested", v)
	}
}

// sharedStreetCSV has one street name in three towns, the one with the
// most addresses the farthest from 220-13.
const sharedStreetCSV = "LON,LAT,NUMBER,STREET,CITY,REGION,POSTCODE,ID\n" +
	"-73.7313,40.7275,236-01,Braddock Avenue,Bellerose,NY,11426,b-236-01\n" +
	"-73.7312,40.7276,236-03,Braddock Avenue,Bellerose,NY,11426,b-236-03\n" +
	"-73.7311,40.7277,236-05,Braddock Avenue,Bellerose,NY,11426,b-236-05\n" +
	"-73.7432,40.7302,220-12,Braddock Avenue,Queens Village,NY,11427,b-220-12\n" +
	"-73.7420,40.7300,221-01,Braddock Avenue,Queens Village,NY,11427,b-221-01\n" +
	"-73.7367,40.7283,222-44,Braddock Avenue,Queens Village,NY,11428,b-222-44\n" +
	"-73.7365,40.7282,222-50,Braddock Avenue,Queens Village,NY,11428,b-222-50\n"

// TestNearestNumberAmongStreetsWithoutIt: when no street of the name has
// the house number, the street whose nearest number is nearest the
// query's comes first (220-12 for 220-13), whatever the streets' sizes;
// validation suggests it.
func TestNearestNumberAmongStreetsWithoutIt(t *testing.T) {
	ix, err := geocode.Load(writeTemp(t, "shared.csv", sharedStreetCSV))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ q, id string }{
		{"220-13 Braddock Ave", "b-220-12"},
		{"22013 Braddock Avenue", "b-220-12"},
		{"222-47 Braddock Ave", "b-222-44"},
		{"236-09 Braddock Ave", "b-236-05"},
	} {
		ms := ix.Search(c.q, 3)
		if len(ms) == 0 || ms[0].Address.ID != c.id {
			t.Errorf("Search(%q) top %+v, want %s", c.q, first(ms), c.id)
		}
	}
	if v := ix.Validate("220-13 Braddock Ave"); v.Exists || v.Suggestion == nil || v.Suggestion.Address.ID != "b-220-12" {
		t.Errorf("Validate(220-13 Braddock Ave): %+v, want no such address and 220-12 suggested", v)
	}
}
