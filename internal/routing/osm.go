package routing

import "io"

// road is a way that routes may use.
type road struct {
	refs   []int64
	class  uint8
	oneway int // 0 both, 1 forward, -1 backward
}

// extract is what the graph needs of an .osm.pbf stream: the coordinates
// of every node and the roads among the ways.
type extract struct {
	coords map[int64][2]float64
	roads  []road
}

// importOSM reads an .osm.pbf stream and keeps every node and every way
// that is a road.
func importOSM(r io.Reader) (*extract, error) {
	x := &extract{coords: map[int64][2]float64{}}
	err := readPBF(r, sink{
		node: func(id int64, lat, lon float64) { x.coords[id] = [2]float64{lat, lon} },
		way: func(_ int64, refs []int64, tags map[string]string) {
			if w, ok := roadOf(refs, tags); ok {
				x.roads = append(x.roads, w)
			}
		},
	})
	if err != nil {
		return nil, err
	}
	return x, nil
}

// roadOf reports whether a way is a road (a highway of a known class with
// at least two nodes, not an area) and which way it may be driven:
// oneway=yes/true/1 forward, oneway=-1/reverse backward, and motorways and
// roundabouts forward unless tagged otherwise.
func roadOf(refs []int64, tags map[string]string) (road, bool) {
	c, ok := classIndex[tags["highway"]]
	if !ok || len(refs) < 2 || tags["area"] == "yes" {
		return road{}, false
	}
	w := road{refs: refs, class: c}
	switch tags["oneway"] {
	case "yes", "true", "1":
		w.oneway = 1
	case "-1", "reverse":
		w.oneway = -1
	}
	if (tags["highway"] == "motorway" || tags["junction"] == "roundabout") && tags["oneway"] == "" {
		w.oneway = 1
	}
	return w, true
}
