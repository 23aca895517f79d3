package trips_test

import (
	"context"
	"io"
	"log/slog"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/internal/store"
	"github.com/fleethub/fleethub/internal/store/sqlite"
)

// garage is a trip service with vehicle profiles on one SQLite store.
type garage struct {
	t    *testing.T
	ctx  context.Context
	clk  *fakeClock
	vehs *vehicles.Service
	svc  *trips.Service
}

func newGarage(t *testing.T) *garage {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, sqlite.Config{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	clk := &fakeClock{t: time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)}
	vehs, err := vehicles.New(vehicles.Config{Now: clk.now}, st)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trips.New(trips.Config{Now: clk.now, Profiles: vehs}, st, nil, nil, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return &garage{t: t, ctx: ctx, clk: clk, vehs: vehs, svc: svc}
}

func (g *garage) profile(vehicle string, b vehicles.Body) {
	g.t.Helper()
	if _, err := g.vehs.Put(g.ctx, store.Scope{Org: "org-a", Env: "test"}, vehicle, b); err != nil {
		g.t.Fatal(err)
	}
}

// drive starts a trip of vehicle now, drives km due north at 60 km/h at
// one point a second, and stops it with r.
func (g *garage) drive(vehicle string, km float64, r trips.StopRequest) trips.StopResult {
	g.t.Helper()
	start := g.clk.now()
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: vehicle, StartTime: &start})
	if err != nil {
		g.t.Fatal(err)
	}
	secs := int(km / 60 * 3600)
	g.clk.advance(time.Duration(secs+1) * time.Second)
	b := &trips.BatchRequest{TripID: tr.TripID}
	lat, v, acc := 40.0, 60.0, 4.0
	for i := 0; i <= secs; i++ {
		la, lo := lat, -83.0
		b.Locations = append(b.Locations, trips.LocationIn{Latitude: &la, Longitude: &lo, SpeedKmh: &v, AccuracyMeters: &acc,
			Timestamp: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano)})
		lat += v / 3.6 / 111195
	}
	if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", b); err != nil {
		g.t.Fatal(err)
	}
	res, err := g.svc.Stop(g.ctx, "org-a", "test", tr.TripID, r)
	if err != nil {
		g.t.Fatal(err)
	}
	got, err := g.svc.Get(g.ctx, "org-a", "test", tr.TripID)
	if err != nil {
		g.t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Analytics, res.Analytics) {
		g.t.Fatalf("the trip read back has other analytics than its stop answered:\n%+v\n%+v", got.Analytics, res.Analytics)
	}
	g.clk.advance(time.Minute)
	return res
}

func odo(v int64) *int64        { return &v }
func pct(v float64) *float64    { return &v }
func liters(v float64) *float64 { return &v }

func near(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

// TestFuelFollowsTheVehicleProfile: the same route costs each vehicle
// its own profile's consumption; a vehicle without one gets the default
// model, and the answer says which.
func TestFuelFollowsTheVehicleProfile(t *testing.T) {
	g := newGarage(t)
	g.profile("truck", vehicles.Body{FuelType: "diesel", FuelConsumptionLPer100Km: liters(30)})
	g.profile("car", vehicles.Body{FuelType: "gasoline", FuelConsumptionLPer100Km: liters(6)})
	g.profile("fleet-only", vehicles.Body{FleetID: "north"})
	g.profile("ev", vehicles.Body{FuelType: "electric", EnergyConsumptionKWhPer100Km: liters(20)})
	for _, c := range []struct {
		vehicle, model, fuelType string
		per100                   float64
	}{
		{"truck", trips.ModelProfile, "diesel", 30},
		{"car", trips.ModelProfile, "gasoline", 6},
		{"fleet-only", trips.ModelDefault, "", 8},
		{"no-profile", trips.ModelDefault, "", 8},
	} {
		a := g.drive(c.vehicle, 5, trips.StopRequest{}).Analytics
		f := a.FuelEfficiency
		near(t, c.vehicle+" fuel_consumed_liters", f.FuelConsumedLiters, c.per100/100*a.DistanceKm, 0.002)
		if f.FuelModel != c.model || f.FuelSource != trips.FuelFromModel || f.FuelType != c.fuelType || f.EnergyConsumedKWh != nil {
			t.Errorf("%s: %+v, want model %s, source model, fuel type %q", c.vehicle, f, c.model, c.fuelType)
		}
		if a.DistanceSource != trips.SourceGPS || a.DistanceKm != a.GPSDistanceKm || a.OdometerDistanceKm != nil {
			t.Errorf("%s without readings: distance %+v", c.vehicle, a)
		}
	}
	a := g.drive("ev", 5, trips.StopRequest{}).Analytics
	if f := a.FuelEfficiency; f.FuelConsumedLiters != 0 || f.FuelEfficiencyKmpl != nil || f.EnergyConsumedKWh == nil || f.FuelModel != trips.ModelProfile || f.FuelType != "electric" {
		t.Fatalf("electric: %+v", f)
	} else {
		near(t, "energy_consumed_kwh", *f.EnergyConsumedKWh, 0.2*a.DistanceKm, 0.002)
	}
}

// TestOdometerDistance: a trip that starts from the previous trip's
// odometer reading and stops with its own reports their difference when
// it agrees with the track, and the GPS distance otherwise; both are in
// the answer, with the source used.
func TestOdometerDistance(t *testing.T) {
	g := newGarage(t)
	g.profile("mi", vehicles.Body{OdometerUnit: "mi", FuelType: "gasoline", FuelConsumptionLPer100Km: liters(10)})
	for _, c := range []struct {
		name     string
		vehicle  string
		from, to int64
		source   string
		odoKm    float64
	}{
		{"agrees", "km", 10_000, 10_006, trips.SourceOdometer, 6},
		{"wildly off", "km", 10_006, 10_100, trips.SourceGPS, 94},
		{"went backwards", "km", 10_100, 10_090, trips.SourceGPS, -10},
		{"in miles", "mi", 20_000, 20_004, trips.SourceOdometer, 4 * 1.609344},
	} {
		// a short trip stopped at from: the next trip starts with its
		// reading
		if first := g.drive(c.vehicle, 1, trips.StopRequest{OdometerReading: odo(c.from)}); first.Analytics.OdometerDistanceKm != nil && c.name == "agrees" {
			t.Fatalf("%s: a vehicle's first trip has no start reading: %+v", c.name, first.Analytics)
		}
		a := g.drive(c.vehicle, 5, trips.StopRequest{OdometerReading: odo(c.to)}).Analytics
		if a.DistanceSource != c.source || a.OdometerDistanceKm == nil {
			t.Fatalf("%s: source %s, odometer %v; want %s", c.name, a.DistanceSource, a.OdometerDistanceKm, c.source)
		}
		near(t, c.name+": odometer_distance_km", *a.OdometerDistanceKm, c.odoKm, 1e-3)
		near(t, c.name+": gps_distance_km", a.GPSDistanceKm, 5, 0.02)
		want := a.GPSDistanceKm
		if c.source == trips.SourceOdometer {
			want = c.odoKm
		}
		near(t, c.name+": distance_km", a.DistanceKm, want, 1e-3)
		near(t, c.name+": avg_speed_kmh", *a.AvgSpeedKmh, want/(a.DurationMinutes/60), 0.1)
		if c.vehicle == "mi" {
			near(t, c.name+": fuel_consumed_liters", a.FuelEfficiency.FuelConsumedLiters, 0.1*want, 0.002)
		}
	}
}

// TestFuelFromLevels: with a tank capacity, a drop of the fuel level
// between the previous stop and this one is the fuel consumed; a rise (a
// refuel) or no tank leaves the model's estimate.
func TestFuelFromLevels(t *testing.T) {
	g := newGarage(t)
	g.profile("van", vehicles.Body{FuelType: "diesel", FuelConsumptionLPer100Km: liters(9), TankCapacityLiters: liters(60)})
	g.profile("no-tank", vehicles.Body{FuelType: "diesel", FuelConsumptionLPer100Km: liters(9)})
	g.drive("van", 1, trips.StopRequest{FuelLevelPercent: pct(80)})
	s := g.drive("van", 5, trips.StopRequest{FuelLevelPercent: pct(75)})
	f := s.Analytics.FuelEfficiency
	if f.FuelSource != trips.FuelFromLevels || f.FuelConsumedLiters != 3 {
		t.Fatalf("a 5 %% drop of a 60 L tank: %+v, want 3 L from the fuel level", f)
	}
	if f.FuelEfficiencyKmpl == nil {
		t.Fatal("fuel_efficiency_kmpl null after 3 L burnt")
	}
	near(t, "fuel_efficiency_kmpl", *f.FuelEfficiencyKmpl, s.Analytics.DistanceKm/3, 0.01)
	if s.StartFuelLevelPercent == nil || *s.StartFuelLevelPercent != 80 {
		t.Errorf("start fuel level: %v, want the previous stop's 80", s.StartFuelLevelPercent)
	}
	f = g.drive("van", 5, trips.StopRequest{FuelLevelPercent: pct(95)}).Analytics.FuelEfficiency
	if f.FuelSource != trips.FuelFromModel || math.Abs(f.FuelConsumedLiters-0.45) > 0.01 {
		t.Errorf("after a refuel: %+v, want the model's 0.45 L", f)
	}
	g.drive("no-tank", 1, trips.StopRequest{FuelLevelPercent: pct(80)})
	if f := g.drive("no-tank", 5, trips.StopRequest{FuelLevelPercent: pct(70)}).Analytics.FuelEfficiency; f.FuelSource != trips.FuelFromModel {
		t.Errorf("without a tank capacity: %+v, want the model", f)
	}
}

// TestEnergyFromStateOfCharge: an electric vehicle with a battery
// capacity reports the energy its state of charge dropped by (the stop's
// fuel_level_percent), and the model's estimate after a charge.
func TestEnergyFromStateOfCharge(t *testing.T) {
	g := newGarage(t)
	g.profile("ev", vehicles.Body{FuelType: "electric", EnergyConsumptionKWhPer100Km: liters(18), BatteryCapacityKWh: liters(75)})
	g.profile("ev-no-battery", vehicles.Body{FuelType: "electric"})
	g.drive("ev", 1, trips.StopRequest{FuelLevelPercent: pct(90)})
	f := g.drive("ev", 5, trips.StopRequest{FuelLevelPercent: pct(86)}).Analytics.FuelEfficiency
	if f.FuelSource != trips.FuelFromLevels || f.EnergyConsumedKWh == nil || *f.EnergyConsumedKWh != 3 || f.FuelConsumedLiters != 0 {
		t.Fatalf("a 4 %% drop of a 75 kWh battery: %+v, want 3 kWh from the level and no liters", f)
	}
	f = g.drive("ev", 5, trips.StopRequest{FuelLevelPercent: pct(99)}).Analytics.FuelEfficiency
	if f.FuelSource != trips.FuelFromModel || f.EnergyConsumedKWh == nil || math.Abs(*f.EnergyConsumedKWh-0.9) > 0.01 {
		t.Errorf("after a charge: %+v, want the model's 0.9 kWh", f)
	}
	g.drive("ev-no-battery", 1, trips.StopRequest{FuelLevelPercent: pct(90)})
	if f := g.drive("ev-no-battery", 5, trips.StopRequest{FuelLevelPercent: pct(80)}).Analytics.FuelEfficiency; f.FuelSource != trips.FuelFromModel || f.EnergyConsumedKWh != nil {
		t.Errorf("without a battery capacity or a consumption: %+v, want the model and no energy figure", f)
	}
}
