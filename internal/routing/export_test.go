package routing

import (
	"bytes"
	"strings"
)

// ParseTags reads "key=value;key=value" for FuzzRules.
func ParseTags(s string) map[string]string {
	tags := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		k, v, _ := strings.Cut(kv, "=")
		tags[k] = v
	}
	return tags
}

// RuleReading is one direction's rule as FuzzRules checks it.
type RuleReading struct{ Kmh, Rate float64 }

// WayRules is wayRules for FuzzRules.
func WayRules(tags map[string]string, c Costing) []RuleReading {
	f, b := wayRules(tags, c)
	return []RuleReading{{float64(f.kmh), float64(f.rate)}, {float64(b.kmh), float64(b.rate)}}
}

// Limits are the speeds and truck limits the tags post, for FuzzRules.
func Limits(tags map[string]string) []float64 {
	return []float64{float64(maxspeed(tags, "maxspeed")), dimension(tags["maxheight"]), dimension(tags["maxweight"]), dimension(tags["maxlength"])}
}

// DecodeSaved reads b as a saved road network, or, failing that, as the
// auto hierarchy of the tiny fixture's network, for FuzzSavedGraph; the
// graph it returns has that hierarchy.
func DecodeSaved(b []byte) (*Graph, error) {
	g, err := decodeGeometry(b)
	if err == nil {
		return g, nil
	}
	tiny, err := Load("testdata/tiny.osm.pbf", Options{Costings: []Costing{}})
	if err != nil {
		return nil, err
	}
	cg, err := decodeCosting(b, tiny.Edges(), Auto)
	if err != nil {
		return nil, err
	}
	tiny.costs[Auto][0].once.Do(func() { tiny.costs[Auto][0].cg = cg })
	return tiny, nil
}

// XMLNodes are the coordinates of the nodes the XML reader hands on,
// for FuzzReadXML.
func XMLNodes(b []byte) ([][2]float64, error) {
	var pts [][2]float64
	err := readXML(bytes.NewReader(b), sink{node: func(_ int64, lat, lon float64) { pts = append(pts, [2]float64{lat, lon}) }})
	return pts, err
}
