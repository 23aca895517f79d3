package jsonpath_test

import (
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

type inner struct {
	DeviceID string `json:"device_id,omitempty"`
	Model    string `json:"model,omitempty"`
}

type body struct {
	TripID   string            `json:"trip_id"`
	Vehicles []string          `json:"vehicles,omitempty" id:"true"`
	IDs      []string          `json:"driver_ids,omitempty"`
	Own      string            `json:"fleet_id,omitempty" id:"own"`
	Name     string            `json:"name,omitempty"`
	Device   *inner            `json:"device,omitempty"`
	Points   []inner           `json:"points,omitempty"`
	Meta     map[string]any    `json:"metadata,omitempty"`
	Groups   map[string]*inner `json:"groups,omitempty"`
}

func TestBlank(t *testing.T) {
	typ := reflect.TypeFor[body]()
	got := jsonpath.Blank([]byte(`{"trip_id":" ","vehicles":["v"," \u00a0"],"driver_ids":[""],"fleet_id":" ","name":" ",
		"device":{"device_id":"\t","model":" "},"points":[{"device_id":"d"},{"device_id":""}],"metadata":{"x_id":" "},"groups":{"g":{"device_id":" "}}}`), typ)
	want := map[string]string{"trip_id": jsonpath.BlankRefusal, "vehicles[1]": jsonpath.BlankRefusal, "driver_ids[0]": jsonpath.BlankRefusal,
		"device.device_id": jsonpath.BlankRefusal, "points[1].device_id": jsonpath.BlankRefusal, "groups.g.device_id": jsonpath.BlankRefusal}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Blank = %v, want %v", got, want)
	}
	if got := jsonpath.Blank([]byte(`{"trip_id":" t ","vehicles":["a b"]}`), typ); got != nil {
		t.Errorf("ids with spaces inside or around: %v", got)
	}
	if got := jsonpath.Check([]byte(`{"trip_id":"","zz":1}`), typ); len(got) != 2 || got["zz"] != "unknown field" || got["trip_id"] != jsonpath.BlankRefusal {
		t.Errorf("Check = %v", got)
	}
	if got := jsonpath.Unknown([]byte(`{"trip_id":""}`), typ); got != nil {
		t.Errorf("Unknown names a blank id: %v", got)
	}
}

func TestIsBlank(t *testing.T) {
	for s, want := range map[string]bool{"": true, " ": true, "\t\r\n\v\f": true, "\u00a0\u2003\u3000": true, "\u0085": true,
		"a": false, " a ": false, "\u00a0x": false, "\u200b": false} {
		if jsonpath.IsBlank(s) != want || jsonpath.IsBlank([]byte(s)) != want {
			t.Errorf("IsBlank(%q) != %v", s, want)
		}
	}
}

func TestMayBeBlank(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{&body{TripID: "t"}, false},
		{&body{TripID: "t", Points: make([]inner, 1000), Name: " "}, true}, // points' device_id left out decodes to ""
		{&body{TripID: ""}, true},
		{&body{TripID: "t", Vehicles: []string{"a", " "}}, true},
		{&body{TripID: "t", Own: " "}, false},
		{&body{TripID: "t", Device: &inner{DeviceID: " "}}, true},
		{&body{TripID: "t", Device: &inner{DeviceID: "d", Model: " "}}, false},
	} {
		if got := jsonpath.MayBeBlank(c.v); got != c.want {
			t.Errorf("MayBeBlank(%+v) = %v", c.v, got)
		}
	}
}

func TestHasControl(t *testing.T) {
	for s, want := range map[string]bool{"veh-1": false, "é ü 車": false, "a\nb": true, "a\tb": true, "\x00": true, "a\x7fb": true,
		"a\u0085b": true, "a\u009fb": true, "a\u00a0b": false, "\xc2": false} {
		if got := jsonpath.HasControl(s); got != want {
			t.Errorf("HasControl(%q) = %v, want %v", s, got, want)
		}
		if got := jsonpath.HasControl([]byte(s)); got != want {
			t.Errorf("HasControl([]byte(%q)) = %v, want %v", s, got, want)
		}
	}
}

// TestOddMemberNamesQuoted: a member whose name is empty or holds a dot
// (or anything but letters, digits, _ and -) is named quoted in brackets,
// so that its path reads back one way and never as nothing.
func TestOddMemberNamesQuoted(t *testing.T) {
	type inner struct {
		A int `json:"a"`
	}
	type body struct {
		In inner `json:"in"`
	}
	got := jsonpath.Unknown([]byte(`{"":1,"a.b":2,"in":{"x y":3,"a":1},"in2":4}`), reflect.TypeFor[body]())
	want := map[string]string{`[""]`: jsonpath.UnknownRefusal, `["a.b"]`: jsonpath.UnknownRefusal,
		`in["x y"]`: jsonpath.UnknownRefusal, "in2": jsonpath.UnknownRefusal}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("unknown fields named %v, want %v", got, want)
	}
}
