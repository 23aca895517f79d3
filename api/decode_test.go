package api_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/fleethub/fleethub/api"
)

type body struct {
	Name  string   `json:"name"`
	N     int      `json:"n"`
	Tags  []string `json:"tags"`
	Inner *struct {
		F float64 `json:"f"`
	} `json:"inner"`
}

func TestDecodeJSON(t *testing.T) {
	cases := []struct {
		in   string
		ok   bool
		code string
	}{
		{`{"name":"a","n":1,"tags":["x"],"inner":{"f":1.5}}`, true, ""},
		{`{"name":1}`, false, "invalid_request"},
		{`{"name":"a"`, false, "invalid_request"},
		{`{"name":"a"} x`, false, "invalid_request"},
		{`[1,2]`, false, "invalid_request"},
		{`null`, false, "invalid_request"},
		{` null `, false, "invalid_request"},
		{`[]`, false, "invalid_request"},
		{`"x"`, false, "invalid_request"},
		{`1`, false, "invalid_request"},
		{`true`, false, "invalid_request"},
		{` {}`, true, ""},
		{`{"inner":{"f":"no"}}`, false, "invalid_request"},
	}
	for _, c := range cases {
		var b body
		err := api.DecodeJSON([]byte(c.in), &b)
		if (err == nil) != c.ok {
			t.Errorf("%s: err %v", c.in, err)
			continue
		}
		var e *api.Error
		if err != nil && (!errors.As(err, &e) || e.Code != c.code || e.Status != 400) {
			t.Errorf("%s: %v", c.in, err)
		}
	}
}

// Only structs and maps demand an object: a slice target still takes an
// array, and a map target refuses null like a struct does.
func TestDecodeJSONTargets(t *testing.T) {
	var m map[string]any
	if err := api.DecodeJSON([]byte(`null`), &m); err == nil {
		t.Error("null into a map accepted")
	}
	var pb *body
	if err := api.DecodeJSON([]byte(`null`), &pb); err == nil {
		t.Error("null into a pointer to a struct accepted")
	}
	var s []int
	if err := api.DecodeJSON([]byte(`[1,2]`), &s); err != nil || len(s) != 2 {
		t.Errorf("array into a slice: %v %v", s, err)
	}
	var a any
	if err := api.DecodeJSON([]byte(`"x"`), &a); err != nil || a != "x" {
		t.Errorf("string into any: %v %v", a, err)
	}
}

func FuzzDecodeJSON(f *testing.F) {
	for _, s := range []string{`{"name":"a","n":1}`, `{"tags":[1]}`, `{`, `null`, `{"inner":{"f":1e400}}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var b body
		err := api.DecodeJSON(in, &b)
		if err == nil {
			if !json.Valid(in) {
				t.Fatalf("accepted %q, which is not one JSON value", in)
			}
			return
		}
		var e *api.Error
		// malformed or mistyped: invalid_request; a field the body does
		// not declare (even ""): validation_failed
		if !errors.As(err, &e) || e.Status != 400 || (e.Code != "invalid_request" && e.Code != "validation_failed") {
			t.Fatalf("decode error %v is not a 400 invalid_request or validation_failed", err)
		}
	})
}

// TestDecodeJSONTypeErrorsSpeakJSON: a value of the wrong type is named
// with its field and the JSON type it must be, never a Go type.
func TestDecodeJSONTypeErrorsSpeakJSON(t *testing.T) {
	for in, want := range map[string][2]string{
		`{"n":12.5}`:           {"n", "must be an integer"},
		`{"tags":"x"}`:         {"tags", "must be an array"},
		`{"inner":{"f":"no"}}`: {"inner.f", "must be a number"},
		`{"inner":[1]}`:        {"inner", "must be an object"},
		`{"name":{"a":1}}`:     {"name", "must be a string"},
		`{"tags":["x", 1]}`:    {"tags[1]", "must be a string"},
	} {
		var b body
		err := api.DecodeJSON([]byte(in), &b)
		var e *api.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v", in, err)
			continue
		}
		d, _ := e.Details.(map[string]string)
		if d[want[0]] != want[1] {
			t.Errorf("%s: details %v, want %s: %s", in, e.Details, want[0], want[1])
		}
		for _, goType := range []string{"float64", "be int", "[]string", "map[", "interface {}", "struct {"} {
			if strings.Contains(e.Message, goType) {
				t.Errorf("%s: message %q names the Go type %s", in, e.Message, goType)
			}
		}
	}
}

// TestDecodeJSONTypeErrorIndexes: a type error inside an array of
// objects names the element, as the validation of its values does
// (locations[2].latitude).
func TestDecodeJSONTypeErrorIndexes(t *testing.T) {
	type point struct {
		Latitude  float64 `json:"latitude"`
		Longitude float64 `json:"longitude"`
	}
	type batch struct {
		Locations []point   `json:"locations"`
		Groups    [][]point `json:"groups"`
	}
	for in, want := range map[string]string{
		`{"locations":[{"latitude":1,"longitude":2},{"latitude":3},{"latitude":"x"}]}`: "locations[2].latitude",
		`{"locations":[{"latitude":"1"}]}`:                                             "locations[0].latitude",
		`{"groups":[[{"longitude":1}],[{"longitude":2},{"longitude":true}]]}`:          "groups[1][1].longitude",
		`{"locations":[{"latitude":1},"p"]}`:                                           "locations[1]",
	} {
		var b batch
		err := api.DecodeJSON([]byte(in), &b)
		var e *api.Error
		if !errors.As(err, &e) {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); d[want] == "" || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %s %v, want the field %s", in, e.Message, e.Details, want)
		}
	}
}

// TestDecodeJSONTypeErrorInEmbedded: a field promoted from an embedded
// struct is named as the body has it (latitude, points[1].latitude),
// never with the Go name of the struct it comes from.
func TestDecodeJSONTypeErrorInEmbedded(t *testing.T) {
	type Point struct {
		Latitude float64  `json:"latitude"`
		Speed    *float64 `json:"speed_kmh,omitempty"`
	}
	type Stamped struct {
		Point
		Timestamp string `json:"timestamp"`
	}
	type req struct {
		ID string `json:"id"`
		*Stamped
		Points []Stamped `json:"points"`
		Named  Point     `json:"named"`
	}
	for in, want := range map[string]string{
		`{"id":"a","latitude":"40"}`:                   "latitude",
		`{"speed_kmh":"fast"}`:                         "speed_kmh",
		`{"timestamp":12345}`:                          "timestamp",
		`{"points":[{"latitude":1},{"latitude":"x"}]}`: "points[1].latitude",
		`{"named":{"latitude":true}}`:                  "named.latitude",
	} {
		var r req
		err := api.DecodeJSON([]byte(in), &r)
		var e *api.Error
		if !errors.As(err, &e) || e.Code != "invalid_request" {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); len(d) != 1 || d[want] == "" || !strings.Contains(e.Message, "field "+want+" ") {
			t.Errorf("%s: %s %v, want %s named alone", in, e.Message, e.Details, want)
		}
		if strings.Contains(e.Message, "Point") || strings.Contains(e.Message, "Stamped") {
			t.Errorf("%s: message %q names a Go type", in, e.Message)
		}
	}
}

// TestDecodeJSONBadTimeNamed: a date-time that does not parse is named
// by its path, where time.Time's own error names no field.
func TestDecodeJSONBadTimeNamed(t *testing.T) {
	type window struct {
		From time.Time  `json:"from"`
		To   *time.Time `json:"to"`
	}
	type req struct {
		StartTime *time.Time `json:"start_time"`
		Windows   []window   `json:"windows"`
	}
	for in, want := range map[string]string{
		`{"start_time":"yesterday"}`: "start_time",
		`{"start_time":"2026-01-02T03:04:05Z","windows":[{"from":"2026-01-02T03:04:05Z"},{"from":"2026-01-02T03:04:05Z","to":"2026-13-40"}]}`: "windows[1].to",
		`{"windows":[{"from":5}]}`: "windows[0].from",
	} {
		var r req
		err := api.DecodeJSON([]byte(in), &r)
		var e *api.Error
		if !errors.As(err, &e) || e.Code != "invalid_request" {
			t.Errorf("%s: %v", in, err)
			continue
		}
		if d, _ := e.Details.(map[string]string); len(d) != 1 || d[want] == "" || !strings.Contains(e.Message, want) {
			t.Errorf("%s: %s %v, want %s named alone", in, e.Message, e.Details, want)
		}
	}
}

// TestDecodeJSONRefusesRepeatedMembers: a member whose name an earlier
// member of its object has, in a declared object or a free-form one, or
// under a name that differs only in case, is refused by its path, beside
// the body's other refusals; never read as the last.
func TestDecodeJSONRefusesRepeatedMembers(t *testing.T) {
	type point struct {
		VehicleID string `json:"vehicle_id"`
	}
	type req struct {
		Name     string         `json:"name"`
		Vehicles []point        `json:"vehicles"`
		Metadata map[string]any `json:"metadata"`
	}
	for in, want := range map[string]map[string]string{
		`{"name":"a","name":"b"}`: {"name": "is repeated: a member name appears once in its object"},
		`{"vehicles":[{"vehicle_id":"a"},{"vehicle_id":"b"},{"vehicle_id":"c","vehicle_id":"d"}]}`: {"vehicles[2].vehicle_id": "is repeated: a member name appears once in its object"},
		`{"metadata":{"note":"a","x":{"k":1,"k":2},"note":"b"}}`: {"metadata.note": "is repeated: a member name appears once in its object",
			"metadata.x.k": "is repeated: a member name appears once in its object"},
		`{"name":"a","NAME":"b"}`:        {"name": "is repeated: a member name appears once in its object"},
		`{"name":"a","zz":1,"zz":2}`:     {"zz": "unknown field"},
		`{"name":"a","name":"a","zz":1}`: {"name": "is repeated: a member name appears once in its object", "zz": "unknown field"},
	} {
		wantDetails[req](t, in, want)
	}
	var r req
	if err := api.DecodeJSON([]byte(`{"metadata":{"Note":1,"note":2},"vehicles":[{"vehicle_id":"a"},{"vehicle_id":"a"}]}`), &r); err != nil {
		t.Errorf("free-form names that differ in case, or one id in two objects: %v", err)
	}
}

// TestDecodeJSONNamesTypeErrorsWithOtherProblems: a value of the wrong
// type does not hide the body's other problems: one answer names them
// all, validation_failed as every answer with problems of several kinds.
func TestDecodeJSONNamesTypeErrorsWithOtherProblems(t *testing.T) {
	type req struct {
		N      int            `json:"n"`
		Count  uint8          `json:"count"`
		Kind   kindName       `json:"kind"`
		Sizes  []float64      `json:"sizes"`
		At     time.Time      `json:"at"`
		TripID string         `json:"trip_id"`
		Meta   map[string]any `json:"metadata"`
	}
	for in, want := range map[string]map[string]string{
		`{"n":"x","zz":1}`:                   {"n": "must be an integer", "zz": "unknown field"},
		`{"zz":1,"n":"x","yy":{"a":1}}`:      {"n": "must be an integer", "zz": "unknown field", "yy": "unknown field"},
		`{"n":"x","trip_id":" "}`:            {"n": "must be an integer", "trip_id": "must not be empty or only white space"},
		`{"n":"x","metadata":{"a":1,"a":2}}`: {"n": "must be an integer", "metadata.a": "is repeated: a member name appears once in its object"},
		`{"at":"yesterday","zz":1}`:          {"at": "must be an ISO 8601 date-time with a time zone (RFC 3339)", "zz": "unknown field"},
		// every value of a wrong type is named, not only the first one
		// the decoder met: a date-time that does not parse, which stops
		// the decoder, hides none after it
		`{"at":"yesterday","n":"x"}`:           {"at": "must be an ISO 8601 date-time with a time zone (RFC 3339)", "n": "must be an integer"},
		`{"n":1.5,"count":300,"kind":true}`:    {"n": "must be an integer", "count": "must be an integer", "kind": "must be a string"},
		`{"sizes":[1,"2",3,{}],"n":"x"}`:       {"n": "must be an integer", "sizes[1]": "must be a number", "sizes[3]": "must be a number"},
		`{"metadata":[],"at":5,"trip_id":" "}`: {"metadata": "must be an object", "at": "must be an ISO 8601 date-time with a time zone (RFC 3339)", "trip_id": "must not be empty or only white space"},
	} {
		wantDetails[req](t, in, want)
	}
	// alone, a wrong type keeps its code and message
	var r req
	err := api.DecodeJSON([]byte(`{"n":"x"}`), &r)
	var e *api.Error
	if !errors.As(err, &e) || e.Code != "invalid_request" || e.Message != "field n must be an integer, got string" {
		t.Errorf("a wrong type alone: %v", err)
	}
	// a named string type is a string to the client
	err = api.DecodeJSON([]byte(`{"kind":5}`), &r)
	if !errors.As(err, &e) || e.Code != "invalid_request" || e.Message != "field kind must be a string, got number" {
		t.Errorf("a number for a named string type: %v", err)
	}
}

// kindName is a named string type, as the requests' enumerations are.
type kindName string

// wantDetails decodes in into a T and wants one 400 validation_failed
// whose details are want.
func wantDetails[T any](t *testing.T, in string, want map[string]string) {
	t.Helper()
	var r T
	err := api.DecodeJSON([]byte(in), &r)
	var e *api.Error
	if !errors.As(err, &e) || e.Status != 400 || e.Code != "validation_failed" {
		t.Errorf("%s: %v", in, err)
		return
	}
	if d, _ := e.Details.(map[string]string); !reflect.DeepEqual(d, want) {
		t.Errorf("%s: details %v, want %v", in, e.Details, want)
	}
}
