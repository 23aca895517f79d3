package routing

import (
	"fmt"
	"io"
)

// WayName is what a highway way is called: its name and ref tags.
type WayName struct {
	Name string
	Ref  string
}

// ReadWayNames reads the name and ref of every highway way of an
// OpenStreetMap extract (in any format Read takes), by way id; ways with
// neither are left out. The graph does not keep them: they tell whether
// two ways are one street, for judging a match against a drive.
func ReadWayNames(r io.Reader) (map[int64]WayName, error) {
	names := map[int64]WayName{}
	err := readExtract(r, sink{
		way: func(id int64, _ []int64, tags map[string]string) {
			if tags["highway"] == "" {
				return
			}
			if n := (WayName{Name: tags["name"], Ref: tags["ref"]}); n != (WayName{}) {
				names[id] = n
			}
		},
	})
	if err != nil {
		return nil, fmt.Errorf("read the ways' names: %w", err)
	}
	return names, nil
}
