// Package geofences serves circle and polygon geofences of an
// organization: create, list, get, replace, delete. Vehicles entering and
// leaving them produce geofence_events (ingest/geofencing).
package geofences

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/filters/geofence"
	"github.com/fleethub/fleethub/internal/store"
)

// Point is a position.
type Point struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
}

// Body creates or replaces a geofence.
type Body struct {
	Name     string         `json:"name" required:"true"`
	Type     string         `json:"type" required:"true" enum:"circle,polygon"`
	Center   *Point         `json:"center,omitempty" doc:"circle"`
	RadiusM  *float64       `json:"radius_m,omitempty" doc:"circle, meters"`
	Polygon  []Point        `json:"polygon,omitempty" doc:"polygon: at least three vertices, ring closed or not"`
	Metadata map[string]any `json:"metadata,omitempty"`
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

// ListView lists geofences.
type ListView struct {
	Geofences []View `json:"geofences"`
	Count     int    `json:"count"`
}

// Deleted answers a delete.
type Deleted struct {
	Success    bool   `json:"success"`
	GeofenceID string `json:"geofence_id"`
}

// Area converts a body to the shape the tracker uses; errors name fields.
func (b *Body) Area() (geofence.Area, error) {
	bad := map[string]string{}
	if strings.TrimSpace(b.Name) == "" || len(b.Name) > 200 {
		bad["name"] = "is required, at most 200 characters"
	}
	var a geofence.Area
	switch b.Type {
	case "circle":
		if b.Center == nil {
			bad["center"] = "is required for a circle"
		} else {
			a.Center = geofence.Point{Lat: b.Center.Latitude, Lon: b.Center.Longitude}
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
		for _, p := range b.Polygon {
			a.Polygon = append(a.Polygon, geofence.Point{Lat: p.Latitude, Lon: p.Longitude})
		}
		if len(b.Polygon) == 0 {
			bad["polygon"] = "is required for a polygon"
		}
		if b.Center != nil || b.RadiusM != nil {
			bad["center"] = "center and radius_m are only for type circle"
		}
	default:
		bad["type"] = "must be circle or polygon"
	}
	if len(bad) == 0 {
		if err := a.Validate(); err != nil {
			var fe *geofence.FieldError
			if errors.As(err, &fe) {
				f := strings.Replace(fe.Field, "radius_meters", "radius_m", 1)
				bad[f] = fe.Message
			} else {
				bad["area"] = err.Error()
			}
		}
	}
	if len(bad) > 0 {
		return a, api.Validation("validation_failed", bad)
	}
	return a, nil
}

// Handlers serves geofences.
type Handlers struct {
	st  store.Geofences
	now func() time.Time
}

// New makes the handlers.
func New(st store.Geofences) *Handlers { return &Handlers{st: st, now: time.Now} }

func view(g store.Geofence) View {
	v := View{GeofenceID: g.ID, Name: g.Name, Type: g.Type, Metadata: map[string]any{}, CreatedAt: g.CreatedAt, UpdatedAt: g.UpdatedAt}
	var b Body
	_ = json.Unmarshal(g.Area, &b)
	v.Center, v.RadiusM, v.Polygon = b.Center, b.RadiusM, b.Polygon
	if len(g.Metadata) > 0 {
		_ = json.Unmarshal(g.Metadata, &v.Metadata)
	}
	return v
}

// Routes returns the geofence routes.
func (h *Handlers) Routes() []*api.Route {
	id := []api.Param{{Name: "geofence_id", In: "path", Type: "string", Required: true}}
	return []*api.Route{
		{Method: "POST", Path: "/v1/geofences", Tag: "geofences", Summary: "Create a circle or polygon geofence", Permission: "fleet:write",
			Request: Body{}, Response: View{}, Status: 201, Handler: h.create},
		{Method: "GET", Path: "/v1/geofences", Tag: "geofences", Summary: "List geofences", Permission: "fleet:read", Response: ListView{}, Handler: h.list},
		{Method: "GET", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Get a geofence", Permission: "fleet:read", Params: id,
			Response: View{}, Handler: h.get},
		{Method: "PUT", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Replace a geofence", Permission: "fleet:write", Params: id,
			Request: Body{}, Response: View{}, Handler: h.put},
		{Method: "DELETE", Path: "/v1/geofences/{geofence_id}", Tag: "geofences", Summary: "Delete a geofence", Permission: "fleet:write", Params: id,
			Response: Deleted{}, Handler: h.delete},
	}
}

func (h *Handlers) decode(c *api.Ctx) (Body, []byte, []byte, error) {
	var b Body
	if err := c.Bind(&b, false); err != nil {
		return b, nil, nil, err
	}
	if _, err := b.Area(); err != nil {
		return b, nil, nil, err
	}
	shape, _ := json.Marshal(Body{Center: b.Center, RadiusM: b.RadiusM, Polygon: b.Polygon})
	md, _ := json.Marshal(b.Metadata)
	if b.Metadata == nil {
		md = []byte("{}")
	}
	if len(md) > 64<<10 {
		return b, nil, nil, api.Errf("payload_too_large", "metadata must be under 64 KB")
	}
	return b, shape, md, nil
}

func notFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return api.Errf("geofence_not_found", "geofence not found")
	}
	return err
}

func (h *Handlers) create(c *api.Ctx) error {
	b, shape, md, err := h.decode(c)
	if err != nil {
		return err
	}
	var idb [10]byte
	_, _ = rand.Read(idb[:])
	org, env := c.Scope()
	now := h.now().UTC().Truncate(time.Millisecond)
	g := store.Geofence{ID: "gf_" + hex.EncodeToString(idb[:]), Org: org, Env: env, Name: b.Name, Type: b.Type, Area: shape, Metadata: md, CreatedAt: now, UpdatedAt: now}
	if err := h.st.CreateGeofence(c.Context(), g); err != nil {
		return err
	}
	return c.JSON(201, view(g))
}

func (h *Handlers) list(c *api.Ctx) error {
	org, env := c.Scope()
	gs, err := h.st.ListGeofences(c.Context(), store.Scope{Org: org, Env: env})
	if err != nil {
		return err
	}
	out := ListView{Geofences: []View{}, Count: len(gs)}
	for _, g := range gs {
		out.Geofences = append(out.Geofences, view(g))
	}
	return c.JSON(200, out)
}

func (h *Handlers) get(c *api.Ctx) error {
	org, env := c.Scope()
	g, err := h.st.GetGeofence(c.Context(), store.Scope{Org: org, Env: env}, c.PathParam("geofence_id"))
	if err != nil {
		return notFound(err)
	}
	return c.JSON(200, view(g))
}

func (h *Handlers) put(c *api.Ctx) error {
	org, env := c.Scope()
	sc := store.Scope{Org: org, Env: env}
	cur, err := h.st.GetGeofence(c.Context(), sc, c.PathParam("geofence_id"))
	if err != nil {
		return notFound(err)
	}
	b, shape, md, err := h.decode(c)
	if err != nil {
		return err
	}
	cur.Name, cur.Type, cur.Area, cur.Metadata, cur.UpdatedAt = b.Name, b.Type, shape, md, h.now().UTC().Truncate(time.Millisecond)
	if err := h.st.UpdateGeofence(c.Context(), cur); err != nil {
		return notFound(err)
	}
	return c.JSON(200, view(cur))
}

func (h *Handlers) delete(c *api.Ctx) error {
	org, env := c.Scope()
	id := c.PathParam("geofence_id")
	if err := h.st.DeleteGeofence(c.Context(), store.Scope{Org: org, Env: env}, id); err != nil {
		return notFound(err)
	}
	return c.JSON(200, Deleted{Success: true, GeofenceID: id})
}
