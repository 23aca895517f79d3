package routing

import (
	"math"
	"slices"
	"sync"

	"github.com/fleethub/fleethub/api"
)

// Limits of a matrix request.
const (
	MaxSources = 50
	MaxTargets = 50
	// MaxSnapM is how far a point may be from the nearest usable road.
	MaxSnapM = 5000
)

// LatLon is a matrix location.
type LatLon struct {
	Lat *float64 `json:"lat" required:"true"`
	Lon *float64 `json:"lon" required:"true"`
}

// MatrixBody is POST /v1/routing/sources_to_targets.
type MatrixBody struct {
	Sources []LatLon `json:"sources" required:"true"`
	Targets []LatLon `json:"targets" required:"true"`
	Costing string   `json:"costing" required:"true" enum:"auto,truck,bicycle,pedestrian"`
}

// Cell is one source-target result; null fields mean unreachable.
type Cell struct {
	Distance *float64 `json:"distance" doc:"kilometers; null when no route exists"`
	Time     *float64 `json:"time" doc:"seconds; null when no route exists"`
}

// MatrixData is the data of the answer.
type MatrixData struct {
	SourcesToTargets [][]Cell `json:"sources_to_targets"`
	Units            string   `json:"units" doc:"kilometers for distance; time is in seconds"`
}

// MatrixResponse is the answer.
type MatrixResponse struct {
	Success bool       `json:"success"`
	Data    MatrixData `json:"data"`
}

// Matrix computes the source × target costs.
func (g *Graph) Matrix(sources, targets [][2]float64, costing string) [][]Cell {
	c := slices.Index(Costings, costing)
	snapT := make([]int32, len(targets))
	snapTD := make([]float64, len(targets))
	for i, t := range targets {
		n, d, ok := g.snap(t[0], t[1], c, MaxSnapM)
		if !ok {
			n = -1
		}
		snapT[i], snapTD[i] = n, d
	}
	// walking the snap legs at the costing's residential speed
	legKmh := math.Max(speeds["residential"][c], 5)
	out := make([][]Cell, len(sources))
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 2; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sec, dist, seen := make([]float64, g.Nodes()), make([]float64, g.Nodes()), make([]bool, g.Nodes())
			for i := range work {
				row := make([]Cell, len(targets))
				src, sd, ok := g.snap(sources[i][0], sources[i][1], c, MaxSnapM)
				if ok {
					costs := g.fromSource(src, snapT, c, sec, dist, seen)
					for j, k := range costs {
						if !k.OK {
							continue
						}
						legs := sd + snapTD[j]
						km := math.Round((k.Meters+legs)/1000*1000) / 1000
						s := math.Round((k.Seconds+legs/(legKmh/3.6))*10) / 10
						row[j] = Cell{Distance: &km, Time: &s}
					}
				}
				out[i] = row
			}
		}()
	}
	for i := range sources {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// Handlers serves the matrix; a nil graph answers 501.
type Handlers struct{ g *Graph }

// New makes the handlers.
func New(g *Graph) *Handlers { return &Handlers{g: g} }

// Routes returns the routing route.
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{{Method: "POST", Path: "/v1/routing/sources_to_targets", Tag: "routing", Summary: "Distance and time matrix over the road graph (at most 50×50)",
		Permission: "routing:read", Request: MatrixBody{}, Response: MatrixResponse{}, Errors: []int{501}, Handler: h.matrix}}
}

func points(field string, in []LatLon, max int, bad map[string]string) [][2]float64 {
	if len(in) == 0 {
		bad[field] = "at least one location is required"
	}
	if len(in) > max {
		bad[field] = "at most 50 locations"
	}
	out := make([][2]float64, 0, len(in))
	for i, p := range in {
		if p.Lat == nil || math.IsNaN(*p.Lat) || *p.Lat < -90 || *p.Lat > 90 {
			bad[field+"["+itoa(i)+"].lat"] = "must be between -90 and 90"
			continue
		}
		if p.Lon == nil || math.IsNaN(*p.Lon) || *p.Lon < -180 || *p.Lon > 180 {
			bad[field+"["+itoa(i)+"].lon"] = "must be between -180 and 180"
			continue
		}
		out = append(out, [2]float64{*p.Lat, *p.Lon})
	}
	return out
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func (h *Handlers) matrix(c *api.Ctx) error {
	if h.g == nil {
		return api.Errf("not_implemented", "no road graph loaded (start with --osm)")
	}
	var b MatrixBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	bad := map[string]string{}
	src := points("sources", b.Sources, MaxSources, bad)
	dst := points("targets", b.Targets, MaxTargets, bad)
	if !slices.Contains(Costings, b.Costing) {
		bad["costing"] = "must be auto, truck, bicycle or pedestrian"
	}
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	return c.JSON(200, MatrixResponse{Success: true, Data: MatrixData{SourcesToTargets: h.g.Matrix(src, dst, b.Costing), Units: "kilometers"}})
}
