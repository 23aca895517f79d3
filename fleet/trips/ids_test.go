package trips_test

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
	"github.com/fleethub/fleethub/fleet/vehicles"
	"github.com/fleethub/fleethub/internal/jsonpath"
	"github.com/fleethub/fleethub/internal/store"
)

// TestTripIDsFollowTheVehicleIDRule: a trip's vehicle_id and driver_id
// take the rule of a vehicle profile's id: up to 200 characters counted
// as characters (200 two-byte ones are taken), none a control character.
// A vehicle a trip is started for can always be given a profile.
func TestTripIDsFollowTheVehicleIDRule(t *testing.T) {
	g := newGarage(t)
	sc := store.Scope{Org: "org-a", Env: "test"}
	for _, c := range []struct {
		name, vehicle, driver string
		refused               string // the field refused; "" when taken
	}{
		{"200 two-byte characters", strings.Repeat("é", 200), strings.Repeat("ü", 200), ""},
		{"201 characters", strings.Repeat("v", 201), "", "vehicle_id"},
		{"a newline in vehicle_id", "a\nb", "", "vehicle_id"},
		{"a tab in vehicle_id", "a\tb", "", "vehicle_id"},
		{"a C1 control in vehicle_id", "a\u0085b", "", "vehicle_id"},
		{"a newline in driver_id", "veh-d", "d\nx", "driver_id"},
		{"201 characters in driver_id", "veh-e", strings.Repeat("d", 201), "driver_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: c.vehicle, DriverID: c.driver})
			if c.refused == "" {
				if err != nil {
					t.Fatalf("start: %v", err)
				}
				if _, err := g.vehs.Put(g.ctx, sc, c.vehicle, vehicles.Body{}); err != nil {
					t.Fatalf("the trip's vehicle cannot have a profile: %v", err)
				}
				return
			}
			if got := refusedFields(t, err); len(got) != 1 || got[0] != c.refused {
				t.Fatalf("refused %v, want [%s]", got, c.refused)
			}
			var ve *trips.ValidationError
			if errors.As(err, &ve); ve.Fields[c.refused] != vehicles.IDRefusal {
				t.Errorf("%s: %q, want %q", c.refused, ve.Fields[c.refused], vehicles.IDRefusal)
			}
			if _, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: c.vehicle}); c.refused == "vehicle_id" && err == nil {
				t.Errorf("a trip started for %q, a vehicle that cannot have a profile", c.vehicle)
			}
		})
	}
}

// TestUploadIDsWithoutControlCharacters: an upload's trip_id or
// device_info.device_id holding a control character is refused naming
// it, as a trip's vehicle_id is, and nothing is stored.
func TestUploadIDsWithoutControlCharacters(t *testing.T) {
	g := newGarage(t)
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-ctl"})
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := 40.0, -83.0
	ts := g.clk.now().Format("2006-01-02T15:04:05Z")
	pt := trips.LocationIn{Latitude: &lat, Longitude: &lon, Timestamp: ts}
	for _, c := range []struct {
		name, trip, device, refused string
	}{
		{"a newline in trip_id", tr.TripID + "\n", "", "trip_id"},
		{"a NUL in trip_id", tr.TripID + "\x00", "", "trip_id"},
		{"a tab in device_id", tr.TripID, "dev\t1", "device_info.device_id"},
		{"a C1 control in device_id", tr.TripID, "dev\u00851", "device_info.device_id"},
		{"DEL in device_id", tr.TripID, "dev\x7f", "device_info.device_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: c.trip, Locations: []trips.LocationIn{pt},
				DeviceInfo: &trips.BatchDeviceInfo{DeviceID: c.device}})
			if got := refusedFields(t, err); len(got) != 1 || got[0] != c.refused {
				t.Fatalf("batch refused %v, want [%s]", got, c.refused)
			}
			_, err = g.svc.UploadSingle(g.ctx, "org-a", "test", &trips.SingleRequest{TripID: c.trip, LocationIn: pt, DeviceInfo: &trips.DeviceInfo{DeviceID: c.device}})
			if got := refusedFields(t, err); len(got) != 1 || got[0] != c.refused {
				t.Fatalf("single refused %v, want [%s]", got, c.refused)
			}
			var ve *trips.ValidationError
			if errors.As(err, &ve); ve.Code != "invalid_location" || ve.Fields[c.refused] != jsonpath.ControlRefusal {
				t.Errorf("single: %s %v", ve.Code, ve.Fields)
			}
		})
	}
	got, err := g.svc.Get(g.ctx, "org-a", "test", tr.TripID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Analytics.LocationsCount != 0 {
		t.Errorf("%d points stored by refused uploads", got.Analytics.LocationsCount)
	}
}

// TestUploadDeviceIDTakesADevicesID: an upload's device_info.device_id
// picks the settings of PUT /v1/devices/{device_id}/settings, whose id
// may be 200 characters: an upload takes the same 200 (two-byte ones
// too) and refuses 201 naming the field, on both uploads.
func TestUploadDeviceIDTakesADevicesID(t *testing.T) {
	g := newGarage(t)
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-devid"})
	if err != nil {
		t.Fatal(err)
	}
	lat, lon := 40.0, -83.0
	ts := g.clk.now().Format("2006-01-02T15:04:05Z")
	pt := trips.LocationIn{Latitude: &lat, Longitude: &lon, Timestamp: ts}
	long := strings.Repeat("é", 200)
	if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID, Locations: []trips.LocationIn{pt},
		DeviceInfo: &trips.BatchDeviceInfo{DeviceID: long}}); err != nil {
		t.Fatalf("a batch from a device of a 200-character id: %v", err)
	}
	if _, err := g.svc.UploadSingle(g.ctx, "org-a", "test", &trips.SingleRequest{TripID: tr.TripID, LocationIn: pt,
		DeviceInfo: &trips.DeviceInfo{DeviceID: long}}); err != nil {
		t.Fatalf("a single upload from a device of a 200-character id: %v", err)
	}
	_, err = g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID, Locations: []trips.LocationIn{pt},
		DeviceInfo: &trips.BatchDeviceInfo{DeviceID: long + "é"}})
	if got := refusedFields(t, err); !slices.Equal(got, []string{"device_info.device_id"}) {
		t.Errorf("a batch device_id of 201 characters refused naming %v", got)
	}
	_, err = g.svc.UploadSingle(g.ctx, "org-a", "test", &trips.SingleRequest{TripID: tr.TripID, LocationIn: pt,
		DeviceInfo: &trips.DeviceInfo{DeviceID: long + "é"}})
	if got := refusedFields(t, err); !slices.Equal(got, []string{"device_info.device_id"}) {
		t.Errorf("a single device_id of 201 characters refused naming %v", got)
	}
}
