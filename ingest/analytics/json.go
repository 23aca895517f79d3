package analytics

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/fleethub/fleethub/ingest/detect"
	"github.com/fleethub/fleethub/internal/geo"
	"github.com/fleethub/fleethub/internal/stamp"
	gojson "github.com/goccy/go-json"
)

// ErrStateVersion is returned by UnmarshalJSON for a state written by an
// unknown version of this package.
var ErrStateVersion = errors.New("analytics: unsupported state version")

// stateVersion is the version of the JSON form of Running.
const stateVersion = 1

// state is the JSON form of Running. Floats round-trip exactly through
// encoding/json, so a restored Running continues bit for bit.
type state struct {
	Version           int     `json:"v"`
	LocationsCount    int     `json:"locations_count"`
	EventsCount       int     `json:"events_count"`
	HarshAcceleration int     `json:"harsh_acceleration"`
	HarshBraking      int     `json:"harsh_braking"`
	HarshCornering    int     `json:"harsh_cornering"`
	Speeding          int     `json:"speeding"`
	DistanceM         float64 `json:"distance_m"`
	HighSpeedExtraM   float64 `json:"high_speed_extra_m"`
	MaxSpeedKmh       float64 `json:"max_speed_kmh"`
	// SpeedSeen is Running.speedSeen; absent from the states written
	// before it, where a maximum above 0 was measured.
	SpeedSeen       *bool   `json:"speed_seen,omitempty"`
	IdleSeconds     float64 `json:"idle_seconds"`
	SpeedingSeconds float64 `json:"speeding_seconds"`
	SafetyPoints    float64 `json:"safety_points"`
	EcoPoints       float64 `json:"eco_points"`

	First     time.Time    `json:"first"`
	Last      time.Time    `json:"last"`
	LastPoint *statePoint  `json:"last_point,omitempty"`
	Pauses    []statePause `json:"pauses,omitempty"`

	Anchor      *stateFix `json:"anchor,omitempty"`
	Pending     *stateFix `json:"pending,omitempty"`
	SpeedAnchor *stateFix `json:"speed_anchor,omitempty"`
	Jumps       int       `json:"jumps,omitempty"`
	Broken      bool      `json:"broken,omitempty"`
}

type statePause struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

type stateFix struct {
	Time     time.Time `json:"t"`
	Lat      float64   `json:"lat"`
	Lon      float64   `json:"lon"`
	Acc      float64   `json:"acc"`
	Speed    float64   `json:"speed,omitempty"`
	HasSpeed bool      `json:"has_speed,omitempty"`
}

type statePoint struct {
	Time       time.Time `json:"t"`
	Lat        float64   `json:"lat"`
	Lon        float64   `json:"lon"`
	Speed      float64   `json:"speed,omitempty"`
	HasSpeed   bool      `json:"has_speed,omitempty"`
	Heading    float64   `json:"heading,omitempty"`
	HasHeading bool      `json:"has_heading,omitempty"`
	Accuracy   float64   `json:"accuracy,omitempty"`
}

// MarshalJSON encodes the whole state of r, totals and filters alike
// (goccy/go-json writes the bytes encoding/json would, in a third of
// the time: a trip's state is stored with every upload).
func (r Running) MarshalJSON() ([]byte, error) { return gojson.Marshal(r.state()) }

// state is what MarshalJSON writes of r.
func (r Running) state() state {
	s := state{
		Version:           stateVersion,
		LocationsCount:    r.locations,
		EventsCount:       r.events,
		HarshAcceleration: r.harshAccel,
		HarshBraking:      r.harshBrake,
		HarshCornering:    r.harshCorner,
		Speeding:          r.speeding,
		DistanceM:         r.distanceM,
		HighSpeedExtraM:   r.highSpeedExtraM,
		MaxSpeedKmh:       r.maxSpeedKmh,
		SpeedSeen:         &r.speedSeen,
		IdleSeconds:       r.idleS,
		SpeedingSeconds:   r.speedingS,
		SafetyPoints:      r.safetyPoints,
		EcoPoints:         r.ecoPoints,
		First:             r.first,
		Last:              r.last,
		Anchor:            r.anchor.state(),
		Pending:           r.pending.state(),
		SpeedAnchor:       r.speedAnchor.state(),
		Jumps:             r.jumps,
		Broken:            r.broken,
	}
	if r.locations > 0 {
		p := r.lastPoint
		s.LastPoint = &statePoint{p.Time, p.Lat, p.Lon, finite(p.Speed), p.HasSpeed, finite(p.Heading), p.HasHeading, finite(p.Accuracy)}
	}
	for _, p := range r.pauses {
		s.Pauses = append(s.Pauses, statePause{p.from, p.to})
	}
	return s
}

// UnmarshalJSON restores a state written by MarshalJSON.
func (r *Running) UnmarshalJSON(b []byte) error {
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("analytics: decode state: %w", err)
	}
	if s.Version != stateVersion {
		return fmt.Errorf("%w: %d", ErrStateVersion, s.Version)
	}
	*r = Running{
		locations:       s.LocationsCount,
		events:          s.EventsCount,
		harshAccel:      s.HarshAcceleration,
		harshBrake:      s.HarshBraking,
		harshCorner:     s.HarshCornering,
		speeding:        s.Speeding,
		distanceM:       s.DistanceM,
		highSpeedExtraM: s.HighSpeedExtraM,
		maxSpeedKmh:     s.MaxSpeedKmh,
		speedSeen:       s.MaxSpeedKmh > 0,
		idleS:           s.IdleSeconds,
		speedingS:       s.SpeedingSeconds,
		safetyPoints:    s.SafetyPoints,
		ecoPoints:       s.EcoPoints,
		first:           s.First,
		last:            s.Last,
		anchor:          s.Anchor.fix(),
		pending:         s.Pending.fix(),
		speedAnchor:     s.SpeedAnchor.fix(),
		jumps:           s.Jumps,
		broken:          s.Broken,
	}
	if s.SpeedSeen != nil {
		r.speedSeen = *s.SpeedSeen
	}
	if p := s.LastPoint; p != nil {
		r.lastPoint = detect.Point{Time: p.Time, Lat: p.Lat, Lon: p.Lon, Speed: p.Speed, HasSpeed: p.HasSpeed,
			Heading: p.Heading, HasHeading: p.HasHeading, Accuracy: p.Accuracy}
	}
	for _, p := range s.Pauses {
		r.pauses = append(r.pauses, interval{p.From, p.To})
	}
	return nil
}

func (f *fix) state() *stateFix {
	if !f.ok {
		return nil
	}
	return &stateFix{f.t, f.lat, f.lon, f.acc, f.speed, f.hasSpeed}
}

func (s *stateFix) fix() fix {
	if s == nil {
		return fix{}
	}
	return fix{ok: true, t: s.Time, ts: stamp.Of(s.Time), lat: s.Lat, lon: s.Lon, cosLat: math.Cos(s.Lat * geo.Degree),
		acc: s.Acc, speed: s.Speed, hasSpeed: s.HasSpeed}
}

// finite maps NaN and infinities, which JSON cannot carry, to 0. Only the
// last point, kept as given, can hold them.
func finite(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
