package trips

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
	gojson "github.com/goccy/go-json"
)

func batchBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"trip_id":"trip_0123456789abcdef","device_info":{"device_id":"d1"},"locations":[`)
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"latitude":%.6f,"longitude":-83.000100,"timestamp":"2026-11-23T10:%02d:%02dZ","speed_kmh":42.5,"heading":87,"accuracy_meters":4.2,"altitude_meters":221.5,"battery_level":88,"network_type":"cellular"}`,
			40+float64(i)*1e-4, (i/60)%60, i%60)
	}
	b.WriteString("]}")
	return []byte(b.String())
}

func TestDecodersAgree(t *testing.T) {
	body := batchBody(50)
	var a, b domain.BatchRequest
	if err := json.Unmarshal(body, &a); err != nil {
		t.Fatal(err)
	}
	if err := gojson.Unmarshal(body, &b); err != nil {
		t.Fatal(err)
	}
	if len(a.Locations) != 50 || len(b.Locations) != 50 || *a.Locations[49].Latitude != *b.Locations[49].Latitude ||
		a.Locations[7].Timestamp != b.Locations[7].Timestamp || *a.Locations[3].NetworkType != *b.Locations[3].NetworkType {
		t.Fatal("decoders disagree")
	}
}

// TestSingleTypeErrorNamesTheField: a point field of the wrong JSON type
// in a single upload is named as the body has it (latitude), as the batch
// names locations[0].latitude, never by the Go type that holds it.
func TestSingleTypeErrorNamesTheField(t *testing.T) {
	const point = `"trip_id":"trip_0123456789abcdef","latitude":40,"longitude":-82,"timestamp":"2026-11-23T10:00:00Z"`
	for body, want := range map[string]string{
		`{"trip_id":"trip_0123456789abcdef","latitude":"40","longitude":-82,"timestamp":"2026-11-23T10:00:00Z"}`: "latitude",
		`{` + point + `,"speed_kmh":"fast"}`:                                                  "speed_kmh",
		`{"trip_id":"trip_0123456789abcdef","latitude":40,"longitude":-82,"timestamp":12345}`: "timestamp",
		`{` + point + `,"device_info":{"satellites_count":"9"}}`:                              "device_info.satellites_count",
	} {
		var r domain.SingleRequest
		err := decodeUpload([]byte("application/json"), []byte(body), &r)
		var e *api.Error
		if !errors.As(err, &e) || e.Status != 400 {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); len(d) != 1 || d[want] == "" {
			t.Errorf("%s: details %v, want %s", body, e.Details, want)
		}
		if strings.Contains(e.Message, "LocationIn") {
			t.Errorf("%s: message %q names a Go type", body, e.Message)
		}
	}
}

// BenchmarkDecodeBatch compares the decoders on a 1,000-point body: the
// choice of goccy/go-json for uploads rests on it.
func BenchmarkDecodeBatch(b *testing.B) {
	body := batchBody(1000)
	for _, c := range []struct {
		name string
		dec  func([]byte, any) error
	}{{"encoding_json", json.Unmarshal}, {"goccy", func(b []byte, v any) error { return gojson.Unmarshal(b, v) }},
		{"upload", func(b []byte, v any) error { return decodeUpload([]byte("application/json"), b, v) }}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var r domain.BatchRequest
				if err := c.dec(body, &r); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N*1000)/b.Elapsed().Seconds(), "points/s")
		})
	}
}

// TestUploadRefusesRepeatedMembers: goccy/go-json reads a repeated member
// as the last; the uploads refuse it by path as every route does.
func TestUploadRefusesRepeatedMembers(t *testing.T) {
	const pt = `{"latitude":40,"longitude":-82,"timestamp":"2026-11-23T10:00:00Z"}`
	for body, want := range map[string]string{
		`{"trip_id":"trip_0123456789abcdef","locations":[` + pt + `,` + pt + `,{"latitude":40,"longitude":-82,"latitude":41,"timestamp":"2026-11-23T10:00:00Z"}]}`: "locations[2].latitude",
		`{"trip_id":"trip_0123456789abcdef","locations":[` + pt + `,{"latitude":40,"longitude":-82,"Latitude":41,"timestamp":"2026-11-23T10:00:00Z"}]}`:            "locations[1].latitude",
		`{"trip_id":"trip_0123456789abcdef","trip_id":"trip_0123456789abcdee","locations":[` + pt + `]}`:                                                           "trip_id",
		`{"trip_id":"trip_0123456789abcdef","device_info":{"device_id":"a","device_id":"b"},"locations":[` + pt + `]}`:                                             "device_info.device_id",
	} {
		var r domain.BatchRequest
		err := decodeUpload([]byte("application/json"), []byte(body), &r)
		var e *api.Error
		if !errors.As(err, &e) || e.Status != 400 || e.Code != "validation_failed" {
			t.Errorf("%s: %v", body, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); len(d) != 1 || d[want] == "" {
			t.Errorf("%s: details %v, want %s", body, e.Details, want)
		}
	}
	var r domain.BatchRequest
	if err := decodeUpload([]byte("application/json"), []byte(`{"trip_id":"trip_0123456789abcdef","locations":[`+pt+`,`+pt+`]}`), &r); err != nil || len(r.Locations) != 2 {
		t.Errorf("a batch without repeats: %v, %d points", err, len(r.Locations))
	}
}
