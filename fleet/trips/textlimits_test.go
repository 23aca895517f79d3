package trips_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestTextLimitsCountCharacters: the text limits of the trip bodies are
// counted in characters, as documented, not in bytes: 500 two-byte
// characters are a valid address or reason, 100 a valid device model,
// and one character more is refused naming the field.
func TestTextLimitsCountCharacters(t *testing.T) {
	g := newGarage(t)
	lat, lon := 40.0, -83.0
	place := func(addr string) *trips.PlaceIn {
		return &trips.PlaceIn{Latitude: &lat, Longitude: &lon, Address: addr}
	}
	at500, at501 := strings.Repeat("é", 500), strings.Repeat("é", 501)

	if _, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-long", StartLocation: place(at501)}); !slices.Equal(refusedFields(t, err), []string{"start_location.address"}) {
		t.Errorf("501 characters of address refused naming %v", refusedFields(t, err))
	}
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-long", StartLocation: place(at500)})
	if err != nil {
		t.Fatalf("500 two-byte characters of address: %v", err)
	}

	if _, err := g.svc.Pause(g.ctx, "org-a", "test", tr.TripID, trips.PauseRequest{Reason: at501}); !slices.Equal(refusedFields(t, err), []string{"reason"}) {
		t.Errorf("a pause reason of 501 characters refused naming %v", refusedFields(t, err))
	}
	if _, err := g.svc.Pause(g.ctx, "org-a", "test", tr.TripID, trips.PauseRequest{Reason: at500, Location: place(at500)}); err != nil {
		t.Fatalf("a pause reason and address of 500 two-byte characters: %v", err)
	}
	if _, err := g.svc.Resume(g.ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{Reason: at501}); !slices.Equal(refusedFields(t, err), []string{"reason"}) {
		t.Errorf("a resume reason of 501 characters refused naming %v", refusedFields(t, err))
	}
	if _, err := g.svc.Resume(g.ctx, "org-a", "test", tr.TripID, trips.ResumeRequest{Reason: at500}); err != nil {
		t.Fatalf("a resume reason of 500 two-byte characters: %v", err)
	}

	ts := g.clk.now().Format("2006-01-02T15:04:05Z")
	point := []trips.LocationIn{{Latitude: &lat, Longitude: &lon, Timestamp: ts}}
	model100 := strings.Repeat("ü", 100)
	if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID, Locations: point,
		DeviceInfo: &trips.BatchDeviceInfo{DeviceModel: model100 + "ü"}}); !slices.Equal(refusedFields(t, err), []string{"device_info.device_model"}) {
		t.Errorf("a device model of 101 characters refused naming %v", refusedFields(t, err))
	}
	if _, err := g.svc.UploadBatch(g.ctx, "org-a", "test", &trips.BatchRequest{TripID: tr.TripID, Locations: point,
		DeviceInfo: &trips.BatchDeviceInfo{DeviceID: model100, DeviceModel: model100, OSVersion: model100, AppVersion: model100}}); err != nil {
		t.Fatalf("device fields of 100 two-byte characters: %v", err)
	}
	if _, err := g.svc.Stop(g.ctx, "org-a", "test", tr.TripID, trips.StopRequest{EndLocation: place(at500)}); err != nil {
		t.Fatalf("an end address of 500 two-byte characters: %v", err)
	}
}
