package vehicles

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/apitime"
	"github.com/fleethub/fleethub/internal/pagecursor"
	"github.com/fleethub/fleethub/internal/store"
	lru "github.com/hashicorp/golang-lru/v2"
)

// Errors of the service; api/vehicles maps them to codes.
var (
	ErrNotFound  = errors.New("vehicles: vehicle not found")
	ErrBadCursor = errors.New("vehicles: invalid cursor")
)

// Store keeps vehicle profiles.
type Store interface {
	PutVehicle(ctx context.Context, v store.Vehicle) (store.Vehicle, error)
	GetVehicle(ctx context.Context, s store.Scope, id string) (store.Vehicle, error)
	ListVehicles(ctx context.Context, f store.VehicleFilter) ([]store.Vehicle, error)
	ListVehicleFleets(ctx context.Context, limit int) ([]store.VehicleFleet, error)
	DeleteVehicle(ctx context.Context, s store.Scope, id string) error
}

// Config of the service; zero fields take the defaults.
type Config struct {
	// FleetTTL is how long Fleet answers from its cache before reading
	// the store again (default 5 s): the longest another node's change
	// takes to reach this one.
	FleetTTL time.Duration
	// SoleWriter says that every write of the profiles goes through this
	// Service (the embedded store, which one process owns): then a cached
	// answer stays right until a write here replaces it, and FleetTTL is
	// not used; and after Load, while the profiles that name a fleet are
	// at most FleetCacheSize, Fleet answers from all of them in memory
	// and never reads the store.
	SoleWriter bool
	// FleetCacheSize bounds the vehicles whose fleet is cached (default
	// 65,536; the least recently asked are dropped first).
	FleetCacheSize int
	// Now is the clock of the profiles' times and of the cache's
	// entries (default time.Now).
	Now func() time.Time
}

// Service keeps vehicle profiles and answers which fleet a vehicle
// belongs to.
type Service struct {
	cfg    Config
	st     Store
	fleets *lru.Cache[fleetKey, fleetEntry]
	mu     sync.Mutex // guards gen, and orders the cache's writes after a store read against those after a store write
	// gen counts this node's profile writes: a store read that began
	// before a write must not cache what it read (Fleet)
	gen uint64
	// known, with SoleWriter after Load: the fleet of every vehicle whose
	// profile names one; nil when not loaded, past FleetCacheSize, or
	// after a write whose outcome is not known. Written under mu too.
	kmu   sync.RWMutex
	known map[fleetKey]string
}

// New makes the service.
func New(cfg Config, st Store) (*Service, error) {
	if cfg.FleetTTL <= 0 {
		cfg.FleetTTL = 5 * time.Second
	}
	if cfg.FleetCacheSize <= 0 {
		cfg.FleetCacheSize = 1 << 16
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	c, err := lru.New[fleetKey, fleetEntry](cfg.FleetCacheSize)
	if err != nil {
		return nil, fmt.Errorf("vehicles: fleet cache: %w", err)
	}
	return &Service{cfg: cfg, st: st, fleets: c}, nil
}

func (s *Service) now() time.Time { return apitime.Of(s.cfg.Now()) }

// Put creates or replaces the profile of vehicle id; a replaced profile
// keeps its creation time. A *ValidationError names every bad field.
func (s *Service) Put(ctx context.Context, sc store.Scope, id string, b Body) (Profile, error) {
	if bad := b.Check(id); len(bad) > 0 {
		return Profile{}, &ValidationError{Fields: bad}
	}
	now := s.now()
	p := b.profile(id, now, now)
	doc, err := json.Marshal(p)
	if err != nil {
		return Profile{}, fmt.Errorf("vehicles: encoding %s: %w", id, err)
	}
	rec, err := s.st.PutVehicle(ctx, store.Vehicle{ID: id, Org: sc.Org, Env: sc.Env, FleetID: p.FleetID, Doc: doc, CreatedAt: now, UpdatedAt: now})
	if err != nil {
		s.wrote(sc, id, nil) // the write may have happened
		return Profile{}, err
	}
	s.wrote(sc, id, &p.FleetID)
	p.CreatedAt = rec.CreatedAt
	return p, nil
}

// Get reads a profile; ErrNotFound when the scope has none for id.
func (s *Service) Get(ctx context.Context, sc store.Scope, id string) (Profile, error) {
	r, err := s.st.GetVehicle(ctx, sc, id)
	if errors.Is(err, store.ErrNotFound) {
		return Profile{}, ErrNotFound
	}
	if err != nil {
		return Profile{}, err
	}
	return decode(r)
}

// Delete removes a profile; ErrNotFound when the scope has none for id.
// The vehicle's trips keep the figures they were given.
func (s *Service) Delete(ctx context.Context, sc store.Scope, id string) error {
	err := s.st.DeleteVehicle(ctx, sc, id)
	switch {
	case err == nil || errors.Is(err, store.ErrNotFound):
		none := ""
		s.wrote(sc, id, &none)
	default:
		s.wrote(sc, id, nil) // the delete may have happened
	}
	if errors.Is(err, store.ErrNotFound) {
		return ErrNotFound
	}
	return err
}

// Query selects a page of profiles.
type Query struct {
	FleetID string
	Cursor  string
	Limit   int // 1-200
}

// List is a page of profiles.
type List struct {
	Vehicles   []Profile  `json:"vehicles"`
	Pagination Pagination `json:"pagination"`
}

// Pagination continues a listing: NextCursor is null on the last page.
type Pagination struct {
	Limit      int     `json:"limit"`
	HasMore    bool    `json:"has_more" doc:"true exactly when next_cursor is not null"`
	NextCursor *string `json:"next_cursor" doc:"pass as cursor for the next page; null on the last"`
}

// List answers a page of the scope's profiles in vehicle id order (byte
// order), those of one fleet when q.FleetID is set.
func (s *Service) List(ctx context.Context, sc store.Scope, q Query) (List, error) {
	f := store.VehicleFilter{Scope: sc, FleetID: q.FleetID, Limit: q.Limit + 1}
	hash := pagecursor.Hash("vehicles", sc.Org, sc.Env, q.FleetID)
	if q.Cursor != "" {
		id, err := decodeCursor(q.Cursor, hash)
		if err != nil {
			return List{}, err
		}
		f.AfterID = id
	}
	rs, err := s.st.ListVehicles(ctx, f)
	if err != nil {
		return List{}, err
	}
	out := List{Vehicles: []Profile{}, Pagination: Pagination{Limit: q.Limit}}
	for i, r := range rs {
		if i == q.Limit {
			c := encodeCursor(rs[i-1].ID, hash)
			out.Pagination.NextCursor, out.Pagination.HasMore = &c, true
			break
		}
		p, err := decode(r)
		if err != nil {
			return List{}, err
		}
		out.Vehicles = append(out.Vehicles, p)
	}
	return out, nil
}

// cursorPrefix marks a cursor of this listing, so that a string that
// merely decodes is not read as a position.
const cursorPrefix = "vehicle:"

// encodeCursor answers the cursor of the page after the vehicle id, under
// the listing's filters (pagecursor.Hash).
func encodeCursor(id, filters string) string {
	return pagecursor.Seal(cursorPrefix+id, filters)
}

// decodeCursor answers the vehicle id a cursor of the listing with these
// filters continues after; ErrBadCursor when s is not one (or was made
// with other filters).
func decodeCursor(s, filters string) (string, error) {
	pos, ok := pagecursor.Open(s, filters)
	if !ok {
		return "", ErrBadCursor
	}
	id, ok := strings.CutPrefix(pos, cursorPrefix)
	if !ok || id == "" || utf8.RuneCountInString(id) > maxText {
		return "", ErrBadCursor
	}
	return id, nil
}

func decode(r store.Vehicle) (Profile, error) {
	var p Profile
	if err := json.Unmarshal(r.Doc, &p); err != nil {
		return p, fmt.Errorf("vehicles: stored profile %s: %w", r.ID, err)
	}
	p.CreatedAt, p.UpdatedAt = r.CreatedAt, r.UpdatedAt
	return p, nil
}
