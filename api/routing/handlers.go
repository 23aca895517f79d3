// Package routing serves the distance matrix of the routing engine
// (internal/routing) and the map matching of traces (internal/mapmatch):
// it decodes and validates a request, calls Graph.Route or
// Matcher.Match and encodes the answer.
//
// Handlers hold the road graph, set by New and only read afterwards, and
// a map matcher per costing, built on the costing's first match request
// (the auto one may be given to New); a loaded Graph and a Matcher are
// read-only and safe for concurrent use, so the handlers serve any
// number of requests at once.
package routing

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
)

// Limits of a matrix request.
const (
	MaxSources = 50
	MaxTargets = 50
)

// LatLon is a matrix location.
type LatLon struct {
	Lat *float64 `json:"lat" required:"true"`
	Lon *float64 `json:"lon" required:"true"`
}

// MatrixBody is POST /v1/routing/sources_to_targets.
type MatrixBody struct {
	Sources []LatLon   `json:"sources" required:"true"`
	Targets []LatLon   `json:"targets" required:"true"`
	Costing string     `json:"costing" required:"true" enum:"auto,truck,bicycle,pedestrian"`
	Truck   *TruckSize `json:"truck" doc:"for the truck costing, the vehicle's size; roads posted lower, narrower, shorter or lighter are closed to it. Fields left out take the default truck's: 4.11 m high, 2.6 m wide, 21.9 m long, 36.3 t"`
	Avoid   []string   `json:"avoid" required:"false" enum:"tolls,highways,ferries" doc:"kinds of road every route leaves out: tolls (toll=yes), highways (motorways and trunks with their links), ferries; locations snap to the roads that remain"`
}

// TruckSize is a truck's dimensions.
type TruckSize struct {
	Height *float64 `json:"height" doc:"meters, 1 to 6"`
	Width  *float64 `json:"width" doc:"meters, 1 to 5"`
	Length *float64 `json:"length" doc:"meters, 2 to 40"`
	Weight *float64 `json:"weight" doc:"tonnes, 0.5 to 100"`
}

// Located is where a source or target met the road network.
type Located struct {
	Snapped      bool     `json:"snapped" doc:"false when no road the costing may use lies within 2000 m: its row or column is null"`
	SnapDistance *float64 `json:"snap_distance" doc:"meters from the location to the road it was placed on; null when not snapped" source:"computed"`
	Reason       *string  `json:"reason" doc:"why the location has no routes; null when snapped"`
}

// Cell is one source-target result; null fields mean unreachable.
type Cell struct {
	Distance *float64 `json:"distance" doc:"kilometers; null when no route exists" source:"computed"`
	Time     *float64 `json:"time" doc:"seconds; null when no route exists" source:"computed"`
}

// MatrixData is the data of the answer.
type MatrixData struct {
	SourcesToTargets [][]Cell  `json:"sources_to_targets"`
	Units            string    `json:"units" doc:"kilometers for distance; time is in seconds"`
	Sources          []Located `json:"sources" doc:"where each source met the road network, in the request's order"`
	Targets          []Located `json:"targets" doc:"where each target met the road network, in the request's order"`
}

// MatrixResponse is the answer.
type MatrixResponse struct {
	Success bool       `json:"success"`
	Data    MatrixData `json:"data"`
}

// cells turns the engine's costs into the answer's cells: kilometers to
// the meter and seconds to the tenth, null when there is no route.
func cells(costs [][]routing.Cost) [][]Cell {
	out := make([][]Cell, len(costs))
	for i, row := range costs {
		out[i] = make([]Cell, len(row))
		for j, k := range row {
			if !k.OK {
				continue
			}
			km := math.Round(k.Meters/1000*1000) / 1000
			s := math.Round(k.Seconds*10) / 10
			out[i][j] = Cell{Distance: &km, Time: &s}
		}
	}
	return out
}

func located(snaps []routing.Snap) []Located {
	out := make([]Located, len(snaps))
	for i, s := range snaps {
		if s.OK {
			m := math.Round(s.Meters*10) / 10
			out[i] = Located{Snapped: true, SnapDistance: &m}
			continue
		}
		r := s.Reason
		out[i] = Located{Reason: &r}
	}
	return out
}

// Handlers serves the matrix and the matching; without a graph a
// request is checked as with one (400 for what cannot be read) and a
// valid one answers 501.
type Handlers struct {
	g  *routing.Graph
	mm *matchers
}

// New makes the handlers; auto, when not nil, is the matcher onto g's
// auto roads to use rather than building another.
func New(g *routing.Graph, auto *mapmatch.Matcher) *Handlers {
	h := &Handlers{g: g, mm: &matchers{}}
	if g != nil {
		h.mm.roads = g
	}
	h.mm.m[0] = auto
	return h
}

// NewMatching makes handlers that match onto roads (a hand-built
// network, in tests) and have no graph to answer the matrix with.
func NewMatching(roads mapmatch.Roads) *Handlers {
	return &Handlers{mm: &matchers{roads: roads}}
}

// Routes returns the routing route.
func (h *Handlers) Routes() []*api.Route {
	return []*api.Route{{Method: "POST", Path: "/v1/routing/sources_to_targets", Tag: "routing", Summary: "Distance and time matrix over the road network (at most 50×50); each location snaps onto the nearest road its costing may use",
		Permission: "routing:read", Request: MatrixBody{}, Response: MatrixResponse{}, Errors: []int{501}, Handler: h.matrix},
		{Method: "POST", Path: "/api/v1/fleet/routing/match", Tag: "routing", Summary: "Match a GPS trace (1 to 10,000 fixes) onto the roads: the route through the matched fixes road by road, with each road's way, class, speed limit, distance, duration and confidence; fixes off the roads are reported unmatched",
			Permission: "routing:read", Request: MatchBody{}, Response: MatchResponse{}, Errors: []int{501}, Handler: h.match}}
}

// errNoGraph answers a valid request when no road graph is loaded.
func errNoGraph() error {
	return api.Errf("not_implemented", "no road graph loaded (start with --osm)")
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
		f := field + "[" + strconv.Itoa(i) + "]."
		okLat := coordinate(bad, f+"lat", p.Lat, 90)
		if okLon := coordinate(bad, f+"lon", p.Lon, 180); okLat && okLon {
			out = append(out, [2]float64{*p.Lat, *p.Lon})
		}
	}
	return out
}

// coordinate checks a location's latitude or longitude x, within ±limit,
// naming field in bad when it is missing or out of range.
func coordinate(bad map[string]string, field string, x *float64, limit float64) bool {
	switch {
	case x == nil:
		bad[field] = "is required"
	case math.IsNaN(*x) || *x < -limit || *x > limit:
		bad[field] = "must be between -" + strconv.FormatFloat(limit, 'f', -1, 64) + " and " + strconv.FormatFloat(limit, 'f', -1, 64)
	default:
		return true
	}
	return false
}

func (h *Handlers) matrix(c *api.Ctx) error {
	var b MatrixBody
	if err := c.Bind(&b, false); err != nil {
		return err
	}
	bad := map[string]string{}
	src := points("sources", b.Sources, MaxSources, bad)
	dst := points("targets", b.Targets, MaxTargets, bad)
	costing, ok := routing.ParseCosting(b.Costing)
	if !ok {
		bad["costing"] = enum.Required(b.Costing, "auto", "truck", "bicycle", "pedestrian")
	}
	truck := truckSize(b.Truck, costing, bad)
	avoid := avoidSet(b.Avoid, bad)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	if h.g == nil {
		return errNoGraph()
	}
	res := h.g.Route(routing.Request{Sources: src, Targets: dst, Costing: costing, Truck: truck, Avoid: avoid})
	c.SetStatusCode(200)
	c.SetContentType("application/json")
	body, err := appendMatrix(make([]byte, 0, 64+40*len(src)*len(dst)), res)
	if err != nil {
		return api.Internal(err)
	}
	c.Response.SetBodyRaw(body)
	return nil
}

// appendMatrix appends the answer as MatrixResponse encodes it, written
// directly: a 50×50 answer is 2,500 cells, and reflection over them
// would cost as much as a tenth of the routing.
func appendMatrix(b []byte, res routing.Result) ([]byte, error) {
	var err error
	b = append(b, `{"success":true,"data":{"sources_to_targets":[`...)
	for i, row := range res.Costs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '[')
		for j, k := range row {
			if j > 0 {
				b = append(b, ',')
			}
			if !k.OK {
				b = append(b, `{"distance":null,"time":null}`...)
				continue
			}
			b = append(b, `{"distance":`...)
			if b, err = appendFixed(b, math.Round(k.Meters/1000*1000), 3); err != nil {
				return nil, err
			}
			b = append(b, `,"time":`...)
			if b, err = appendFixed(b, math.Round(k.Seconds*10), 1); err != nil {
				return nil, err
			}
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `],"units":"kilometers","sources":`...)
	if b, err = appendLocated(b, res.Sources); err != nil {
		return nil, err
	}
	b = append(b, `,"targets":`...)
	if b, err = appendLocated(b, res.Targets); err != nil {
		return nil, err
	}
	return append(b, "}}\n"...), nil
}

func appendLocated(b []byte, snaps []routing.Snap) ([]byte, error) {
	js, err := json.Marshal(located(snaps)) // a hundred small values at most
	if err != nil {
		return nil, fmt.Errorf("routing: snapped locations: %w", err)
	}
	return append(b, js...), nil
}

// appendFixed writes n/10^dec, n a whole number, as encoding/json writes
// that float: the shortest decimal, no trailing zeros. Numbers too large
// to be exact go through encoding/json, which refuses infinities.
func appendFixed(b []byte, n float64, dec int) ([]byte, error) {
	scale := [...]int64{1, 10, 100, 1000}[dec]
	if math.Abs(n) >= 1<<52 {
		js, err := json.Marshal(n / float64(scale))
		if err != nil {
			return nil, fmt.Errorf("routing: a cost of %v: %w", n, err)
		}
		return append(b, js...), nil
	}
	v := int64(n)
	if v < 0 {
		b = append(b, '-')
		v = -v
	}
	b = strconv.AppendInt(b, v/scale, 10)
	frac := v % scale
	if frac == 0 {
		return b, nil
	}
	b = append(b, '.')
	for d := scale / 10; d > 0 && frac > 0; d /= 10 {
		b = append(b, byte('0'+frac/d))
		frac %= d
	}
	return b, nil
}

// truckSize checks the truck's dimensions: only with the truck costing,
// each within its range.
func truckSize(t *TruckSize, costing routing.Costing, bad map[string]string) *routing.TruckSize {
	if t == nil {
		return nil
	}
	if costing != routing.Truck {
		bad["truck"] = "only with the truck costing"
		return nil
	}
	var out routing.TruckSize
	for _, f := range []struct {
		name   string
		v      *float64
		lo, hi float64
		dst    *float64
		unit   string
	}{
		{"height", t.Height, 1, 6, &out.Height, "meters"},
		{"width", t.Width, 1, 5, &out.Width, "meters"},
		{"length", t.Length, 2, 40, &out.Length, "meters"},
		{"weight", t.Weight, 0.5, 100, &out.Weight, "tonnes"},
	} {
		if f.v == nil {
			continue
		}
		if math.IsNaN(*f.v) || *f.v < f.lo || *f.v > f.hi {
			bad["truck."+f.name] = "must be between " + strconv.FormatFloat(f.lo, 'f', -1, 64) + " and " + strconv.FormatFloat(f.hi, 'f', -1, 64) + " " + f.unit
			continue
		}
		*f.dst = *f.v
	}
	return &out
}
