package routing

import (
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

// importOSM reads an .osm.pbf stream.
func importOSM(r io.Reader) (*extract, error) {
	x := &extract{coords: map[int64][2]float64{}, nodeTags: map[int64]map[string]string{}}
	err := readPBF(r, sink{
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
