package geocode

import (
	"strings"
	"sync"
)

// Address is one indexed address point, as a query returns it.
type Address struct {
	ID        string
	Text      string // standardized: "NUMBER STREET[ UNIT], CITY, REGION POSTCODE"
	Number    string
	Street    string
	Unit      string
	City      string // from the row, or derived from other rows of its ZIP
	Region    string // from the row, or derived from its ZIP
	Postcode  string
	Latitude  float64
	Longitude float64
}

// Roles of a vocabulary word in a street or a locality.
const (
	roleName  = 1 << iota // Braddock in Braddock Avenue
	roleType              // Avenue
	roleDir               // North, Southeast
	roleCity              // Glen, Oaks
	roleState             // ny
)

// csr is a compressed sparse row list: the values of row i are
// val[off[i]:off[i+1]].
type csr struct {
	off []uint32 // len rows+1
	val []uint32
}

func (c *csr) row(i int) []uint32 { return c.val[c.off[i]:c.off[i+1]] }

// Index is an address index. Load and Open build it; it is read-only
// afterwards (see the package doc). Addresses are grouped by street (one
// street name in one locality), streets by locality (city, state, ZIP):
// words find streets, house numbers are looked up within a street.
type Index struct {
	strs  strtab // display strings: street names, cities, states, ZIPs, numbers, units, IDs
	vocab strtab // sorted words of street names, cities and states
	role  []uint8
	nums  strtab // sorted house-number keys (see numberKey)
	zips  strtab // sorted ZIP codes

	wordStreets csr // word → streets naming it (any street role)
	wordLocs    csr // word → localities naming it (city or state)
	numStreets  csr // number key → streets holding it
	zipLocs     csr // ZIP → localities

	// localities, sorted by ZIP, city, state
	locCity, locState, locZip []uint32 // display strings
	locWords                  csr      // city and state words
	locStreets                []uint32 // streets of locality i: locStreets[i]..locStreets[i+1]

	// streets, sorted by locality
	stName  []uint32 // display string
	stLoc   []uint32
	stWords csr      // words of the street name, with stRoles beside stWords.val
	stRoles []uint8  // role of each word of stWords
	stAddr  []uint32 // addresses of street i: stAddr[i]..stAddr[i+1]

	// addresses, sorted by street then number key
	adLat, adLon []int32  // degrees × 1e7
	adNum        []uint32 // number key (nums)
	adNumText    []uint32 // display string of the number as written
	adUnit       []uint32 // display string; 0 is no unit
	adID         []uint32 // display string

	// grid for Nearest: sorted cell keys, addresses per cell
	cells    []uint64
	cellAddr csr

	// derived on load, not saved
	locZipID []uint32 // the ZIP of locality i in zips
	locCode  []string // the USPS code of locality i's state, "" where it is not one
	typeWord []bool   // vocabulary word i is a street type or direction (Avenue of Jamaica Avenue Eastbound Roadbed too)

	pool sync.Pool // *scratch
}

// derive computes the tables a saved index does not hold.
func (ix *Index) derive() {
	ix.locZipID = make([]uint32, len(ix.locZip))
	for i, z := range ix.locZip {
		id, _ := ix.zips.find(Fold(ix.strs.at(int(z))))
		ix.locZipID[i] = uint32(id)
	}
	ix.typeWord = make([]bool, ix.vocab.len())
	for i := range ix.typeWord {
		w := ix.vocab.at(i)
		ix.typeWord[i] = suffixes[w] || directions[w]
	}
	ix.locCode = make([]string, len(ix.locState))
	for i, s := range ix.locState {
		ix.locCode[i] = stateCode(ix.strs.at(int(s)))
	}
}

// Len is the number of addresses.
func (ix *Index) Len() int { return len(ix.adLat) }

const coordScale = 1e7

// address composes address i.
func (ix *Index) address(i int) Address {
	s := int(ix.adStreet(i))
	loc := int(ix.stLoc[s])
	a := Address{
		ID:        ix.strs.at(int(ix.adID[i])),
		Number:    ix.strs.at(int(ix.adNumText[i])),
		Street:    ix.strs.at(int(ix.stName[s])),
		Unit:      ix.strs.at(int(ix.adUnit[i])),
		City:      ix.strs.at(int(ix.locCity[loc])),
		Region:    ix.strs.at(int(ix.locState[loc])),
		Postcode:  ix.strs.at(int(ix.locZip[loc])),
		Latitude:  float64(ix.adLat[i]) / coordScale,
		Longitude: float64(ix.adLon[i]) / coordScale,
	}
	var b strings.Builder
	b.WriteString(a.Number)
	if a.Number != "" {
		b.WriteByte(' ')
	}
	b.WriteString(a.Street)
	if a.Unit != "" {
		b.WriteByte(' ')
		b.WriteString(a.Unit)
	}
	if a.City != "" {
		b.WriteString(", ")
		b.WriteString(a.City)
	}
	if rp := strings.TrimSpace(a.Region + " " + a.Postcode); rp != "" {
		b.WriteString(", ")
		b.WriteString(rp)
	}
	a.Text = b.String()
	return a
}

// adStreet is the street of address i (the streets' address ranges are
// sorted, so a binary search).
func (ix *Index) adStreet(i int) uint32 {
	lo, hi := 0, len(ix.stName)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if int(ix.stAddr[m+1]) <= i {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return uint32(lo)
}

// streetSize is the number of addresses of street s.
func (ix *Index) streetSize(s int) int { return int(ix.stAddr[s+1] - ix.stAddr[s]) }
