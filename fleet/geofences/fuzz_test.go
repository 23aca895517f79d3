package geofences

import (
	"encoding/json"
	"testing"

	"github.com/fleethub/fleethub/internal/store"
)

// FuzzBody feeds arbitrary geofence bodies to the checks. They never
// panic, and a fence they accept is stored in a form that reads back, and
// what reads back (GET) is accepted again as a body (PUT) as the same
// fence: a client that reads a fence and writes it back is never refused.
func FuzzBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, raw []byte) {
		var b Body
		if json.Unmarshal(raw, &b) != nil {
			return
		}
		area, md, err := b.encode()
		if err != nil {
			return
		}
		v, err := view(store.Geofence{ID: "gf", Name: b.Name, Type: b.Type, Area: area, Metadata: md})
		if err != nil {
			t.Fatalf("stored %s does not read back: %v", area, err)
		}
		again := Body{Name: v.Name, Type: v.Type, RadiusM: v.RadiusM, Metadata: v.Metadata}
		if v.Center != nil {
			again.Center = &PointIn{Latitude: &v.Center.Latitude, Longitude: &v.Center.Longitude}
		}
		for i := range v.Polygon {
			again.Polygon = append(again.Polygon, PointIn{Latitude: &v.Polygon[i].Latitude, Longitude: &v.Polygon[i].Longitude})
		}
		area2, _, err := again.encode()
		if err != nil {
			t.Fatalf("fence %s read back is refused: %v", area, err)
		}
		if string(area2) != string(area) {
			t.Fatalf("fence %s written back as %s", area, area2)
		}
	})
}
