package jsonpath_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

type label string

type typed struct {
	Name  string          `json:"name"`
	Label label           `json:"label"`
	Count int8            `json:"count"`
	N     *uint16         `json:"n"`
	Ratio float32         `json:"ratio"`
	OK    bool            `json:"ok"`
	At    time.Time       `json:"at"`
	Tags  []string        `json:"tags"`
	Sub   []typedSub      `json:"sub"`
	Meta  map[string]int  `json:"meta"`
	Any   any             `json:"any"`
	Num   json.Number     `json:"num"`
	Raw   json.RawMessage `json:"raw"`
}

type typedSub struct {
	X    float64    `json:"x"`
	When *time.Time `json:"when"`
}

const timeRefusal = "must be an ISO 8601 date-time with a time zone (RFC 3339)"

func TestWrongTypesNamesEach(t *testing.T) {
	for in, want := range map[string]map[string]string{
		`{"name":"a","count":1,"tags":["x"],"sub":[{"x":1}],"meta":{"a":1},"any":[1],"num":"1.5","raw":{"z":1}}`: nil,
		`{"name":1,"count":128,"n":-1,"ratio":1e39}`:                                                             {"name": "must be a string", "count": "must be an integer", "n": "must be an integer", "ratio": "must be a number"},
		`{"label":{},"ok":"true","tags":"x"}`:                                                                    {"label": "must be a string", "ok": "must be a boolean", "tags": "must be an array"},
		`{"sub":[{"x":"1"},{"when":"soon"},{}],"meta":{"a":"1","b":2.5}}`: {"sub[0].x": "must be a number", "sub[1].when": timeRefusal,
			"meta.a": "must be an integer", "meta.b": "must be an integer"},
		`{"at":"2026-01-02T03:04:05","num":"x","name":null,"count":null}`: {"at": timeRefusal, "num": "must be a number"},
	} {
		got := jsonpath.WrongTypes([]byte(in), reflect.TypeFor[typed]())
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %v, want %v", in, got, want)
		}
	}
}

// FuzzWrongTypes holds WrongTypes to encoding/json: a body it decodes
// into the type has nothing named but date-times RFC 3339 does not allow
// (Go's parser takes a few more), and a body it refuses has something
// named.
func FuzzWrongTypes(f *testing.F) {
	for _, s := range []string{`{"name":"a","count":1}`, `{"name":1,"count":"x"}`, `{"count":1e2}`, `{"n":-0}`,
		`{"sub":[{"x":"1"}],"at":"soon"}`, `{"num":"1.5e3"}`, `{"num":" 1"}`, `{"ratio":3.5e38}`, `{"meta":{"a":9223372036854775808}}`,
		`{"at":"2026-01-02T03:04:05+24:00"}`, `{"tags":[null,"a"]}`, `{"raw":[1,{}]}`, `{"any":{"x":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		named := jsonpath.WrongTypes(body, reflect.TypeFor[typed]())
		if !json.Valid(body) || !utf8.Valid(body) || jsonpath.HasRepeated(body, true) || strings.ContainsAny(string(body), "\\") {
			return // not JSON, or names a decoder may fold or merge otherwise
		}
		for _, r := range string(body) {
			if r >= utf8.RuneSelf {
				return // encoding/json folds some names past ASCII as no lower-casing does
			}
		}
		var v typed
		err := json.Unmarshal(body, &v)
		if err == nil {
			for p, m := range named {
				if m != timeRefusal {
					t.Fatalf("%s decodes, yet %s is named: %s", body, p, m)
				}
			}
			return
		}
		if strings.HasPrefix(strings.TrimSpace(string(body)), "{") && named == nil {
			t.Fatalf("%s: encoding/json refuses it (%v), nothing named", body, err)
		}
	})
}
