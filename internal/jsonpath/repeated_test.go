package jsonpath_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/internal/jsonpath"
)

func TestRepeated(t *testing.T) {
	many := func(n int, repeat string) string {
		var b strings.Builder
		b.WriteString(`{"m":{`)
		for i := range n {
			fmt.Fprintf(&b, `"k%d":%d,`, i, i)
		}
		return b.String() + `"` + repeat + `":1}}`
	}
	for _, c := range []struct {
		body string
		want map[string]string
	}{
		{`{"a":1,"b":{"c":[1,{"d":2}]}}`, nil},
		{`{"a":1,"a":2}`, map[string]string{"a": jsonpath.RepeatedRefusal}},
		{`{"vehicles":[{"vehicle_id":"a"},{"vehicle_id":"b"},{"vehicle_id":"c","x":[],"vehicle_id":"d"}]}`,
			map[string]string{"vehicles[2].vehicle_id": jsonpath.RepeatedRefusal}},
		{`{"metadata":{"n":1,"n":{"x":1}},"event_data":{"deep":[[{"k":1,"k":1}]]}}`,
			map[string]string{"metadata.n": jsonpath.RepeatedRefusal, "event_data.deep[0][0].k": jsonpath.RepeatedRefusal}},
		{`{"a":1,"\u0061":2}`, map[string]string{"a": jsonpath.RepeatedRefusal}},
		{`{"a\"b":1,"a\u0022b":2, "s":"\"a\":1,\"a\":2"}`, map[string]string{`["a\"b"]`: jsonpath.RepeatedRefusal}},
		{`{"m":{"":1,"":2,"a.b":[{"x":1,"x":2}]}}`, map[string]string{`m[""]`: jsonpath.RepeatedRefusal, `m["a.b"][0].x`: jsonpath.RepeatedRefusal}},
		{`{"a":1,"A":2,"é":1,"É":2}`, nil}, // names differ; the type decides (Check)
		{`[{"a":1},{"a":1}]`, nil},
		{many(40, "k0"), map[string]string{"m.k0": jsonpath.RepeatedRefusal}},
		{many(40, "k40"), nil},
		{many(40, "k\u0033"), map[string]string{"m.k3": jsonpath.RepeatedRefusal}},
		{` { "a" : [ 1 , true , null , "x" , -1.5e3 ] , "a" : { } } `, map[string]string{"a": jsonpath.RepeatedRefusal}},
	} {
		if got := jsonpath.Repeated([]byte(c.body)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Repeated(%s) = %v, want %v", c.body, got, c.want)
		}
		if got := jsonpath.HasRepeated([]byte(c.body), false); got != (c.want != nil) {
			t.Errorf("HasRepeated(%s) = %v", c.body, got)
		}
	}
	var b strings.Builder
	b.WriteString(`{`)
	for i := range 30 {
		fmt.Fprintf(&b, `"x%d":1,"x%d":2,`, i, i)
	}
	b.WriteString(`"y":0}`)
	if got := jsonpath.Repeated([]byte(b.String())); len(got) != jsonpath.MaxNamed {
		t.Errorf("named %d repeats, want at most %d", len(got), jsonpath.MaxNamed)
	}
	for _, bad := range []string{``, `{`, `{"a":1,"a"`, `{"a":[1,`, `"x`, `{"a" 1}`} {
		jsonpath.Repeated([]byte(bad)) // ends without a panic
		jsonpath.HasRepeated([]byte(bad), true)
	}
}

func TestHasRepeatedFold(t *testing.T) {
	for body, want := range map[string]bool{
		`{"latitude":1,"Latitude":2}`:        true,
		`{"a":{"Tag":1,"tag":2}}`:            true,
		`{"la\u0054itude":1,"latitude":2}`:   true,
		`{"é":1,"É":2}`:                      true,
		`{"latitude":1,"longitude":2}`:       false,
		`{"a":1,"ab":2,"AbC":3,"abcd":[{}]}`: false,
	} {
		if got := jsonpath.HasRepeated([]byte(body), true); got != want {
			t.Errorf("HasRepeated(%s, fold) = %v, want %v", body, got, want)
		}
	}
}

// TestCheckNamesCaseRepeats: two names of one field that differ in case
// are both read into it, so Check names the second.
func TestCheckNamesCaseRepeats(t *testing.T) {
	typ := reflect.TypeFor[body]()
	got := jsonpath.Check([]byte(`{"trip_id":"t","TRIP_ID":"u","points":[{"device_id":"d"},{"device_id":"d","Device_ID":"e"}],"metadata":{"a":1,"A":2}}`), typ)
	want := map[string]string{"trip_id": jsonpath.RepeatedRefusal, "points[1].device_id": jsonpath.RepeatedRefusal}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %v, want %v", got, want)
	}
}

// The fast decoders call HasRepeated on every body: it allocates nothing
// for objects of up to 32 members.
func TestHasRepeatedAllocates(t *testing.T) {
	body := []byte(strings.Repeat(`{"latitude":40.1,"longitude":-83.2,"timestamp":"2026-11-23T10:00:00Z","speed_kmh":42.5,"network_type":"cellular","nested":{"a":[1,2,{"b":"c"}]}},`, 1000))
	body = append(append([]byte(`{"trip_id":"t","locations":[`), body[:len(body)-1]...), `]}`...)
	if n := testing.AllocsPerRun(20, func() { jsonpath.HasRepeated(body, true) }); n != 0 {
		t.Errorf("HasRepeated allocates %.0f times", n)
	}
	if jsonpath.HasRepeated(body, true) {
		t.Error("a body without repeats")
	}
}

func BenchmarkHasRepeated(b *testing.B) {
	body := []byte(strings.Repeat(`{"latitude":40.1,"longitude":-83.2,"timestamp":"2026-11-23T10:00:00Z","speed_kmh":42.5,"heading":87,"accuracy_meters":4.2,"altitude_meters":221.5,"battery_level":88,"network_type":"cellular"},`, 1000))
	body = append(append([]byte(`{"trip_id":"t","locations":[`), body[:len(body)-1]...), `]}`...)
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		jsonpath.HasRepeated(body, true)
	}
}

// TestCheckNamesEmptyKeys: a free-form object's key that is the empty
// string is named, at any depth, as an odd name is ([""]).
func TestCheckNamesEmptyKeys(t *testing.T) {
	type req struct {
		Name   string            `json:"name"`
		Meta   map[string]any    `json:"metadata"`
		Groups map[string]*inner `json:"groups"`
		Any    any               `json:"any"`
	}
	got := jsonpath.Check([]byte(`{"name":"n","metadata":{"":1,"x":{"":2,"y":[{"":3},{"z":4}]},"ok":{"a":{}}},"groups":{"":{"model":"m"}},"any":{"":1}}`), reflect.TypeFor[req]())
	want := map[string]string{`metadata[""]`: jsonpath.EmptyKeyRefusal, `metadata.x[""]`: jsonpath.EmptyKeyRefusal,
		`metadata.x.y[0][""]`: jsonpath.EmptyKeyRefusal, `groups[""]`: jsonpath.EmptyKeyRefusal}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Check = %v, want %v", got, want)
	}
	if got := jsonpath.Unknown([]byte(`{"metadata":{"":1}}`), reflect.TypeFor[req]()); got != nil {
		t.Errorf("Unknown names an empty key: %v", got)
	}
}

// FuzzRepeated holds the scanner to a reference written apart from it,
// over encoding/json's tokens: a body a decoder takes has a repeated
// member exactly when Repeated names one and HasRepeated says so, and
// HasRepeated with fold says so for it too.
func FuzzRepeated(f *testing.F) {
	for _, s := range []string{`{"a":1,"a":2}`, `{"a":{"b":[{"c":1},{"c":1,"c":2}]}}`, `{"a":1,"\u0061":2}`, `[{"x":1},{"x":1}]`,
		`{"A":1,"a":2}`, `{"":1,"":2}`, `{"a\"b":1,"s":"\"a\":1,\"a\":2"}`, `1`, `"x"`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !json.Valid(body) {
			jsonpath.Repeated(body) // no panic on what no decoder takes
			jsonpath.HasRepeated(body, true)
			return
		}
		want := repeatsByTokens(t, body)
		named := jsonpath.Repeated(body)
		if (named != nil) != want || jsonpath.HasRepeated(body, false) != want {
			t.Fatalf("%q: Repeated %v, HasRepeated %v, want a repeat %v", body, named, jsonpath.HasRepeated(body, false), want)
		}
		if want && !jsonpath.HasRepeated(body, true) {
			t.Fatalf("%q: a repeat not seen when folding", body)
		}
	})
}

// repeatsByTokens reports whether some object of body, valid JSON, has
// two members of one name, reading encoding/json's tokens.
func repeatsByTokens(t *testing.T, body []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	type frame struct {
		names map[string]bool // nil for an array
		key   bool            // in an object, the next string is a member name
	}
	var stack []*frame
	found := false
	value := func() { // a value ended: in an object, a name comes next
		if len(stack) > 0 && stack[len(stack)-1].names != nil {
			stack[len(stack)-1].key = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return found
		}
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{':
				stack = append(stack, &frame{names: map[string]bool{}, key: true})
			case '[':
				stack = append(stack, &frame{})
			default:
				stack = stack[:len(stack)-1]
				value()
			}
		case string:
			if top := len(stack) - 1; top >= 0 && stack[top].names != nil && stack[top].key {
				if stack[top].names[v] {
					found = true
				}
				stack[top].names[v] = true
				stack[top].key = false
				continue
			}
			value()
		default:
			value()
		}
	}
}
