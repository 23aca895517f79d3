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

// speeds are the class speeds in km/h per costing; 0 means not usable.
var speeds = map[string][4]float64{
	//                 auto truck bicycle pedestrian
	"motorway":       {100, 80, 0, 0},
	"motorway_link":  {60, 50, 0, 0},
	"trunk":          {80, 70, 0, 0},
	"trunk_link":     {50, 45, 0, 0},
	"primary":        {60, 55, 14, 5},
	"primary_link":   {45, 40, 14, 5},
	"secondary":      {50, 45, 15, 5},
	"secondary_link": {40, 35, 15, 5},
	"tertiary":       {40, 35, 16, 5},
	"tertiary_link":  {35, 30, 16, 5},
	"unclassified":   {35, 30, 16, 5},
	"residential":    {30, 25, 16, 5},
	"living_street":  {10, 0, 12, 5},
	"service":        {15, 10, 12, 5},
	"road":           {30, 25, 14, 5},
	"track":          {15, 0, 10, 4.5},
	"cycleway":       {0, 0, 18, 5},
	"path":           {0, 0, 12, 4.5},
	"footway":        {0, 0, 0, 5},
	"pedestrian":     {0, 0, 0, 5},
	"steps":          {0, 0, 0, 2},
}

// classes names the road classes by the index an edge stores; classIndex
// is its inverse. Both are filled at init and only read afterwards.
var classes []string
var classIndex = map[string]uint8{}

func init() {
	for c := range speeds {
		classIndex[c] = uint8(len(classes))
		classes = append(classes, c)
	}
}

// kmh is the speed of class on costing c; 0 means not usable.
func kmh(class uint8, c Costing) float64 { return speeds[classes[class]][c] }
