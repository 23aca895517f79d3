package routing

import (
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// taggedXML is taggedBlock as OSM XML: tagged nodes 1 (traffic
// signals), 3 (a bollard) and 4 (access=no) beside node 2 without tags,
// and relation 9, no_left_turn from way 10 via node 2 to way 11.
const taggedXML = `<?xml version="1.0" encoding="UTF-8"?>
<osm version="0.6" generator="fleethub tests">
 <node id="1" lat="0.0400000" lon="-0.0830000"><tag k="highway" v="traffic_signals"/></node>
 <node id="2" lat="0.0400010" lon="-0.0830000"/>
 <node id="3" lat="0.0400020" lon="-0.0830000">
  <tag k="barrier" v="bollard"/>
 </node>
 <node id="4" lat="0.0400030" lon="-0.0830000"><tag k="access" v="no"/></node>
 <relation id="9">
  <member type="way" ref="10" role="from"/>
  <member type="node" ref="2" role="via"/>
  <member type="way" ref="11" role="to"/>
  <tag k="type" v="restriction"/>
  <tag k="restriction" v="no_left_turn"/>
 </relation>
</osm>
`

// xmlFuzzSeeds are the FuzzReadXML seeds: the XML fixtures, one of them
// gzipped and one cut short, and a few bad documents.
func xmlFuzzSeeds() map[string][]byte {
	tiny := tinyXML()
	return map[string][]byte{
		"tiny":           tiny,
		"tagged":         []byte(taggedXML),
		"tagged-gzip":    gzipped([]byte(taggedXML)),
		"truncated":      tiny[:len(tiny)/2],
		"lat-too-large":  []byte(`<osm><node id="1" lat="91" lon="0"/></osm>`),
		"nd-without-ref": []byte(`<osm><way id="5"><nd/></way></osm>`),
		"wrong-root":     []byte(`<?xml version="1.0"?><osmChange version="0.6"><create/></osmChange>`),
	}
}

// recorded is what a reader handed its sink.
type recorded struct {
	nodes     map[int64][2]float64
	nodeTags  map[int64]map[string]string
	ways      []way
	relations []recordedRelation
}

type recordedRelation struct {
	id      int64
	members []member
	tags    map[string]string
}

func record(b []byte) (*recorded, error) {
	r := &recorded{nodes: map[int64][2]float64{}, nodeTags: map[int64]map[string]string{}}
	err := readExtract(bytes.NewReader(b), sink{
		node:     func(id int64, lat, lon float64) { r.nodes[id] = [2]float64{lat, lon} },
		nodeTags: func(id int64, tags map[string]string) { r.nodeTags[id] = tags },
		way: func(id int64, refs []int64, tags map[string]string) {
			r.ways = append(r.ways, way{id: id, refs: refs, tags: tags})
		},
		relation: func(id int64, ms []member, tags map[string]string) {
			r.relations = append(r.relations, recordedRelation{id, ms, tags})
		},
	})
	return r, err
}

// sameAs says whether r holds what o does, coordinates within 1e-7° (the
// precision OSM XML is written with).
func (r *recorded) sameAs(o *recorded) bool {
	if len(r.nodes) != len(o.nodes) {
		return false
	}
	for id, c := range r.nodes {
		oc, ok := o.nodes[id]
		if !ok || math.Abs(c[0]-oc[0]) > 1e-7 || math.Abs(c[1]-oc[1]) > 1e-7 {
			return false
		}
	}
	return reflect.DeepEqual(r.nodeTags, o.nodeTags) && reflect.DeepEqual(r.ways, o.ways) && reflect.DeepEqual(r.relations, o.relations)
}

// TestXMLMatchesPBF: the tiny network's XML forms (testdata/tiny.osm,
// tiny.osm.gz, tiny.osm.bz2, and the plain one behind a byte order mark
// and blank lines) hand the sink what testdata/tiny.osm.pbf hands it,
// the deleted and invisible objects of tinyXMLSkipped left out; loaded
// from a file whose name says no format, they give the PBF's graph and
// the same matrix for every costing between all its nodes. taggedXML
// hands on what taggedBlock does: node tags and a relation's members.
func TestXMLMatchesPBF(t *testing.T) {
	pbf, err := os.ReadFile(filepath.Join("testdata", "tiny.osm.pbf"))
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string][]byte{"bom": append([]byte("\uFEFF\n\n"), tinyXML()...)}
	for _, name := range []string{"tiny.osm", "tiny.osm.gz", "tiny.osm.bz2"} {
		if forms[name], err = os.ReadFile(filepath.Join("testdata", name)); err != nil {
			t.Fatal(err)
		}
	}
	load := func(b []byte) (*Graph, error) {
		p := filepath.Join(t.TempDir(), "extract")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return Load(p, Options{Costings: []Costing{}})
	}
	want, err := record(pbf)
	if err != nil {
		t.Fatal(err)
	}
	wantG, err := load(pbf)
	if err != nil {
		t.Fatal(err)
	}
	var pts [][2]float64
	for _, n := range tinyNodes {
		pts = append(pts, [2]float64{n.lat, n.lon})
	}
	for name, b := range forms {
		got, err := record(b)
		if err != nil || !got.sameAs(want) {
			t.Errorf("%s: read %+v, %v; want %+v", name, got, err, want)
		}
		g, err := load(b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if g.Edges() != wantG.Edges() || g.Nodes() != wantG.Nodes() {
			t.Errorf("%s: %d edges, %d junctions; the PBF's %d, %d", name, g.Edges(), g.Nodes(), wantG.Edges(), wantG.Nodes())
		}
		for c := Costing(0); c < numCostings; c++ {
			m, wm := g.Matrix(pts, pts, c), wantG.Matrix(pts, pts, c)
			for i := range m {
				for j := range m[i] {
					a, b := m[i][j], wm[i][j]
					if a.OK != b.OK || math.Abs(a.Meters-b.Meters) > 1e-3 || math.Abs(a.Seconds-b.Seconds) > 1e-3 {
						t.Errorf("%s, %s %d→%d: %+v, the PBF's %+v", name, c, tinyNodes[i].id, tinyNodes[j].id, a, b)
					}
				}
			}
		}
	}
	tagged, err := record(appendFileBlock(nil, "OSMData", taggedBlock(), true))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := record([]byte(taggedXML)); err != nil || !got.sameAs(tagged) {
		t.Errorf("taggedXML: read %+v, %v; taggedBlock %+v", got, err, tagged)
	}
}

// TestReadXMLErrors: each kind of bad input is refused by an error that
// names the format read, and the element, its id and its line, wrapping
// the cause.
func TestReadXMLErrors(t *testing.T) {
	node := func(attrs string) string { return "<osm version=\"0.6\">\n <node id=\"7\" " + attrs + "/>\n</osm>\n" }
	badSum := gzipped(tinyXML())
	badSum[len(badSum)-8] ^= 1 // the CRC-32 of the trailer
	syntax := func(err error) bool { var se *xml.SyntaxError; return errors.As(err, &se) }
	for _, tc := range []struct {
		name  string
		in    string
		want  string
		cause func(error) bool
	}{
		{"malformed", `<osm><node id="7" lat="1" lon="2"></osm>`, "read as OSM XML: line 1: node 7: XML syntax error", syntax},
		{"cut short", "<osm>\n<way id=\"5\"><nd ref=\"1\"/>", "read as OSM XML: line 2: way 5: XML syntax error on line 2: unexpected EOF", syntax},
		{"malformed in a deleted way", `<osm><way id="5" action="delete"><nd></way></osm>`, "read as OSM XML: line 1: way 5: XML syntax error", syntax},
		{"malformed in bounds", `<osm><bounds minlat="1"></osm>`, "read as OSM XML: line 1: <bounds>: XML syntax error", syntax},
		{"node without lat", node(`lon="2"`), "read as OSM XML: line 2: node 7: no lat", nil},
		{"node without lon", node(`lat="2"`), "read as OSM XML: line 2: node 7: no lon", nil},
		{"lat out of range", node(`lat="90.5" lon="2"`), "read as OSM XML: line 2: node 7: lat 90.5 out of range", nil},
		{"lon out of range", node(`lat="1" lon="-180.01"`), "read as OSM XML: line 2: node 7: lon -180.01 out of range", nil},
		{"lat not a number", node(`lat="NaN" lon="2"`), "read as OSM XML: line 2: node 7: lat NaN out of range", nil},
		{"lat unparsable", node(`lat="1,5" lon="2"`), `read as OSM XML: line 2: node 7: lat "1,5": strconv.ParseFloat`, func(err error) bool { return errors.Is(err, strconv.ErrSyntax) }},
		{"node without id", `<osm><node lat="1" lon="2"/></osm>`, "read as OSM XML: line 1: <node> without id", nil},
		{"id unparsable", `<osm><way id="w5"/></osm>`, `read as OSM XML: line 1: <way> id "w5": strconv.ParseInt`, func(err error) bool { return errors.Is(err, strconv.ErrSyntax) }},
		{"nd without ref", `<osm><way id="5"><nd/></way></osm>`, "read as OSM XML: line 1: way 5: <nd> without ref", nil},
		{"nd ref too large", `<osm><way id="5"><nd ref="99999999999999999999"/></way></osm>`, `read as OSM XML: line 1: way 5: <nd> ref "99999999999999999999"`, func(err error) bool { return errors.Is(err, strconv.ErrRange) }},
		{"member without ref", `<osm><relation id="9"><member type="way" role="from"/></relation></osm>`, "read as OSM XML: line 1: relation 9: <member> without ref", nil},
		{"tag without k", `<osm><way id="5"><tag v="x"/></way></osm>`, "read as OSM XML: line 1: way 5: <tag> without k", nil},
		{"not osm", `<?xml version="1.0"?><osmChange version="0.6"><create/></osmChange>`, "read as OSM XML: line 1: root element <osmChange>, not <osm>", nil},
		{"no root", `<?xml version="1.0"?>`, "read as OSM XML: no <osm> element", nil},
		{"a second root", `<osm></osm><osm/>`, "read as OSM XML: line 1: <osm> after </osm>", nil},
		{"gzip-compressed", string(gzipped([]byte(node(`lat="91" lon="2"`)))), "read as OSM XML (gzip): line 2: node 7: lat 91 out of range", nil},
		{"bad gzip checksum", string(badSum), "read as OSM XML (gzip): gzip: invalid checksum", func(err error) bool { return errors.Is(err, gzip.ErrChecksum) }},
		{"bad gzip header", "\x1f\x8b\x00 not gzip", "read as gzip: gzip: invalid header", func(err error) bool { return errors.Is(err, gzip.ErrHeader) }},
		{"bad bzip2", "BZh9 not bzip2 data", "read as bzip2: bzip2 data invalid", nil},
		{"neither", "no roads here", "read as .osm.pbf: routing: pbf: ", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Read(strings.NewReader(tc.in))
			if g != nil || err == nil || !strings.HasPrefix(err.Error(), tc.want) || tc.cause != nil && !tc.cause(err) {
				t.Errorf("Read = %v, %v; want %q…, wrapping its cause", g, err, tc.want)
			}
		})
	}
	p := filepath.Join(t.TempDir(), "bad.osm.gz")
	if err := os.WriteFile(p, gzipped([]byte(node(`lat="91" lon="2"`))), 0o644); err != nil {
		t.Fatal(err)
	}
	want := "routing: " + p + ": read as OSM XML (gzip): line 2: node 7: lat 91 out of range"
	if g, err := Load(p, Options{CacheDir: t.TempDir()}); g != nil || err == nil || err.Error() != want {
		t.Errorf("Load = %v, %v; want %q", g, err, want)
	}
}

// TestSavedXMLGraph: an XML extract's graph is saved and loaded as a
// PBF's is, under the name of its own bytes: the tiny network as XML,
// gzipped, bzip2-compressed and as PBF in one directory are four saved
// networks, each built on its first open and loaded on its second.
func TestSavedXMLGraph(t *testing.T) {
	dir := t.TempDir()
	for round := range 2 {
		for _, name := range []string{"tiny.osm", "tiny.osm.gz", "tiny.osm.bz2", "tiny.osm.pbf"} {
			g, err := Load(filepath.Join("testdata", name), Options{CacheDir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if net, cost := g.Loaded(Auto); net != (round == 1) || cost != (round == 1) {
				t.Errorf("%s, open %d: network loaded %v, auto %v", name, round+1, net, cost)
			}
		}
	}
	if m, _ := filepath.Glob(filepath.Join(dir, "roads-*.roads")); len(m) != 4 {
		t.Errorf("saved networks %v, want one per file", m)
	}
}

// TestOaklandXML: the real OSM XML extract of West Oakland, compressed
// with bzip2, reads whole (446 nodes, 66 ways, 23 relations, 31 of the
// ways highways) and loads into a road network whose matrix between
// places on its roads is finite for every costing.
func TestOaklandXML(t *testing.T) {
	path := SharedData(t, filepath.Join("osm", "us-ca-west-oakland.osm.bz2"))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := record(b)
	if err != nil {
		t.Fatal(err)
	}
	highways := 0
	for _, w := range r.ways {
		if w.tags["highway"] != "" {
			highways++
		}
	}
	if len(r.nodes) != 446 || len(r.ways) != 66 || len(r.relations) != 23 || highways != 31 {
		t.Errorf("%d nodes, %d ways, %d relations, %d highways; want 446, 66, 23, 31", len(r.nodes), len(r.ways), len(r.relations), highways)
	}
	all := []Costing{Auto, Truck, Bicycle, Pedestrian}
	g, err := Load(path, Options{CacheDir: t.TempDir(), Costings: all})
	if err != nil {
		t.Fatal(err)
	}
	if g.Edges() == 0 {
		t.Fatal("no roads")
	}
	pts := randomPoints(g, 6, rand.New(rand.NewPCG(1, 2)))
	for _, c := range all {
		res := g.Route(Request{Sources: pts, Targets: pts, Costing: c})
		routes := 0
		for i := range pts {
			for j := range pts {
				k := res.Costs[i][j]
				if !res.Sources[i].OK || !res.Targets[j].OK {
					continue
				}
				if !k.OK || math.IsInf(k.Meters, 0) || math.IsNaN(k.Meters) || math.IsInf(k.Seconds, 0) || math.IsNaN(k.Seconds) || k.Meters < 0 || k.Seconds < 0 {
					t.Errorf("%s %d→%d: %+v", c, i, j, k)
				}
				if i != j && k.Meters > 0 {
					routes++
				}
			}
		}
		if routes < 2 {
			t.Errorf("%s: %d routes between distinct places, want the places on the roads", c, routes)
		}
	}
	t.Logf("%d edges, %d junctions", g.Edges(), g.Nodes())
}
