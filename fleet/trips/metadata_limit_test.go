package trips_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/fleet/trips"
)

// TestMetadataLimitCountsTheClientsKeys: a trip's metadata may be 64 KB
// (65,536 bytes as JSON) of the client's own keys, at the start and on
// update, as a geofence's may: the keys the service adds (created_by,
// created_at, updated_by, updated_at) do not count against it. One byte
// more is refused (payload_too_large) and nothing changes.
func TestMetadataLimitCountsTheClientsKeys(t *testing.T) {
	g := newGarage(t)
	// {"notes":"x…"} is 12 bytes around the string
	md := func(jsonBytes int) map[string]any { return map[string]any{"notes": strings.Repeat("x", jsonBytes-12)} }

	if _, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-md", Metadata: md(65537)}); !errors.Is(err, trips.ErrMetadataTooLarge) {
		t.Fatalf("a start with 65,537 bytes of metadata: %v", err)
	}
	tr, err := g.svc.Start(g.ctx, "org-a", "test", "tester", trips.StartRequest{VehicleID: "veh-md", Metadata: md(65536)})
	if err != nil {
		t.Fatalf("a start with 65,536 bytes of metadata: %v", err)
	}

	if _, err := g.svc.UpdateMetadata(g.ctx, "org-a", "test", tr.TripID, "tester", trips.MetadataRequest{Metadata: md(65537)}); !errors.Is(err, trips.ErrMetadataTooLarge) {
		t.Fatalf("an update to 65,537 bytes of metadata: %v", err)
	}
	small := md(100)
	if _, err := g.svc.UpdateMetadata(g.ctx, "org-a", "test", tr.TripID, "tester", trips.MetadataRequest{Metadata: small}); err != nil {
		t.Fatal(err)
	}
	res, err := g.svc.UpdateMetadata(g.ctx, "org-a", "test", tr.TripID, "tester", trips.MetadataRequest{Metadata: md(65536)})
	if err != nil {
		t.Fatalf("an update to 65,536 bytes of metadata: %v", err)
	}
	if notes, _ := res.Metadata["notes"].(string); len(notes) != 65536-12 || res.Metadata["updated_by"] != "tester" {
		t.Errorf("after the update: %d bytes of notes, updated_by %v", len(notes), res.Metadata["updated_by"])
	}
}
