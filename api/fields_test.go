package api

import (
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

type fieldsInner struct {
	Lat float64 `json:"latitude"`
}

type fieldsBase struct {
	ID string `json:"id"`
}

type fieldsBody struct {
	fieldsBase
	Name    string                 `json:"name"`
	Where   *fieldsInner           `json:"where,omitempty"`
	Stops   []fieldsInner          `json:"stops"`
	ByName  map[string]fieldsInner `json:"by_name"`
	Free    map[string]any         `json:"metadata"`
	At      time.Time              `json:"at"`
	Skipped string                 `json:"-"`
	Plain   int
}

func TestDecodeJSONNamesEveryUnknownField(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"id":"a","name":"n","where":{"latitude":1},"stops":[{"latitude":2}],"by_name":{"x":{"latitude":3}},"metadata":{"any":{"thing":1}},"at":"2026-01-01T00:00:00Z","Plain":1}`, nil},
		{`{"NAME":"folded as encoding/json folds","plain":2}`, nil},
		{`{"nmae":"typo"}`, []string{"nmae"}},
		{`{"Skipped":"x","-":1}`, []string{"-", "Skipped"}},
		{`{"where":{"latitude":1,"lon":2},"stops":[{},{"lat":1}],"by_name":{"k":{"x":1}}}`, []string{"by_name.k.x", "stops[1].lat", "where.lon"}},
		{`{"a":1,"b":2,"where":{"c":3}}`, []string{"a", "b", "where.c"}},
	} {
		var v fieldsBody
		err := DecodeJSON([]byte(c.body), &v)
		if c.want == nil {
			if err != nil {
				t.Errorf("%s: %v", c.body, err)
			}
			continue
		}
		e := AsError(err)
		if e.Status != 400 || e.Code != "validation_failed" {
			t.Errorf("%s: %v, want 400 validation_failed", c.body, err)
			continue
		}
		got := slices.Sorted(maps.Keys(e.Details.(map[string]string)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: named %v, want %v", c.body, got, c.want)
		}
	}
}

func TestDecodeJSONNamesAtMostTwenty(t *testing.T) {
	body := []byte(`{`)
	for i := range 50 {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `"f`...)
		body = append(body, byte('a'+i/26), byte('a'+i%26))
		body = append(body, `":1`...)
	}
	body = append(body, '}')
	var v fieldsBody
	e := AsError(DecodeJSON(body, &v))
	if n := len(e.Details.(map[string]string)); e.Code != "validation_failed" || n != jsonpath.MaxNamed {
		t.Fatalf("%s with %d details, want validation_failed with %d", e.Code, n, jsonpath.MaxNamed)
	}
}
