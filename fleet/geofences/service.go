package geofences

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/fleet/geofences/fence"
	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/enum"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
)

// Errors of the service; api/geofences maps them to codes.
var (
	ErrNotFound = errors.New("geofences: geofence not found")
	// ErrBadCursor is a cursor the listing did not make, or made under
	// another scope.
	ErrBadCursor        = errors.New("geofences: invalid cursor")
	ErrMetadataTooLarge = errors.New("geofences: metadata over 64 KB")
)

// maxMetadata is the largest metadata of a geofence, as JSON: 64 KB,
// 65,536 bytes, the trip metadata's limit (trips.MaxMetadataBytes).
const maxMetadata = 64 << 10

// ValidationError is a bad geofence; Fields maps a field path to a
// message.
type ValidationError struct {
	Fields map[string]string
}

func (e *ValidationError) Error() string { return "geofences: invalid geofence" }

// Point is a position.
type Point struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// PointIn is a position as a request gives it (the center of a circle, a
// vertex of a polygon). Both coordinates are required: a missing one is
// refused, never taken as 0.
type PointIn struct {
	Latitude  *float64 `json:"latitude" required:"true" doc:"-90 to 90"`
	Longitude *float64 `json:"longitude" required:"true" doc:"-180 to 180"`
}

// point is p as a Point; p has passed checkPoint.
func (p PointIn) point() Point {
	var q Point
	if p.Latitude != nil {
		q.Latitude = *p.Latitude
	}
	if p.Longitude != nil {
		q.Longitude = *p.Longitude
	}
	return q
}

// checkPoint adds to bad each coordinate of p, named field.<name>, that
// is missing or out of range.
func checkPoint(bad map[string]string, field string, p PointIn) {
	switch {
	case p.Latitude == nil:
		bad[field+".latitude"] = "is required"
	case !(*p.Latitude >= -90 && *p.Latitude <= 90): // catches NaN
		bad[field+".latitude"] = "must be between -90 and 90"
	}
	switch {
	case p.Longitude == nil:
		bad[field+".longitude"] = "is required"
	case !(*p.Longitude >= -180 && *p.Longitude <= 180):
		bad[field+".longitude"] = "must be between -180 and 180"
	}
}

// Body creates or replaces a fence.
type Body struct {
	Name     string         `json:"name" required:"true" doc:"1 to 200 characters, none of them a control character"`
	Type     string         `json:"type" required:"true" enum:"circle,polygon"`
	Center   *PointIn       `json:"center,omitempty" doc:"circle: latitude and longitude both required"`
	RadiusM  *float64       `json:"radius_m,omitempty" doc:"circle, meters"`
	Polygon  []PointIn      `json:"polygon,omitempty" doc:"polygon: 3 to 10,000 vertices, not all on one line, ring closed or not; latitude and longitude of each required"`
	Metadata map[string]any `json:"metadata,omitempty" doc:"at most 64 KB (65,536 bytes as JSON); no key is the empty string, at any depth"`
}

// shape is the area of a geofence as stored: a body's center, radius
// and polygon once checked.
type shape struct {
	Center  *Point   `json:"center,omitempty"`
	RadiusM *float64 `json:"radius_m,omitempty"`
	Polygon []Point  `json:"polygon,omitempty"`
}

// View is a geofence as answered.
type View struct {
	GeofenceID string         `json:"geofence_id"`
	Name       string         `json:"name"`
	Type       string         `json:"type" enum:"circle,polygon"`
	Center     *Point         `json:"center,omitempty"`
	RadiusM    *float64       `json:"radius_m,omitempty"`
	Polygon    []Point        `json:"polygon,omitempty"`
	Metadata   map[string]any `json:"metadata"`
	CreatedAt  time.Time      `json:"created_at"`
	UpdatedAt  time.Time      `json:"updated_at"`
}

// Area converts a body to the shape the tracker uses; a
// *ValidationError names the bad fields.
func (b *Body) Area() (fence.Area, error) {
	bad := map[string]string{}
	switch {
	case strings.TrimSpace(b.Name) == "" || utf8.RuneCountInString(b.Name) > 200:
		bad["name"] = "is required, at most 200 characters"
	case jsonpath.HasControl(b.Name):
		bad["name"] = jsonpath.ControlRefusal
	}
	var a fence.Area
	switch b.Type {
	case "circle":
		if b.Center == nil {
			bad["center"] = "is required for a circle"
		} else {
			checkPoint(bad, "center", *b.Center)
			c := b.Center.point()
			a.Center = fence.Point{Lat: c.Latitude, Lon: c.Longitude}
		}
		if b.RadiusM == nil {
			bad["radius_m"] = "is required for a circle"
		} else {
			a.Radius = *b.RadiusM
		}
		if len(b.Polygon) > 0 {
			bad["polygon"] = "is only for type polygon"
		}
	case "polygon":
		for i, p := range b.Polygon {
			checkPoint(bad, "polygon["+strconv.Itoa(i)+"]", p)
			q := p.point()
			a.Polygon = append(a.Polygon, fence.Point{Lat: q.Latitude, Lon: q.Longitude})
		}
		if len(b.Polygon) == 0 {
			bad["polygon"] = "is required for a polygon"
		}
		if b.Center != nil {
			bad["center"] = "is only for type circle"
		}
		if b.RadiusM != nil {
			bad["radius_m"] = "is only for type circle"
		}
	default:
		bad["type"] = enum.Required(b.Type, "circle", "polygon")
	}
	if len(bad) == 0 {
		if err := a.Validate(); err != nil {
			var fe *fence.FieldError
			if errors.As(err, &fe) {
				f := strings.Replace(fe.Field, "radius_meters", "radius_m", 1)
				bad[f] = fe.Message
			} else {
				bad["area"] = err.Error()
			}
		}
	}
	if len(bad) > 0 {
		return a, &ValidationError{Fields: bad}
	}
	return a, nil
}

// encode checks a body and answers its shape and metadata as stored.
func (b *Body) encode() (area, md []byte, err error) {
	if _, err := b.Area(); err != nil {
		return nil, nil, err
	}
	sh := shape{RadiusM: b.RadiusM}
	if b.Center != nil {
		c := b.Center.point()
		sh.Center = &c
	}
	for _, p := range b.Polygon {
		sh.Polygon = append(sh.Polygon, p.point())
	}
	if area, err = json.Marshal(sh); err != nil {
		return nil, nil, fmt.Errorf("geofences: area: %w", err)
	}
	if md, err = json.Marshal(b.Metadata); err != nil {
		return nil, nil, &ValidationError{Fields: map[string]string{"metadata": "is not encodable: " + err.Error()}}
	}
	if b.Metadata == nil {
		md = []byte("{}")
	}
	if len(md) > maxMetadata {
		return nil, nil, ErrMetadataTooLarge
	}
	return area, md, nil
}

// Store keeps geofences.
type Store interface {
	CreateGeofence(ctx context.Context, g store.Geofence) error
	GetGeofence(ctx context.Context, s store.Scope, id string) (store.Geofence, error)
	ListGeofences(ctx context.Context, s store.Scope) ([]store.Geofence, error)
	UpdateGeofence(ctx context.Context, g store.Geofence) error
	DeleteGeofence(ctx context.Context, s store.Scope, id string) error
}

// Service keeps an organization's geofences.
type Service struct {
	st  Store
	now func() time.Time
}

// New makes the service.
func New(st Store) *Service { return &Service{st: st, now: time.Now} }

// view renders a stored geofence; an area or metadata that cannot be
// read is an error.
func view(g store.Geofence) (View, error) {
	v := View{GeofenceID: g.ID, Name: g.Name, Type: g.Type, Metadata: map[string]any{}, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	var b shape
	if err := json.Unmarshal(g.Area, &b); err != nil {
		return View{}, fmt.Errorf("geofences: stored area of %s: %w", g.ID, err)
	}
	v.Center, v.RadiusM, v.Polygon = b.Center, b.RadiusM, b.Polygon
	if len(g.Metadata) > 0 {
		if err := json.Unmarshal(g.Metadata, &v.Metadata); err != nil {
			return View{}, fmt.Errorf("geofences: stored metadata of %s: %w", g.ID, err)
		}
	}
	return v, nil
}

func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Create stores a new fence.
func (s *Service) Create(ctx context.Context, sc store.Scope, b Body) (View, error) {
	area, md, err := b.encode()
	if err != nil {
		return View{}, err
	}
	var idb [10]byte
	if _, err := rand.Read(idb[:]); err != nil {
		return View{}, fmt.Errorf("geofences: id: %w", err)
	}
	now := apitime.Of(s.now())
	g := store.Geofence{ID: "gf_" + hex.EncodeToString(idb[:]), Org: sc.Org, Env: sc.Env, Name: b.Name, Type: b.Type, Area: area, Metadata: md, CreatedAt: now, UpdatedAt: now}
	if err := s.st.CreateGeofence(ctx, g); err != nil {
		return View{}, err
	}
	return view(g)
}

// Page is a page of the scope's geofences, oldest first; Next continues
// after it, nil on the last page.
type Page struct {
	Geofences []View
	Next      *string
}

// cursorPrefix marks a cursor of this listing, so that a string that
// merely decodes is not read as a position.
const cursorPrefix = "geofence:"

// ListPage answers at most limit geofences of the scope in creation
// order (created_at, then id), after the position of cursor ("" for the
// first page); ErrBadCursor for a cursor the listing did not make. A
// position is a creation time and an id, so that a page continues
// where it was even when the geofence it ended with was deleted.
func (s *Service) ListPage(ctx context.Context, sc store.Scope, cursor string, limit int) (Page, error) {
	hash := pagecursor.Hash("geofences", sc.Org, sc.Env)
	var afterMS int64
	var afterID string
	if cursor != "" {
		pos, ok := pagecursor.Open(cursor, hash)
		rest, ok2 := strings.CutPrefix(pos, cursorPrefix)
		ms, id, ok3 := strings.Cut(rest, ":")
		n, err := strconv.ParseInt(ms, 10, 64)
		if !ok || !ok2 || !ok3 || err != nil || id == "" {
			return Page{}, ErrBadCursor
		}
		afterMS, afterID = n, id
	}
	gs, err := s.st.ListGeofences(ctx, sc)
	if err != nil {
		return Page{}, err
	}
	out := Page{Geofences: []View{}}
	for _, g := range gs {
		ms := g.CreatedAt.UnixMilli()
		if cursor != "" && (ms < afterMS || ms == afterMS && g.ID <= afterID) {
			continue
		}
		if len(out.Geofences) == limit {
			last := out.Geofences[limit-1]
			c := pagecursor.Seal(cursorPrefix+strconv.FormatInt(last.CreatedAt.UnixMilli(), 10)+":"+last.GeofenceID, hash)
			out.Next = &c
			break
		}
		v, err := view(g)
		if err != nil {
			return Page{}, err
		}
		out.Geofences = append(out.Geofences, v)
	}
	return out, nil
}

// Get reads a geofence; ErrNotFound when the scope has none of that id.
func (s *Service) Get(ctx context.Context, sc store.Scope, id string) (View, error) {
	g, err := s.st.GetGeofence(ctx, sc, id)
	if err != nil {
		return View{}, notFound(err)
	}
	return view(g)
}

// Replace replaces a geofence with the body decode answers. decode is
// called once the geofence is found, so that a missing geofence is
// ErrNotFound whatever the request carries.
func (s *Service) Replace(ctx context.Context, sc store.Scope, id string, decode func() (Body, error)) (View, error) {
	cur, err := s.st.GetGeofence(ctx, sc, id)
	if err != nil {
		return View{}, notFound(err)
	}
	b, err := decode()
	if err != nil {
		return View{}, err
	}
	area, md, err := b.encode()
	if err != nil {
		return View{}, err
	}
	cur.Name, cur.Type, cur.Area, cur.Metadata, cur.UpdatedAt = b.Name, b.Type, area, md, apitime.Of(s.now())
	if err := s.st.UpdateGeofence(ctx, cur); err != nil {
		return View{}, notFound(err)
	}
	return view(cur)
}

// Delete removes a geofence; ErrNotFound when the scope has none of that
// id.
func (s *Service) Delete(ctx context.Context, sc store.Scope, id string) error {
	return notFound(s.st.DeleteGeofence(ctx, sc, id))
}
