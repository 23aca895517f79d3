package geocode

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// row is one address as a source file gives it.
type row struct {
	lon, lat                                         float64
	number, street, unit, city, region, postcode, id string
}

// valid reports whether a row is an address point: coordinates in range
// and a street.
func (r *row) valid() bool {
	return r.street != "" && r.lat >= -90 && r.lat <= 90 && r.lon >= -180 && r.lon <= 180 &&
		!(r.lat == 0 && r.lon == 0)
}

// readSource reads one file of address rows: OpenAddresses CSV, GeoJSON
// (a FeatureCollection or one Feature per line, OpenAddresses
// properties), or the {"addresses": [{address1, address2, city, state,
// postalCode, coordinates: {lat, lng}}]} layout. The first byte that is
// not white space tells JSON ('{' or '[') from CSV.
func readSource(r io.Reader, emit func(*row)) error {
	br := bufio.NewReaderSize(r, 1<<16)
	for {
		b, err := br.Peek(1)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("empty file")
			}
			return err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			br.ReadByte() //nolint:errcheck // peeked
			continue
		case 0xEF: // UTF-8 byte order mark
			if bom, err := br.Peek(3); err == nil && string(bom) == "\uFEFF" {
				br.Discard(3) //nolint:errcheck // peeked
				continue
			}
		case '{', '[':
			return readJSON(br, emit)
		}
		return readCSV(br, emit)
	}
}

// readCSV reads the OpenAddresses CSV layout: a header naming LON, LAT,
// NUMBER and STREET (any order and case), UNIT, CITY, REGION, POSTCODE and
// ID if present. Rows that are not address points are skipped.
func readCSV(r io.Reader, emit func(*row)) error {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.LazyQuotes = true
	head, err := cr.Read()
	if err != nil {
		return err
	}
	col := map[string]int{}
	for i, h := range head {
		col[strings.ToUpper(strings.TrimSpace(strings.TrimPrefix(h, "\uFEFF")))] = i
	}
	for _, need := range []string{"LON", "LAT", "NUMBER", "STREET"} {
		if _, ok := col[need]; !ok {
			return fmt.Errorf("missing column %s (OpenAddresses layout expected)", need)
		}
	}
	idx := func(name string) int {
		if i, ok := col[name]; ok {
			return i
		}
		return -1
	}
	cLon, cLat, cNum, cStreet, cUnit, cCity, cRegion, cPost, cID := idx("LON"), idx("LAT"), idx("NUMBER"), idx("STREET"),
		idx("UNIT"), idx("CITY"), idx("REGION"), idx("POSTCODE"), idx("ID")
	var rw row
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		get := func(i int) string {
			if i >= 0 && i < len(rec) {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		lon, e1 := strconv.ParseFloat(get(cLon), 64)
		lat, e2 := strconv.ParseFloat(get(cLat), 64)
		if e1 != nil || e2 != nil {
			continue
		}
		rw = row{lon: lon, lat: lat, number: get(cNum), street: get(cStreet), unit: get(cUnit), city: get(cCity),
			region: get(cRegion), postcode: get(cPost), id: get(cID)}
		if rw.valid() {
			emit(&rw)
		}
	}
}

// jstr is a JSON string that also accepts a number or null.
type jstr string

func (s *jstr) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = jstr(v)
		return nil
	}
	if string(b) == "null" {
		*s = ""
		return nil
	}
	*s = jstr(b)
	return nil
}

// jsonRecord is a GeoJSON Feature with OpenAddresses properties or an
// {address1, …} object: whichever fields are there.
type jsonRecord struct {
	Properties *struct {
		Number, Street, Unit, City, Region, Postcode, ID jstr
	} `json:"properties"`
	Geometry *struct {
		Type        string          `json:"type"`
		Coordinates json.RawMessage `json:"coordinates"`
	} `json:"geometry"`
	Address1    jstr `json:"address1"`
	Address2    jstr `json:"address2"`
	City        jstr `json:"city"`
	State       jstr `json:"state"`
	PostalCode  jstr `json:"postalCode"`
	Coordinates *struct {
		Lat, Lng float64
	} `json:"coordinates"`
}

func (j *jsonRecord) row(rw *row) bool {
	*rw = row{}
	switch {
	case j.Properties != nil && j.Geometry != nil:
		var xy []float64
		if j.Geometry.Type != "Point" || json.Unmarshal(j.Geometry.Coordinates, &xy) != nil || len(xy) < 2 {
			return false
		}
		p := j.Properties
		*rw = row{lon: xy[0], lat: xy[1], number: string(p.Number), street: string(p.Street),
			unit: string(p.Unit), city: string(p.City), region: string(p.Region), postcode: string(p.Postcode), id: string(p.ID)}
	case j.Address1 != "" && j.Coordinates != nil:
		num, street := splitNumber(string(j.Address1))
		*rw = row{lon: j.Coordinates.Lng, lat: j.Coordinates.Lat, number: num, street: street, unit: string(j.Address2),
			city: string(j.City), region: string(j.State), postcode: string(j.PostalCode)}
	default:
		return false
	}
	for _, s := range []*string{&rw.number, &rw.street, &rw.unit, &rw.city, &rw.region, &rw.postcode, &rw.id} {
		*s = strings.TrimSpace(*s)
	}
	return rw.valid()
}

// splitNumber splits "123 1/2 Main St" into its house number and street:
// the first word if it starts with a digit, and a fraction after it.
func splitNumber(s string) (string, string) {
	f := strings.Fields(s)
	if len(f) < 2 || !isDigit(f[0][0]) {
		return "", strings.TrimSpace(s)
	}
	n := 1
	if len(f) > 2 && strings.Contains(f[1], "/") && isDigit(f[1][0]) {
		n = 2
	}
	return strings.Join(f[:n], " "), strings.Join(f[n:], " ")
}

// readJSON streams JSON values: a FeatureCollection, an {"addresses":
// [...]} object, a bare array of either kind of record, or Features one
// after another (one per line). Other members are skipped.
func readJSON(r io.Reader, emit func(*row)) error {
	dec := json.NewDecoder(r)
	var rw row
	one := func() error {
		var j jsonRecord
		if err := dec.Decode(&j); err != nil {
			return err
		}
		if j.row(&rw) {
			emit(&rw)
		}
		return nil
	}
	array := func() error {
		if t, err := dec.Token(); err != nil {
			return err
		} else if d, ok := t.(json.Delim); !ok || d != '[' {
			return errors.New("expected an array of features or addresses")
		}
		for dec.More() {
			if err := one(); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	}
	for {
		t, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('['):
			for dec.More() {
				if err := one(); err != nil {
					return err
				}
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		case json.Delim('{'):
			var j jsonRecord
			raw := map[string]json.RawMessage{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return err
				}
				k, _ := kt.(string)
				if k == "features" || k == "addresses" {
					if err := array(); err != nil {
						return err
					}
					continue
				}
				var v json.RawMessage
				if err := dec.Decode(&v); err != nil {
					return err
				}
				raw[k] = v
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
			if raw["properties"] != nil || raw["address1"] != nil {
				// a feature that does not encode again is skipped, as
				// one that does not decode into a row
				if b, err := json.Marshal(raw); err == nil && json.Unmarshal(b, &j) == nil && j.row(&rw) {
					emit(&rw)
				}
			}
		default:
			return errors.New("expected GeoJSON features or an addresses list")
		}
	}
}
