package routing

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
)

// MaxMatchPoints is the most fixes one match request may carry.
const MaxMatchPoints = 10000

// MatchPoint is one GPS fix of a trace.
type MatchPoint struct {
	Latitude  *float64 `json:"latitude" required:"true"`
	Longitude *float64 `json:"longitude" required:"true"`
	Timestamp string   `json:"timestamp" required:"true" doc:"ISO 8601; not before the previous fix's"`
	AccuracyM *float64 `json:"accuracy_m" doc:"meters, horizontal, greater than 0 and at most 1000; the fix's candidate roads lie within 4 times it (at least 50 m, at most 200 m). Left out: 10 m"`
	SpeedKmh  *float64 `json:"speed_kmh" doc:"the speed over the ground the device measured, km/h, 0 to 500; the smoother reads it as the speed along the road (a value far from what the fixes around it show is left out). Left out: not known"`
	Heading   *float64 `json:"heading" doc:"the course over the ground the device measured, degrees clockwise from north, 0 to 360; only with speed_kmh (refused without it), and read at 3 m/s (10.8 km/h) or more of it: a road whose direction there disagrees is less likely. Left out: not known"`
}

// MatchBody is POST /api/v1/fleet/routing/match.
type MatchBody struct {
	Costing string       `json:"costing" required:"true" enum:"auto,bicycle,pedestrian" doc:"the roads the trace may be matched onto"`
	Points  []MatchPoint `json:"points" required:"true" doc:"1 to 10,000 fixes in time order"`
}

// GeoLine is a GeoJSON LineString, [longitude, latitude] pairs.
type GeoLine struct {
	Type        string       `json:"type" enum:"LineString"`
	Coordinates [][2]float64 `json:"coordinates" source:"computed" doc:"[longitude, latitude] pairs along the road, in the direction travelled"`
}

// MatchSegment is a stretch of a matching on one road.
type MatchSegment struct {
	WayIDs           []int64 `json:"way_ids" doc:"the OpenStreetMap way the stretch lies on"`
	RoadClass        string  `json:"road_class" doc:"the way's highway class (motorway, trunk, primary, secondary, tertiary, unclassified, residential, service, living_street, ...)"`
	SpeedLimitKmh    float64 `json:"speed_limit_kmh" doc:"the limit in the direction travelled"`
	SpeedLimitSource string  `json:"speed_limit_source" enum:"posted,class_default" doc:"posted: the way's maxspeed tag; class_default: the default of its class where none is posted"`
	DistanceM        float64 `json:"distance_m" source:"computed" doc:"meters along the road"`
	DurationS        float64 `json:"duration_s" source:"computed" doc:"seconds, from the fixes' timestamps, shared between the roads between two fixes by distance"`
	Confidence       float64 `json:"confidence" source:"computed" doc:"0 to 1: the lower confidence of the matched fixes the stretch lies between"`
	Geometry         GeoLine `json:"geometry"`
}

// Matching is an unbroken run of matched fixes and its route.
type Matching struct {
	FirstPoint int            `json:"first_point" doc:"index of the run's first fix"`
	LastPoint  int            `json:"last_point" doc:"index of its last fix"`
	DistanceM  float64        `json:"distance_m" source:"computed" doc:"meters along the roads from the first fix's place on them to the last's"`
	DurationS  float64        `json:"duration_s" source:"computed" doc:"seconds from the first fix's timestamp to the last's"`
	Confidence float64        `json:"confidence" source:"computed" doc:"0 to 1: the mean confidence of the run's fixes"`
	WayIDs     []int64        `json:"way_ids" doc:"the ways of the segments in order, each once per stretch"`
	Segments   []MatchSegment `json:"segments" doc:"the route one road at a time; empty for a run of one fix"`
}

// Tracepoint is where one fix was matched, or that it was not.
type Tracepoint struct {
	Index      int      `json:"index"`
	Matched    bool     `json:"matched" doc:"false: no road the costing may use lies within the fix's radius, or the fix is not a location; such fixes end a matching and are not placed"`
	Matching   *int     `json:"matching" doc:"index of the matching the fix belongs to; null when unmatched"`
	Latitude   *float64 `json:"latitude" source:"computed" doc:"the fix's place on its road (a fix a little behind the previous one, the way it was travelled, has not moved: the previous fix's place); the matchings' distance_m and geometry run through these places; null when unmatched"`
	Longitude  *float64 `json:"longitude" source:"computed" doc:"null when unmatched"`
	DistanceM  *float64 `json:"distance_m" source:"computed" doc:"meters from the fix to its place on the road; null when unmatched"`
	WayID      *int64   `json:"way_id" doc:"the road's way; null when unmatched"`
	Confidence *float64 `json:"confidence" source:"computed" doc:"0 to 1: the chosen road's share of the likelihood of the fix's candidate roads; null when unmatched"`
}

// MatchData is the data of a match answer.
type MatchData struct {
	Matchings      []Matching   `json:"matchings" doc:"the runs of matched fixes in trace order"`
	Tracepoints    []Tracepoint `json:"tracepoints" doc:"one per fix, in the request's order"`
	MatchedCount   int          `json:"matched_count" source:"computed"`
	UnmatchedCount int          `json:"unmatched_count" source:"computed"`
}

// MatchResponse is the answer of a match.
type MatchResponse struct {
	Success bool      `json:"success"`
	Data    MatchData `json:"data"`
}

// matchers builds one map matcher per costing on first use.
type matchers struct {
	roads mapmatch.Roads // nil: no road network
	once  [3]sync.Once
	m     [3]*mapmatch.Matcher
}

var matchCostings = map[string]routing.Costing{"auto": routing.Auto, "bicycle": routing.Bicycle, "pedestrian": routing.Pedestrian}

func (ms *matchers) get(c routing.Costing) *mapmatch.Matcher {
	i := map[routing.Costing]int{routing.Auto: 0, routing.Bicycle: 1, routing.Pedestrian: 2}[c]
	ms.once[i].Do(func() {
		if ms.m[i] == nil {
			ms.m[i] = mapmatch.New(ms.roads, c, mapmatch.Config{})
		}
	})
	return ms.m[i]
}

func (h *Handlers) match(c *api.Ctx) error {
	var b MatchBody
	if err := bindFast(c, &b); err != nil {
		return err
	}
	bad := map[string]string{}
	costing, ok := matchCostings[b.Costing]
	if !ok {
		bad["costing"] = enum.Required(b.Costing, "auto", "bicycle", "pedestrian")
	}
	pts, times := tracePoints(b.Points, bad)
	if len(bad) > 0 {
		return api.Validation("validation_failed", bad)
	}
	if h.mm.roads == nil {
		return errNoGraph()
	}
	res := h.mm.get(costing).Match(pts)
	return writeFast(c, MatchResponse{Success: true, Data: matchData(res, times)})
}

// tracePoints checks a trace's fixes and returns them with their times
// (unix seconds).
func tracePoints(in []MatchPoint, bad map[string]string) ([]mapmatch.Point, []float64) {
	switch {
	case len(in) == 0:
		bad["points"] = "at least one point is required"
	case len(in) > MaxMatchPoints:
		bad["points"] = "at most 10000 points"
	}
	if len(bad) > 0 && len(in) > MaxMatchPoints {
		return nil, nil
	}
	pts, times := make([]mapmatch.Point, len(in)), make([]float64, len(in))
	var prev time.Time
	for i, p := range in {
		f := "points[" + strconv.Itoa(i) + "]."
		switch {
		case p.Latitude == nil:
			bad[f+"latitude"] = "is required"
		case math.IsNaN(*p.Latitude) || *p.Latitude < -90 || *p.Latitude > 90:
			bad[f+"latitude"] = "must be between -90 and 90"
		default:
			pts[i].Lat = *p.Latitude
		}
		switch {
		case p.Longitude == nil:
			bad[f+"longitude"] = "is required"
		case math.IsNaN(*p.Longitude) || *p.Longitude < -180 || *p.Longitude > 180:
			bad[f+"longitude"] = "must be between -180 and 180"
		default:
			pts[i].Lon = *p.Longitude
		}
		if p.AccuracyM != nil {
			if !(*p.AccuracyM > 0 && *p.AccuracyM <= 1000) {
				bad[f+"accuracy_m"] = "must be greater than 0 and at most 1000"
			} else {
				pts[i].Accuracy = *p.AccuracyM
			}
		}
		if p.SpeedKmh != nil {
			if !(*p.SpeedKmh >= 0 && *p.SpeedKmh <= 500) {
				bad[f+"speed_kmh"] = "must be between 0 and 500"
			} else {
				pts[i].Speed, pts[i].HasSpeed = *p.SpeedKmh/3.6, true
			}
		}
		if p.Heading != nil {
			switch {
			case !(*p.Heading >= 0 && *p.Heading <= 360):
				bad[f+"heading"] = "must be between 0 and 360"
			case p.SpeedKmh == nil:
				// the matcher reads a course only at a measured speed
				// of 3 m/s or more: without one it would go unread
				bad[f+"heading"] = "needs speed_kmh: the course is read only at a measured speed of 10.8 km/h or more"
			default:
				pts[i].Heading, pts[i].HasHeading = *p.Heading, true
			}
		}
		ts, err := apitime.Parse(p.Timestamp)
		switch {
		case p.Timestamp == "":
			bad[f+"timestamp"] = "is required"
		case err != nil:
			bad[f+"timestamp"] = "must be an ISO 8601 date-time such as 2026-11-23T10:00:00Z"
		case i > 0 && !prev.IsZero() && ts.Before(prev):
			bad[f+"timestamp"] = "must not be before points[" + strconv.Itoa(i-1) + "].timestamp"
		default:
			times[i] = float64(ts.UnixNano()) / 1e9
			pts[i].Time = times[i]
		}
		if err == nil {
			prev = ts
		}
	}
	return pts, times
}

// matchData is the answer for a matched trace whose fixes were taken at
// times (unix seconds).
func matchData(res mapmatch.Result, times []float64) MatchData {
	d := MatchData{Matchings: make([]Matching, 0, len(res.Runs)), Tracepoints: make([]Tracepoint, len(res.Matches))}
	for i, m := range res.Matches {
		d.Tracepoints[i] = Tracepoint{Index: i}
		if !m.Matched {
			d.UnmatchedCount++
			continue
		}
		d.MatchedCount++
		lat, lon, dist, way, conf := round(m.Lat, 7), round(m.Lon, 7), round(m.Meters, 1), m.WayID, round(m.Confidence, 3)
		d.Tracepoints[i] = Tracepoint{Index: i, Matched: true, Latitude: &lat, Longitude: &lon, DistanceM: &dist, WayID: &way, Confidence: &conf}
	}
	at := func(x float64) float64 { // the time at a place along the trace
		k := min(int(x), len(times)-1)
		if k+1 >= len(times) {
			return times[k]
		}
		return times[k] + (x-float64(k))*(times[k+1]-times[k])
	}
	for ri, r := range res.Runs {
		mt := Matching{FirstPoint: r.First, LastPoint: r.Last, DistanceM: round(r.Meters, 1), DurationS: round(times[r.Last]-times[r.First], 3),
			WayIDs: []int64{}, Segments: make([]MatchSegment, 0, len(r.Segments))}
		conf := 0.0
		for i := r.First; i <= r.Last; i++ {
			idx := ri
			d.Tracepoints[i].Matching = &idx
			conf += res.Matches[i].Confidence
		}
		mt.Confidence = round(conf/float64(r.Last-r.First+1), 3)
		for _, s := range r.Segments {
			src := "class_default"
			if s.Posted {
				src = "posted"
			}
			line := GeoLine{Type: "LineString", Coordinates: make([][2]float64, len(s.Lat))}
			for k := range s.Lat {
				line.Coordinates[k] = [2]float64{round(s.Lon[k], 7), round(s.Lat[k], 7)}
			}
			mt.WayIDs = append(mt.WayIDs, s.WayID)
			mt.Segments = append(mt.Segments, MatchSegment{WayIDs: []int64{s.WayID}, RoadClass: s.Class.String(), SpeedLimitKmh: s.LimitKmh,
				SpeedLimitSource: src, DistanceM: round(s.Meters, 1), DurationS: round(at(s.End)-at(s.Start), 3),
				Confidence: round(s.Confidence, 3), Geometry: line})
		}
		d.Matchings = append(d.Matchings, mt)
	}
	return d
}

func round(v float64, dec int) float64 {
	p := math.Pow(10, float64(dec))
	return math.Round(v*p) / p
}
