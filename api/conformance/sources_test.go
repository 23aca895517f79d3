package conformance_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/api/conformance"
)

// toyDoc has a trip with a computed score, an input id, a nullable
// computed estimate, a list of computed ratings, and a map of items.
const toyDoc = `{"components": {"schemas": {
  "Trip": {"type": "object", "properties": {
    "id": {"type": "string"},
    "score": {"type": "number", "x-fleethub-source": "computed"},
    "estimate": {"oneOf": [{"type": "number"}, {"type": "null"}], "x-fleethub-source": "computed"},
    "weight": {"type": "number", "x-fleethub-source": "constant"},
    "ratings": {"type": ["array", "null"], "items": {"$ref": "#/components/schemas/Rating"}},
    "by_name": {"type": "object", "additionalProperties": {"$ref": "#/components/schemas/Rating"}},
    "detail": {"oneOf": [{"$ref": "#/components/schemas/Detail"}, {"type": "null"}]}
  }},
  "Rating": {"type": "object", "properties": {"stars": {"type": "integer", "x-fleethub-source": "computed"}}},
  "Detail": {"type": "object", "properties": {"grade": {"allOf": [{"type": "string"}], "x-fleethub-source": "computed"}}},
  "Never": {"type": "object", "properties": {"reach": {"type": "number", "x-fleethub-source": "computed"}}}
}}}`

func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// A computed field that keeps one value across the responses is found,
// with its value; fields that vary, fields not marked computed and fields
// seen too rarely are not.
func TestTallyFindsAPlantedConstant(t *testing.T) {
	doc := decode(t, toyDoc)
	trip := map[string]any{"$ref": "#/components/schemas/Trip"}
	tally := conformance.NewTally(doc)
	for _, r := range []string{
		`{"id": "a", "score": 71.5, "estimate": null, "weight": 0.2, "ratings": [{"stars": 4}], "by_name": {"x": {"stars": 2}}, "detail": {"grade": "B"}}`,
		`{"id": "b", "score": 88, "estimate": 12.5, "weight": 0.2, "ratings": [{"stars": 4}, {"stars": 4}], "detail": null}`,
		`{"id": "c", "score": 90, "estimate": 3, "weight": 0.2, "ratings": null, "by_name": {"y": {"stars": 4}}, "detail": {"grade": "B"}}`,
	} {
		tally.Observe(trip, decode(t, r))
	}
	got := tally.Constants(3)
	// stars: 4, 4, 4, 2, 4 varies; the planted constant is not among the ratings
	if len(got) != 0 {
		t.Fatalf("constants %+v, want none", got)
	}
	// a planted constant: every score 50 from here on, on top of three
	// fresh responses
	planted := conformance.NewTally(doc)
	for _, r := range []string{
		`{"id": "a", "score": 50, "estimate": 1, "ratings": [{"stars": 1}], "detail": {"grade": "A"}}`,
		`{"id": "b", "score": 50, "estimate": 2, "ratings": [{"stars": 2}], "detail": {"grade": "A"}}`,
		`{"id": "c", "score": 50, "estimate": 3, "ratings": [{"stars": 3}]}`,
	} {
		planted.Observe(trip, decode(t, r))
	}
	want := []conformance.Constant{{Field: "Trip.score", Value: "50", Count: 3}}
	if got := planted.Constants(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("constants %+v, want %+v", got, want)
	}
	// seen twice only: not judged, but counted
	if c := planted.Count("Detail.grade"); c != 2 {
		t.Errorf("Detail.grade seen %d times, want 2", c)
	}
	if got := planted.Constants(2); len(got) != 2 || got[0].Field != "Detail.grade" || got[0].Value != `"A"` {
		t.Errorf("constants at 2: %+v", got)
	}
}

// A computed field that is null every time is a constant too.
func TestTallyAlwaysNullIsConstant(t *testing.T) {
	doc := decode(t, toyDoc)
	tally := conformance.NewTally(doc)
	for i := 0; i < 3; i++ {
		tally.Observe(map[string]any{"$ref": "#/components/schemas/Trip"}, map[string]any{"id": "x", "score": float64(i), "estimate": nil})
	}
	want := []conformance.Constant{{Field: "Trip.estimate", Value: "null", Count: 3}}
	if got := tally.Constants(3); !reflect.DeepEqual(got, want) {
		t.Fatalf("constants %+v, want %+v", got, want)
	}
}

func TestComputedAndSources(t *testing.T) {
	doc := decode(t, toyDoc)
	want := []string{"Detail.grade", "Never.reach", "Rating.stars", "Trip.estimate", "Trip.score"}
	if got := conformance.Computed(doc); !reflect.DeepEqual(got, want) {
		t.Errorf("Computed = %v, want %v", got, want)
	}
	if got := conformance.Sources(doc)["constant"]; !reflect.DeepEqual(got, []string{"Trip.weight"}) {
		t.Errorf("constant fields %v", got)
	}
}
