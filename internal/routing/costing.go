package routing

import "strconv"

// Costing selects which roads a route may use and how fast it goes on them.
type Costing uint8

// The costings. A Costing outside these is a programming error.
const (
	Auto Costing = iota
	Truck
	Bicycle
	Pedestrian
)

var costingNames = [...]string{"auto", "truck", "bicycle", "pedestrian"}

// ParseCosting returns the costing of a name: auto, truck, bicycle or
// pedestrian.
func ParseCosting(name string) (Costing, bool) {
	for i, n := range costingNames {
		if n == name {
			return Costing(i), true
		}
	}
	return 0, false
}

func (c Costing) String() string {
	if int(c) < len(costingNames) {
		return costingNames[c]
	}
	return "costing(" + strconv.Itoa(int(c)) + ")"
}
