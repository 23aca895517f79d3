package routing

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"strings"
)

// way is a highway (or ferry) way of the extract with its tags.
type way struct {
	id   int64
	refs []int64
	tags map[string]string
}

// restriction is a turn restriction: from a way, at a node, onto a way.
// only means every other turn from the from-way at the node is banned.
// costings is the set (bit per Costing) it applies to.
type restriction struct {
	from, via, to int64
	only          bool
	costings      uint8
}

// extract is what routing needs of an OSM file: the coordinates of every
// node, the tags of the nodes that carry routing tags (signals, barriers,
// access), the highways and the turn restrictions.
type extract struct {
	coords       map[int64][2]float64
	nodeTags     map[int64]map[string]string
	ways         []way
	restrictions []restriction
}

// importOSM reads an extract in any format readExtract recognises.
func importOSM(r io.Reader) (*extract, error) {
	x := &extract{coords: map[int64][2]float64{}, nodeTags: map[int64]map[string]string{}}
	err := readExtract(r, sink{
		node: func(id int64, lat, lon float64) { x.coords[id] = [2]float64{lat, lon} },
		nodeTags: func(id int64, tags map[string]string) {
			if tags["highway"] == "traffic_signals" || tags["barrier"] != "" || tags["access"] != "" ||
				tags["motor_vehicle"] != "" || tags["foot"] != "" || tags["bicycle"] != "" {
				x.nodeTags[id] = tags
			}
		},
		way: func(id int64, refs []int64, tags map[string]string) {
			if (tags["highway"] != "" || isFerry(tags)) && len(refs) >= 2 {
				x.ways = append(x.ways, way{id: id, refs: refs, tags: tags})
			}
		},
		relation: func(_ int64, ms []member, tags map[string]string) {
			if r, ok := restrictionOf(ms, tags); ok {
				x.restrictions = append(x.restrictions, r)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// readExtract reads an OpenStreetMap extract, its format recognised by
// its content rather than its name: gzip (1f 8b) or bzip2 ("BZh")
// compression is undone first, then the stream is OSM XML when its first
// byte that is not white space (after a byte order mark) is '<', and
// .osm.pbf otherwise. Its error names the format it read.
func readExtract(r io.Reader, s sink) error {
	br := bufio.NewReaderSize(r, 64<<10)
	magic, err := br.Peek(3)
	if err != nil && !errors.Is(err, io.EOF) { // a shorter stream is no compressed one
		return err
	}
	compression := ""
	switch {
	case bytes.HasPrefix(magic, []byte{0x1f, 0x8b}):
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("read as gzip: %w", err)
		}
		defer zr.Close()
		br, compression = bufio.NewReaderSize(zr, 64<<10), "gzip"
	case string(magic) == "BZh":
		br, compression = bufio.NewReaderSize(bzip2.NewReader(br), 64<<10), "bzip2"
	}
	head, err := br.Peek(512)
	if err != nil && !errors.Is(err, io.EOF) {
		if compression != "" {
			return fmt.Errorf("read as %s: %w", compression, err)
		}
		return err
	}
	read, format := readPBF, ".osm.pbf"
	if head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\uFEFF")), " \t\r\n"); len(head) > 0 && head[0] == '<' {
		read, format = readXML, "OSM XML"
	}
	if compression != "" {
		format += " (" + compression + ")"
	}
	if err := read(br, s); err != nil {
		return fmt.Errorf("read as %s: %w", format, err)
	}
	return nil
}

// restrictionOf reads a type=restriction relation with one from way, one
// via node and one to way (restrictions through a via way are not read).
// restriction applies to cars and trucks; restriction:motorcar,
// restriction:motor_vehicle and restriction:hgv to the one named;
// except= lifts it for the costings it names. Bicycles and pedestrians
// take no turn restriction, as OSRM's bicycle and foot profiles
// (restriction:bicycle is not read).
func restrictionOf(ms []member, tags map[string]string) (restriction, bool) {
	if tags["type"] != "restriction" {
		return restriction{}, false
	}
	var r restriction
	var value string
	for _, k := range []struct {
		key string
		set uint8
	}{{"restriction", 1<<Auto | 1<<Truck}, {"restriction:motorcar", 1 << Auto}, {"restriction:motor_vehicle", 1<<Auto | 1<<Truck}, {"restriction:hgv", 1 << Truck}} {
		if v := tags[k.key]; v != "" {
			value, r.costings = v, k.set
			break
		}
	}
	switch {
	case strings.HasPrefix(value, "no_"):
	case strings.HasPrefix(value, "only_"):
		r.only = true
	default:
		return restriction{}, false
	}
	for _, ex := range strings.Split(tags["except"], ";") {
		switch strings.TrimSpace(ex) {
		case "motorcar", "motor_vehicle":
			r.costings &^= 1 << Auto
		case "hgv":
			r.costings &^= 1 << Truck
		}
	}
	var froms, vias, tos int
	for _, m := range ms {
		switch {
		case m.role == "from" && m.typ == 1:
			r.from = m.id
			froms++
		case m.role == "via" && m.typ == 0:
			r.via = m.id
			vias++
		case m.role == "via":
			return restriction{}, false
		case m.role == "to" && m.typ == 1:
			r.to = m.id
			tos++
		}
	}
	if froms != 1 || vias != 1 || tos != 1 || r.costings == 0 {
		return restriction{}, false
	}
	return r, true
}
