package vehicles_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
	"github.com/fleethub/fleethub/internal/store/testdb"
)

type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newService(t testing.TB, st vehicles.Store, clk *clock) *vehicles.Service {
	s, err := vehicles.New(vehicles.Config{Now: clk.now}, st)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ptr(v float64) *float64 { return &v }

// Every bad value is refused naming its field; a good profile is not.
func TestValidation(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	svc := newService(t, testdb.SQLite(t), clk)
	sc := store.Scope{Org: "o", Env: "test"}
	long := string(make([]byte, 201))
	// a character of two bytes: a limit in characters takes 200 of them
	wide, wider := strings.Repeat("é", 200), strings.Repeat("é", 201)
	for _, c := range []struct {
		name  string
		id    string
		body  vehicles.Body
		field string // "" when valid
	}{
		{"empty profile", "v", vehicles.Body{}, ""},
		{"diesel truck", "v", vehicles.Body{FleetID: "north", Name: "T1", VehicleType: "truck", FuelType: "diesel", FuelConsumptionLPer100Km: ptr(32), TankCapacityLiters: ptr(600), OdometerUnit: "mi"}, ""},
		{"electric van", "v", vehicles.Body{FuelType: "electric", EnergyConsumptionKWhPer100Km: ptr(24)}, ""},
		{"id too long", long, vehicles.Body{}, "vehicle_id"},
		{"fleet too long", "v", vehicles.Body{FleetID: long}, "fleet_id"},
		{"name too long", "v", vehicles.Body{Name: long}, "name"},
		{"fleet of 200 non-ASCII characters", "v", vehicles.Body{FleetID: wide}, ""},
		{"fleet of 201 non-ASCII characters", "v", vehicles.Body{FleetID: wider}, "fleet_id"},
		{"name of 200 non-ASCII characters", "v", vehicles.Body{Name: wide}, ""},
		{"name of 201 non-ASCII characters", "v", vehicles.Body{Name: wider}, "name"},
		{"id of 200 non-ASCII characters", wide, vehicles.Body{}, ""},
		{"id of 201 non-ASCII characters", wider, vehicles.Body{}, "vehicle_id"},
		{"unknown vehicle type", "v", vehicles.Body{VehicleType: "tractor"}, "vehicle_type"},
		{"unknown fuel type", "v", vehicles.Body{FuelType: "kerosene"}, "fuel_type"},
		{"consumption without fuel type", "v", vehicles.Body{FuelConsumptionLPer100Km: ptr(8)}, "fuel_type"},
		{"consumption too low", "v", vehicles.Body{FuelType: "gasoline", FuelConsumptionLPer100Km: ptr(0.5)}, "fuel_consumption_l_per_100km"},
		{"consumption too high", "v", vehicles.Body{FuelType: "diesel", FuelConsumptionLPer100Km: ptr(101)}, "fuel_consumption_l_per_100km"},
		{"liters for electric", "v", vehicles.Body{FuelType: "electric", FuelConsumptionLPer100Km: ptr(8)}, "fuel_consumption_l_per_100km"},
		{"tank for electric", "v", vehicles.Body{FuelType: "electric", TankCapacityLiters: ptr(50)}, "tank_capacity_liters"},
		{"battery for diesel", "v", vehicles.Body{FuelType: "diesel", BatteryCapacityKWh: ptr(60)}, "battery_capacity_kwh"},
		{"battery too large", "v", vehicles.Body{FuelType: "electric", BatteryCapacityKWh: ptr(5000)}, "battery_capacity_kwh"},
		{"battery without a fuel type", "v", vehicles.Body{BatteryCapacityKWh: ptr(60)}, "fuel_type"},
		{"energy for diesel", "v", vehicles.Body{FuelType: "diesel", EnergyConsumptionKWhPer100Km: ptr(20)}, "energy_consumption_kwh_per_100km"},
		{"energy out of range", "v", vehicles.Body{FuelType: "electric", EnergyConsumptionKWhPer100Km: ptr(1)}, "energy_consumption_kwh_per_100km"},
		{"tank too small", "v", vehicles.Body{FuelType: "gasoline", TankCapacityLiters: ptr(2)}, "tank_capacity_liters"},
		{"tank too large", "v", vehicles.Body{FuelType: "diesel", TankCapacityLiters: ptr(5000)}, "tank_capacity_liters"},
		{"unknown odometer unit", "v", vehicles.Body{OdometerUnit: "yards"}, "odometer_unit"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := svc.Put(context.Background(), sc, c.id, c.body)
			var ve *vehicles.ValidationError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && !errors.As(err, &ve):
				t.Fatalf("err %v, want a validation error naming %s", err, c.field)
			case c.field != "" && ve.Fields[c.field] == "":
				t.Fatalf("fields %v, want %s named", ve.Fields, c.field)
			}
		})
	}
}

// A replaced profile keeps its creation time, clears what the new body
// leaves out and defaults the odometer unit to km.
func TestPutReplaces(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	svc := newService(t, testdb.SQLite(t), clk)
	sc := store.Scope{Org: "o", Env: "test"}
	ctx := context.Background()
	first, err := svc.Put(ctx, sc, "v1", vehicles.Body{FleetID: "north", FuelType: "diesel", FuelConsumptionLPer100Km: ptr(30), OdometerUnit: "mi"})
	if err != nil {
		t.Fatal(err)
	}
	clk.advance(time.Minute)
	if _, err := svc.Put(ctx, sc, "v1", vehicles.Body{Name: "renamed"}); err != nil {
		t.Fatal(err)
	}
	got, err := svc.Get(ctx, sc, "v1")
	if err != nil {
		t.Fatal(err)
	}
	if !got.CreatedAt.Equal(first.CreatedAt) || !got.UpdatedAt.Equal(first.CreatedAt.Add(time.Minute)) {
		t.Errorf("times: created %v updated %v, want %v and a minute later", got.CreatedAt, got.UpdatedAt, first.CreatedAt)
	}
	if got.Name != "renamed" || got.FleetID != "" || got.FuelType != "" || got.FuelConsumptionLPer100Km != nil || got.OdometerUnit != "km" {
		t.Errorf("replaced profile: %+v", got)
	}
}

// countingStore counts the reads Fleet makes.
type countingStore struct {
	vehicles.Store
	mu    sync.Mutex
	reads int
}

func (c *countingStore) GetVehicle(ctx context.Context, s store.Scope, id string) (store.Vehicle, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.Store.GetVehicle(ctx, s, id)
}

func (c *countingStore) count() int { c.mu.Lock(); defer c.mu.Unlock(); return c.reads }

// Fleet answers from its cache for FleetTTL; a write on this node is seen
// at once, a write by another node (a second service on the same store)
// once the entry is older than FleetTTL. Negative answers are cached too.
func TestFleetLookup(t *testing.T) {
	testdb.Each(t, func(t *testing.T, open testdb.Opener) {
		st := open(t)
		clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
		cs := &countingStore{Store: st}
		here := newService(t, cs, clk)
		other := newService(t, st, clk) // another node on the same store
		ctx := context.Background()
		sc := store.Scope{Org: "o", Env: "test"}
		fleet := func(org, id string) string {
			t.Helper()
			f, err := here.Fleet(ctx, org, "test", id)
			if err != nil {
				t.Fatal(err)
			}
			return f
		}
		if f := fleet("o", "v1"); f != "" {
			t.Fatalf("no profile: fleet %q", f)
		}
		if f := fleet("o", "v1"); f != "" || cs.count() != 1 {
			t.Fatalf("no profile again: fleet %q after %d reads, want one read", f, cs.count())
		}
		if _, err := here.Put(ctx, sc, "v1", vehicles.Body{FleetID: "north"}); err != nil {
			t.Fatal(err)
		}
		if f := fleet("o", "v1"); f != "north" {
			t.Fatalf("after a PUT on this node: %q, want north", f)
		}
		if f := fleet("o2", "v1"); f != "" {
			t.Fatalf("another organization's vehicle of the same id: %q", f)
		}
		reads := cs.count()
		if _, err := other.Put(ctx, sc, "v1", vehicles.Body{FleetID: "south"}); err != nil {
			t.Fatal(err)
		}
		clk.advance(4 * time.Second)
		if f := fleet("o", "v1"); f != "north" || cs.count() != reads {
			t.Fatalf("within the TTL of the cached answer: %q after %d more reads, want north from the cache", f, cs.count()-reads)
		}
		clk.advance(1500 * time.Millisecond)
		if f := fleet("o", "v1"); f != "south" {
			t.Fatalf("past the TTL: %q, want the other node's south", f)
		}
		if err := other.Delete(ctx, sc, "v1"); err != nil {
			t.Fatal(err)
		}
		clk.advance(6 * time.Second)
		if f := fleet("o", "v1"); f != "" {
			t.Fatalf("after another node's delete and the TTL: %q", f)
		}
		if _, err := here.Put(ctx, sc, "v1", vehicles.Body{FleetID: "east"}); err != nil {
			t.Fatal(err)
		}
		if err := here.Delete(ctx, sc, "v1"); err != nil {
			t.Fatal(err)
		}
		if f := fleet("o", "v1"); f != "" {
			t.Fatalf("after a delete on this node: %q", f)
		}
	})
}

// As the sole writer of its store (the embedded default) the service
// answers from its cache however old the entry, positive or negative,
// and still sees its own writes at once.
func TestFleetSoleWriter(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	cs := &countingStore{Store: testdb.SQLite(t)}
	s, err := vehicles.New(vehicles.Config{Now: clk.now, SoleWriter: true}, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	sc := store.Scope{Org: "o", Env: "test"}
	fleet := func(id string) string {
		t.Helper()
		f, err := s.Fleet(ctx, "o", "test", id)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	if _, err := s.Put(ctx, sc, "v1", vehicles.Body{FleetID: "north"}); err != nil {
		t.Fatal(err)
	}
	if f := fleet("v2"); f != "" {
		t.Fatalf("no profile: fleet %q", f)
	}
	fleet("v1")
	reads := cs.count()
	clk.advance(time.Hour)
	if f1, f2 := fleet("v1"), fleet("v2"); f1 != "north" || f2 != "" || cs.count() != reads {
		t.Fatalf("an hour later: %q and %q after %d more reads, want north and none from the cache", f1, f2, cs.count()-reads)
	}
	if _, err := s.Put(ctx, sc, "v2", vehicles.Body{FleetID: "south"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, sc, "v1"); err != nil {
		t.Fatal(err)
	}
	if f1, f2 := fleet("v1"), fleet("v2"); f1 != "" || f2 != "south" {
		t.Fatalf("after this node's writes: %q and %q, want none and south", f1, f2)
	}
}

// Loaded at start as the sole writer, the service answers every
// vehicle's fleet from memory, with no store read for a vehicle it has
// never been asked about, and keeps the answers right through its own
// writes; past FleetCacheSize profiles, or after a write whose outcome
// is unknown, it reads the store again.
func TestFleetSoleWriterLoaded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	st := testdb.SQLite(t)
	ctx := context.Background()
	sc := store.Scope{Org: "o", Env: "test"}
	before := newService(t, st, clk) // the previous run
	for i, f := range []string{"north", "south", ""} {
		if _, err := before.Put(ctx, sc, fmt.Sprint("v", i), vehicles.Body{FleetID: f}); err != nil {
			t.Fatal(err)
		}
	}
	open := func(size int) (*vehicles.Service, *countingStore) {
		cs := &countingStore{Store: st}
		s, err := vehicles.New(vehicles.Config{Now: clk.now, SoleWriter: true, FleetCacheSize: size}, cs)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Load(ctx); err != nil {
			t.Fatal(err)
		}
		return s, cs
	}
	fleets := func(s *vehicles.Service, ids ...string) []string {
		t.Helper()
		var out []string
		for _, id := range ids {
			f, err := s.Fleet(ctx, "o", "test", id)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, f)
		}
		return out
	}
	s, cs := open(0)
	if got := fleets(s, "v0", "v1", "v2", "v9"); !slices.Equal(got, []string{"north", "south", "", ""}) || cs.count() != 0 {
		t.Fatalf("loaded: %v after %d store reads, want north, south, none, none and no read", got, cs.count())
	}
	if _, err := s.Put(ctx, sc, "v9", vehicles.Body{FleetID: "east"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Put(ctx, sc, "v0", vehicles.Body{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, sc, "v1"); err != nil {
		t.Fatal(err)
	}
	if got := fleets(s, "v0", "v1", "v9"); !slices.Equal(got, []string{"", "", "east"}) || cs.count() != 0 {
		t.Fatalf("after this node's writes: %v after %d store reads, want none, none, east and no read", got, cs.count())
	}
	// more profiles with a fleet than the bound: the cache and the store answer
	if _, err := s.Put(ctx, sc, "v5", vehicles.Body{FleetID: "west"}); err != nil {
		t.Fatal(err)
	}
	s, cs = open(1)
	if got := fleets(s, "v9", "v7"); !slices.Equal(got, []string{"east", ""}) || cs.count() != 2 {
		t.Fatalf("past the bound: %v after %d store reads, want east and none after 2", got, cs.count())
	}
}

// The cache holds at most FleetCacheSize vehicles: the least recently
// asked is read from the store again.
func TestFleetCacheIsBounded(t *testing.T) {
	clk := &clock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	cs := &countingStore{Store: testdb.SQLite(t)}
	svc, err := vehicles.New(vehicles.Config{Now: clk.now, FleetCacheSize: 2}, cs)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c", "b", "c"} {
		if _, err := svc.Fleet(ctx, "o", "test", id); err != nil {
			t.Fatal(err)
		}
	}
	if cs.count() != 3 {
		t.Fatalf("%d reads for a, b, c, b, c with room for two, want 3", cs.count())
	}
	if _, err := svc.Fleet(ctx, "o", "test", "a"); err != nil {
		t.Fatal(err)
	}
	if cs.count() != 4 {
		t.Fatalf("a, dropped for b and c, answered without a read")
	}
}

// BenchmarkFleetHit is the event path's look-up of a cached vehicle.
func BenchmarkFleetHit(b *testing.B) {
	st, err := sqlite.Open(context.Background(), sqlite.Config{Dir: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	svc, err := vehicles.New(vehicles.Config{}, st)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := svc.Put(ctx, store.Scope{Org: "o", Env: "test"}, "v1", vehicles.Body{FleetID: "north"}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if f, err := svc.Fleet(ctx, "o", "test", "v1"); err != nil || f != "north" {
			b.Fatal(f, err)
		}
	}
}
