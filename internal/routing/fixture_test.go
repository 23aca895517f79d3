package routing

import (
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"compress/zlib"
	"encoding/binary"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/tiny.osm.pbf, testdata/trucks.osm.pbf, the XML forms of tiny and the fuzz seeds")

// The tiny network of testdata/tiny.osm.pbf (longitude -83.001 left,
// -83.000 right):
//
//	      8      40.004   7–8 residential: cars reach it only from 7 or 8
//	      |
//	      7      40.003
//	      :               3–7 footway
//	4 ←── 3      40.002   way 12 is drawn 1–5–4–3 with oneway=-1: cars go 3→4→5→1 only
//	↓     ↑               2→3 oneway=yes
//	↓     2      40.001
//	↓     |               1–2 two-way residential
//	5 ──→ 1      40.000
//
// Way 15 runs from 8 to node 99, which is not in the extract; way 16 is a
// building over 4–5 and way 17 a pedestrian area over 1–2–3: neither is a
// road for cars (a bicycle may push round the area's outline, as OSRM's
// bicycle profile does). Nodes 1–3 are plain nodes and 4–5 dense nodes of a raw block; 7–8
// are dense nodes of a zlib block with its own granularity and offsets,
// which also holds the ways.
var (
	tinyNodes = []osmNode{
		{1, 40.000, -83.000}, {2, 40.001, -83.000}, {3, 40.002, -83.000},
		{4, 40.002, -83.001}, {5, 40.000, -83.001},
		{7, 40.003, -83.000}, {8, 40.004, -83.000},
	}
	tinyWays = []osmWay{
		{10, []int64{1, 2}, []string{"highway", "residential", "name", "Main Street"}},
		{11, []int64{2, 3}, []string{"highway", "residential", "oneway", "yes"}},
		{12, []int64{1, 5, 4, 3}, []string{"highway", "residential", "oneway", "-1"}},
		{13, []int64{3, 7}, []string{"highway", "footway"}},
		{14, []int64{7, 8}, []string{"highway", "residential"}},
		{15, []int64{8, 99}, []string{"highway", "residential"}},
		{16, []int64{4, 5}, []string{"building", "yes"}},
		{17, []int64{1, 2, 3, 1}, []string{"highway", "pedestrian", "area", "yes"}},
	}
)

// The truck network of testdata/trucks.osm.pbf (islandNet in
// rules_test.go): a square of two-way primary roads 1–4–3–2, a short
// road 1–2 posted for 20 t, and a side street 5–6 entered by the one-way
// 4→5 and left by the one-way 6→3, posted for 40 t:
//
//	5 ── 6      40.005
//	↑    ↓      (6→3 maxweight 40)
//	4 ── 3      40.003
//	|    |
//	1 ── 2      40.000 (maxweight 20)
//
// Longitude -83.000 left, -82.998 right.
var (
	truckNodes = []osmNode{
		{1, 40.000, -83.000}, {2, 40.000, -82.998}, {3, 40.003, -82.998},
		{4, 40.003, -83.000}, {5, 40.005, -83.000}, {6, 40.005, -82.998},
	}
	truckWays = []osmWay{
		{10, []int64{1, 2}, []string{"highway", "primary", "maxweight", "20"}},
		{11, []int64{1, 4, 3, 2}, []string{"highway", "primary"}},
		{12, []int64{4, 5}, []string{"highway", "residential", "oneway", "yes"}},
		{13, []int64{5, 6}, []string{"highway", "residential"}},
		{14, []int64{6, 3}, []string{"highway", "residential", "oneway", "yes", "maxweight", "40"}},
	}
)

// trucksPBF is the truck network as an extract: a header block and one
// raw data block.
func trucksPBF() []byte {
	f := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	return appendFileBlock(f, "OSMData", dataBlock(100, 0, 0, nil, truckNodes, truckWays), false)
}

type osmNode struct {
	id       int64
	lat, lon float64
}

type osmWay struct {
	id   int64
	refs []int64
	tags []string // key, value, key, value…
}

// tinyPBF is the fixture: a header block, a raw data block and a zlib data
// block.
func tinyPBF() []byte {
	var f []byte
	f = appendFileBlock(f, "OSMHeader", headerBlock(), false)
	f = appendFileBlock(f, "OSMData", dataBlock(100, 0, 0, tinyNodes[:3], tinyNodes[3:5], nil), false)
	f = appendFileBlock(f, "OSMData", dataBlock(1000, 40e9, -83e9, nil, tinyNodes[5:], tinyWays), true)
	return f
}

// tinyXMLSkipped is what the XML form of the tiny network holds beside
// it, all of which a reader must leave out: the bounds, a changeset, a
// node and a primary road 4–2 that JOSM marks deleted, a primary road
// 5–2 that is no longer visible, and a deleted restriction that would
// forbid cars 1→2→3.
const tinyXMLSkipped = ` <bounds minlat="40.0000000" minlon="-83.0010000" maxlat="40.0040000" maxlon="-83.0000000"/>
 <changeset id="1" open="false"><tag k="comment" v="the tiny network"/></changeset>
 <node id="6" action="delete" lat="40.0010000" lon="-83.0010000"><tag k="highway" v="traffic_signals"/></node>
 <way id="18" action="delete"><nd ref="4"/><nd ref="2"/><tag k="highway" v="primary"/></way>
 <way id="19" visible="false"><nd ref="5"/><nd ref="2"/><tag k="highway" v="primary"/></way>
 <relation id="20" action="delete">
  <member type="way" ref="10" role="from"/>
  <member type="node" ref="2" role="via"/>
  <member type="way" ref="11" role="to"/>
  <tag k="type" v="restriction"/>
  <tag k="restriction" v="no_straight_on"/>
 </relation>
`

// tinyXML is the tiny network as OSM XML (testdata/tiny.osm, and
// compressed tiny.osm.gz and tiny.osm.bz2), with tinyXMLSkipped.
func tinyXML() []byte { return osmXML(tinyNodes, tinyWays, tinyXMLSkipped) }

// osmXML writes nodes and ways as OSM XML, with extra (elements of
// <osm>) before them.
func osmXML(nodes []osmNode, ways []osmWay, extra string) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<osm version=\"0.6\" generator=\"fleethub tests\">\n")
	b.WriteString(extra)
	for _, n := range nodes {
		fmt.Fprintf(&b, " <node id=\"%d\" version=\"1\" lat=\"%.7f\" lon=\"%.7f\"/>\n", n.id, n.lat, n.lon)
	}
	for _, w := range ways {
		fmt.Fprintf(&b, " <way id=\"%d\" version=\"1\">\n", w.id)
		for _, r := range w.refs {
			fmt.Fprintf(&b, "  <nd ref=\"%d\"/>\n", r)
		}
		for i := 0; i+1 < len(w.tags); i += 2 {
			b.WriteString(`  <tag k="`)
			xml.EscapeText(&b, []byte(w.tags[i])) //nolint:errcheck // a bytes.Buffer
			b.WriteString(`" v="`)
			xml.EscapeText(&b, []byte(w.tags[i+1])) //nolint:errcheck // a bytes.Buffer
			b.WriteString("\"/>\n")
		}
		b.WriteString(" </way>\n")
	}
	b.WriteString("</osm>\n")
	return b.Bytes()
}

// gzipped is b compressed with gzip, stored (level 0) so that the
// fixture's bytes do not depend on the deflater.
func gzipped(b []byte) []byte {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.NoCompression)
	zw.Write(b)
	zw.Close()
	return z.Bytes()
}

// pbw appends protobuf wire format.
type pbw []byte

func (b pbw) key(field, wt int) pbw { return binary.AppendUvarint(b, uint64(field)<<3|uint64(wt)) }

func (b pbw) uint(field int, v uint64) pbw { return binary.AppendUvarint(b.key(field, 0), v) }

func (b pbw) sint(field int, v int64) pbw { return b.uint(field, zz(v)) }

func (b pbw) bytes(field int, p []byte) pbw {
	return append(binary.AppendUvarint(b.key(field, 2), uint64(len(p))), p...)
}

func (b pbw) packed(field int, vs []uint64) pbw {
	var p []byte
	for _, v := range vs {
		p = binary.AppendUvarint(p, v)
	}
	return b.bytes(field, p)
}

func zz(v int64) uint64 { return uint64(v<<1) ^ uint64(v>>63) }

// deltas zigzag-codes the differences between successive values.
func deltas(vs []int64) []uint64 {
	out := make([]uint64, len(vs))
	var prev int64
	for i, v := range vs {
		out[i], prev = zz(v-prev), v
	}
	return out
}

// appendFileBlock appends the length of a BlobHeader, the BlobHeader and
// the Blob holding data, raw or zlib-compressed. Compression is stored
// (level 0) so that the fixture's bytes do not depend on the deflater.
func appendFileBlock(f []byte, typ string, data []byte, compress bool) []byte {
	var blob pbw
	if compress {
		var z bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&z, zlib.NoCompression)
		zw.Write(data)
		zw.Close()
		blob = blob.uint(2, uint64(len(data))).bytes(3, z.Bytes())
	} else {
		blob = blob.bytes(1, data)
	}
	return appendBlob(f, typ, blob)
}

// appendBlob appends the length of a BlobHeader, the BlobHeader and blob.
func appendBlob(f []byte, typ string, blob []byte) []byte {
	hdr := pbw(nil).bytes(1, []byte(typ)).uint(3, uint64(len(blob)))
	f = binary.BigEndian.AppendUint32(f, uint32(len(hdr)))
	return append(append(f, hdr...), blob...)
}

func headerBlock() []byte {
	return pbw(nil).bytes(4, []byte("OsmSchema-V0.6")).bytes(4, []byte("DenseNodes")).bytes(16, []byte("fleethub tests"))
}

// dataBlock encodes a PrimitiveBlock: a group of plain nodes, a group of
// dense nodes and a group of ways, each only when there are any.
func dataBlock(gran, latOff, lonOff int64, plain, dense []osmNode, ways []osmWay) []byte {
	strs := []string{""}
	index := map[string]uint64{"": 0}
	str := func(s string) uint64 {
		if i, ok := index[s]; ok {
			return i
		}
		index[s] = uint64(len(strs))
		strs = append(strs, s)
		return index[s]
	}
	unit := func(off int64, deg float64) int64 { return int64(math.Round((deg*1e9 - float64(off)) / float64(gran))) }
	var groups [][]byte
	if len(plain) > 0 {
		var g pbw
		for _, n := range plain {
			g = g.bytes(1, pbw(nil).sint(1, n.id).sint(8, unit(latOff, n.lat)).sint(9, unit(lonOff, n.lon)))
		}
		groups = append(groups, g)
	}
	if len(dense) > 0 {
		var ids, lats, lons []int64
		for _, n := range dense {
			ids, lats, lons = append(ids, n.id), append(lats, unit(latOff, n.lat)), append(lons, unit(lonOff, n.lon))
		}
		d := pbw(nil).packed(1, deltas(ids)).packed(8, deltas(lats)).packed(9, deltas(lons))
		groups = append(groups, pbw(nil).bytes(2, d))
	}
	if len(ways) > 0 {
		var g pbw
		for _, w := range ways {
			var keys, vals []uint64
			for i := 0; i+1 < len(w.tags); i += 2 {
				keys, vals = append(keys, str(w.tags[i])), append(vals, str(w.tags[i+1]))
			}
			g = g.bytes(3, pbw(nil).uint(1, uint64(w.id)).packed(2, keys).packed(3, vals).packed(8, deltas(w.refs)))
		}
		groups = append(groups, g)
	}
	var st pbw
	for _, s := range strs {
		st = st.bytes(1, []byte(s))
	}
	b := pbw(nil).bytes(1, st)
	for _, g := range groups {
		b = b.bytes(2, g)
	}
	return b.uint(17, uint64(gran)).uint(19, uint64(latOff)).uint(20, uint64(lonOff))
}

// fuzzSeeds are the FuzzReadPBF seeds: the fixture, pieces of it and
// headers announcing more than the limits.
func fuzzSeeds() map[string][]byte {
	tiny := tinyPBF()
	header := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	small := appendFileBlock(nil, "OSMData", dataBlock(100, 0, 0, nil, tinyNodes[:2], tinyWays[:1]), false)
	huge := pbw(nil).bytes(1, []byte("OSMData")).uint(3, 1<<30)
	return map[string][]byte{
		"tiny":            tiny,
		"header-only":     header,
		"one-way-raw":     small,
		"truncated":       tiny[:len(tiny)/2],
		"header-too-long": {0xff, 0xff, 0xff, 0xff},
		"blob-too-long":   append(binary.BigEndian.AppendUint32(nil, uint32(len(huge))), huge...),
		"empty":           {},
	}
}

func corpusFile(b []byte) []byte { return fmt.Appendf(nil, "go test fuzz v1\n[]byte(%q)\n", b) }

// TestWriteFixture checks that testdata holds what the writer writes;
// with -update it writes it:
//
//	go test ./internal/routing -run TestWriteFixture -update
func TestWriteFixture(t *testing.T) {
	files := map[string][]byte{filepath.Join("testdata", "tiny.osm.pbf"): tinyPBF(), filepath.Join("testdata", "trucks.osm.pbf"): trucksPBF(),
		filepath.Join("testdata", "avoid.osm.pbf"): avoidPBF()}
	for name, b := range fuzzSeeds() {
		files[filepath.Join("testdata", "fuzz", "FuzzReadPBF", name)] = corpusFile(b)
	}
	files[filepath.Join("testdata", "fuzz", "FuzzReadPBF", "tagged")] = corpusFile(appendFileBlock(nil, "OSMData", taggedBlock(), true))
	files[filepath.Join("testdata", "tiny.osm")] = tinyXML()
	files[filepath.Join("testdata", "tiny.osm.gz")] = gzipped(tinyXML())
	for name, b := range xmlFuzzSeeds() {
		files[filepath.Join("testdata", "fuzz", "FuzzReadXML", name)] = corpusFile(b)
	}
	g, err := Read(bytes.NewReader(tinyPBF()))
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(t.TempDir(), "tiny")
	cg, _ := g.costing(Auto)
	if err := writeGeometry(base, g); err != nil {
		t.Fatal(err)
	}
	if err := writeCosting(base, cg); err != nil {
		t.Fatal(err)
	}
	roads, _ := os.ReadFile(base + ".roads")
	auto, _ := os.ReadFile(base + ".auto")
	for name, b := range map[string][]byte{"roads": roads, "auto": auto, "short": roads[:len(roads)/3], "header-only": auto[:20]} {
		files[filepath.Join("testdata", "fuzz", "FuzzSavedGraph", name)] = corpusFile(b)
	}
	for path, want := range files {
		if *update {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s is not what the fixture writer writes (%v): go test ./internal/routing -run TestWriteFixture -update", path, err)
		}
	}
	// Go writes no bzip2: the committed file is made by the bzip2 tool
	bz := filepath.Join("testdata", "tiny.osm.bz2")
	b, err := os.ReadFile(bz)
	if err == nil {
		b, err = io.ReadAll(bzip2.NewReader(bytes.NewReader(b)))
	}
	if err != nil || !bytes.Equal(b, tinyXML()) {
		t.Errorf("%s does not hold testdata/tiny.osm (%v): bzip2 -9 -c testdata/tiny.osm > %s", bz, err, bz)
	}
}

// TestReadPBF reads back every node and way of the fixture: plain and
// dense nodes, raw and zlib blocks, two granularities and offsets.
func TestReadPBF(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "tiny.osm.pbf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	nodes := map[int64][2]float64{}
	var ways []osmWay
	err = readPBF(f, sink{
		node: func(id int64, lat, lon float64) { nodes[id] = [2]float64{lat, lon} },
		way: func(id int64, refs []int64, tags map[string]string) {
			w := osmWay{id: id, refs: refs}
			for k, v := range tags {
				w.tags = append(w.tags, k, v)
			}
			ways = append(ways, w)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != len(tinyNodes) {
		t.Errorf("%d nodes, want %d", len(nodes), len(tinyNodes))
	}
	for _, n := range tinyNodes {
		got, ok := nodes[n.id]
		if !ok || math.Abs(got[0]-n.lat) > 1e-9 || math.Abs(got[1]-n.lon) > 1e-9 {
			t.Errorf("node %d at %v, want %v %v", n.id, got, n.lat, n.lon)
		}
	}
	if len(ways) != len(tinyWays) {
		t.Fatalf("%d ways, want %d", len(ways), len(tinyWays))
	}
	for i, w := range tinyWays {
		got := ways[i]
		if got.id != w.id || fmt.Sprint(got.refs) != fmt.Sprint(w.refs) || len(got.tags) != len(w.tags) {
			t.Errorf("way %d: %v, want %v", w.id, got, w)
			continue
		}
		want := map[string]string{}
		for k := 0; k < len(w.tags); k += 2 {
			want[w.tags[k]] = w.tags[k+1]
		}
		for k := 0; k < len(got.tags); k += 2 {
			if want[got.tags[k]] != got.tags[k+1] {
				t.Errorf("way %d: tag %s=%s, want %s", w.id, got.tags[k], got.tags[k+1], want[got.tags[k]])
			}
		}
	}
}

func TestReadErrors(t *testing.T) {
	tiny := tinyPBF()
	header := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	seeds := fuzzSeeds()
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"header block only", header},
		{"cut in a length", tiny[:2]},
		{"cut in a header", tiny[:6]},
		{"cut in a blob", tiny[:len(tiny)-3]},
		{"header too long", seeds["header-too-long"]},
		{"blob too long", seeds["blob-too-long"]},
		{"lzma blob", appendBlob(nil, "OSMData", pbw(nil).uint(2, 10).bytes(4, []byte("not lzma")))},
		{"bad zlib", appendBlob(nil, "OSMData", pbw(nil).uint(2, 10).bytes(3, []byte("not zlib")))},
		{"bad block", appendFileBlock(nil, "OSMData", []byte{0x0a, 0x05, 0x01}, false)},
		{"dense nodes without coordinates", appendFileBlock(nil, "OSMData", pbw(nil).bytes(2, pbw(nil).bytes(2, pbw(nil).packed(1, []uint64{2, 2}))), false)},
		{"blob header with a bad wire type", []byte{0, 0, 0, 1, 0x0f}},
		{"buildings only", appendFileBlock(nil, "OSMData", dataBlock(100, 0, 0, nil, tinyNodes, tinyWays[6:7]), false)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := Read(bytes.NewReader(tc.in))
			if err == nil || g != nil {
				t.Errorf("Read = %v, %v; want an error", g, err)
			}
		})
	}
}

// TestLoadNamesTheFile: an extract without roads (buildings only, nodes
// only, or a header and nothing else) is refused, with or without a
// cache directory, by an error that names the file; nothing is saved.
func TestLoadNamesTheFile(t *testing.T) {
	header := appendFileBlock(nil, "OSMHeader", headerBlock(), false)
	for name, b := range map[string][]byte{
		"buildings":   appendFileBlock(header, "OSMData", dataBlock(100, 0, 0, nil, tinyNodes, tinyWays[6:7]), false),
		"nodes":       appendFileBlock(header, "OSMData", dataBlock(100, 0, 0, tinyNodes[:3], tinyNodes[3:], nil), false),
		"header-only": header,
	} {
		p := filepath.Join(t.TempDir(), name+".osm.pbf")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		for _, opts := range []Options{{}, {CacheDir: dir}, {CacheDir: dir, Costings: []Costing{Truck}}} {
			if g, err := Load(p, opts); err == nil || g != nil || err.Error() != "routing: "+p+" has no roads" {
				t.Errorf("%s, %+v: Load = %v, %v; want %q", name, opts, g, err, "routing: "+p+" has no roads")
			}
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: files saved for an extract without roads: %v", name, left)
		}
	}
	missing := filepath.Join(t.TempDir(), "missing.osm.pbf")
	if _, err := Load(missing, Options{}); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("Load of a missing file: %v", err)
	}
}

// SharedData returns the path of rel under ../shared/data, the real data
// kept beside the repository. Without it the test skips, except under
// CI=true, where it fails: CI always has the data.
func SharedData(tb testing.TB, rel string) string {
	tb.Helper()
	p, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "data", rel))
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(p); err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			tb.Fatalf("%s is missing, and CI must run the tests on the real data: %v", p, err)
		}
		tb.Skipf("skipping: %s is missing (the real data beside the repository, in ../shared/data)", p)
	}
	return p
}

// taggedBlock is an OSMData block with tagged dense and plain nodes and
// a restriction relation: dense nodes 1 (traffic signals), 2 (no tags)
// and 3 (a bollard), plain node 4 (access=no) and relation 9, no_left_turn
// from way 10 via node 2 to way 11.
func taggedBlock() []byte {
	strs := []string{"", "highway", "traffic_signals", "barrier", "bollard", "access", "no", "type", "restriction", "no_left_turn", "from", "via", "to"}
	var st pbw
	for _, s := range strs {
		st = st.bytes(1, []byte(s))
	}
	dense := pbw(nil).packed(1, deltas([]int64{1, 2, 3})).packed(8, deltas([]int64{400000, 400010, 400020})).
		packed(9, deltas([]int64{-830000, -830000, -830000})).packed(10, []uint64{1, 2, 0, 0, 3, 4, 0})
	plain := pbw(nil).sint(1, 4).packed(2, []uint64{5}).packed(3, []uint64{6}).sint(8, 400030).sint(9, -830000)
	rel := pbw(nil).uint(1, 9).packed(2, []uint64{7, 8}).packed(3, []uint64{8, 9}).packed(8, []uint64{10, 11, 12}).
		packed(9, deltas([]int64{10, 2, 11})).packed(10, []uint64{1, 0, 1})
	return pbw(nil).bytes(1, st).bytes(2, pbw(nil).bytes(2, dense)).bytes(2, pbw(nil).bytes(1, plain)).bytes(2, pbw(nil).bytes(4, rel)).uint(17, 100)
}

func TestReadTagsAndRelations(t *testing.T) {
	f := appendFileBlock(nil, "OSMData", taggedBlock(), true)
	tags := map[int64]map[string]string{}
	var rels []restriction
	nodes := 0
	err := readPBF(bytes.NewReader(f), sink{
		node:     func(int64, float64, float64) { nodes++ },
		nodeTags: func(id int64, t map[string]string) { tags[id] = t },
		relation: func(_ int64, ms []member, t map[string]string) {
			if r, ok := restrictionOf(ms, t); ok {
				rels = append(rels, r)
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[int64]map[string]string{1: {"highway": "traffic_signals"}, 3: {"barrier": "bollard"}, 4: {"access": "no"}}
	if nodes != 4 || fmt.Sprint(tags) != fmt.Sprint(want) {
		t.Errorf("%d nodes, tags %v, want 4 and %v", nodes, tags, want)
	}
	if len(rels) != 1 || rels[0] != (restriction{from: 10, via: 2, to: 11, costings: 1<<Auto | 1<<Truck}) {
		t.Errorf("restrictions %+v", rels)
	}
}
