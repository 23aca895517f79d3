package jsonpath_test

import (
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

type stop struct {
	Priority string `json:"priority,omitempty" enum:"low,high"`
}

type enums struct {
	Kind     string  `json:"kind" required:"true" enum:"a,b"`
	Mode     string  `json:"mode,omitempty" enum:"fast,slow"`
	Unit     *string `json:"unit,omitempty" enum:"km,mi"`
	Open     string  `json:"open,omitempty" enum:",x"`
	Note     string  `json:"note,omitempty"`
	Stops    []stop  `json:"stops,omitempty"`
	Settings *struct {
		Level string `json:"level,omitempty" enum:"one,two"`
	} `json:"settings,omitempty"`
}

// TestEmptyEnum: an optional string of a fixed set sent as "" is named by
// its full path with the values it takes, left out or null it is not; a
// required one, a *string (its validator tells "" from absent), a set
// that lists "" and a field of no set are not named.
func TestEmptyEnum(t *testing.T) {
	typ := reflect.TypeFor[enums]()
	body := []byte(`{"kind":"","mode":"","unit":"","open":"","note":"","stops":[{"priority":"low"},{"priority":""}],"settings":{"level":""}}`)
	want := map[string]string{"mode": "must be one of fast, slow", "stops[1].priority": "must be one of low, high",
		"settings.level": "must be one of one, two"}
	if got := jsonpath.Check(body, typ); !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %v, want %v", got, want)
	}
	if got := jsonpath.Blank(body, typ); !reflect.DeepEqual(got, want) {
		t.Errorf("Blank = %v, want %v", got, want)
	}
	if got := jsonpath.Check([]byte(`{"mode":null,"stops":[{}],"settings":{"level":null}}`), typ); got != nil {
		t.Errorf("left out or null: %v", got)
	}
	if got := jsonpath.Unknown(body, typ); got != nil {
		t.Errorf("Unknown names an empty enum value: %v", got)
	}
}
