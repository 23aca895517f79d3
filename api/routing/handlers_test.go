package routing

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/internal/mapmatch"
	"github.com/fleethub/fleethub/internal/routing"
)

// TestAppendMatrix: the answer written directly decodes to what encoding
// MatrixResponse gives: cells rounded to the meter and the tenth of a
// second, nulls for no route, the snaps with their reasons.
func TestAppendMatrix(t *testing.T) {
	res := routing.Result{
		Costs: [][]routing.Cost{
			{{Meters: 1234.5678, Seconds: 151.34, OK: true}, {}},
			{{Meters: 0, Seconds: 0, OK: true}, {Meters: 98765432.1, Seconds: 1e7 + 0.06, OK: true}},
			{{Meters: 5, Seconds: 0.04, OK: true}, {Meters: 1050, Seconds: 60.05, OK: true}},
			{{Meters: 1e22, Seconds: 3e20, OK: true}, {Meters: 0.4, Seconds: 12.96, OK: true}},
		},
		Sources: []routing.Snap{{Meters: 12.345, OK: true}, {Reason: `no road "here" within 2000 m`}},
		Targets: []routing.Snap{{Meters: 0, OK: true}, {Meters: 3.01, OK: true}},
	}
	got, err := appendMatrix(nil, res)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.Marshal(MatrixResponse{Success: true, Data: MatrixData{SourcesToTargets: cells(res.Costs), Units: "kilometers",
		Sources: located(res.Sources), Targets: located(res.Targets)}})
	if err != nil {
		t.Fatal(err)
	}
	var a, b any
	if err := json.Unmarshal(got, &a); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &b); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("written:\n%s\nencoded:\n%s", got, want)
	}
	if string(got[:len(got)-1]) != string(want) {
		t.Errorf("bytes differ:\n%s\n%s", got, want)
	}
}

func BenchmarkAppendMatrix(b *testing.B) {
	res := routing.Result{Costs: make([][]routing.Cost, 50), Sources: make([]routing.Snap, 50), Targets: make([]routing.Snap, 50)}
	for i := range res.Costs {
		res.Costs[i] = make([]routing.Cost, 50)
		for j := range res.Costs[i] {
			res.Costs[i][j] = routing.Cost{Meters: float64(1000 + 37*i + j), Seconds: float64(100 + i + j), OK: true}
		}
		res.Sources[i], res.Targets[i] = routing.Snap{Meters: 3, OK: true}, routing.Snap{Meters: 4, OK: true}
	}
	var buf []byte
	for b.Loop() {
		buf, _ = appendMatrix(buf[:0], res)
	}
}

func BenchmarkEncodeMatrix(b *testing.B) {
	res := routing.Result{Costs: make([][]routing.Cost, 50), Sources: make([]routing.Snap, 50), Targets: make([]routing.Snap, 50)}
	for i := range res.Costs {
		res.Costs[i] = make([]routing.Cost, 50)
		for j := range res.Costs[i] {
			res.Costs[i][j] = routing.Cost{Meters: float64(1000 + 37*i + j), Seconds: float64(100 + i + j), OK: true}
		}
		res.Sources[i], res.Targets[i] = routing.Snap{Meters: 3, OK: true}, routing.Snap{Meters: 4, OK: true}
	}
	for b.Loop() {
		json.Marshal(MatrixResponse{Success: true, Data: MatrixData{SourcesToTargets: cells(res.Costs), Units: "kilometers",
			Sources: located(res.Sources), Targets: located(res.Targets)}})
	}
}

// TestEncodeFast: a match answer written by goccy/go-json is byte for
// byte what encoding/json writes for c.JSON (floats, nulls, the closing
// newline).
func TestEncodeFast(t *testing.T) {
	res := mapmatch.Result{
		Matches: []mapmatch.Match{
			{Index: 0, Matched: true, WayID: 11, Lat: 40.00000012, Lon: -83.1234567891, Meters: 2.25, Confidence: 0.98765},
			{Index: 1, Matched: true, WayID: 11, Lat: 40.001, Lon: -83.001, Meters: 0, Confidence: 1},
			{Index: 2},
			{Index: 3, Matched: true, WayID: 1 << 40, Lat: -33.5, Lon: 151.25, Meters: 1e-7, Confidence: 1e-9},
		},
		Runs: []mapmatch.Run{
			{First: 0, Last: 1, Meters: 123.456789, Segments: []mapmatch.Segment{{WayID: 11, Class: routing.ClassPrimary, LimitKmh: 88.5, Posted: true,
				Meters: 123.456789, Lat: []float64{40.00000012, 40.001}, Lon: []float64{-83.1234567891, -83.001}, Start: 0, End: 1, Confidence: 0.98765}}},
			{First: 3, Last: 3},
		},
	}
	v := MatchResponse{Success: true, Data: matchData(res, []float64{1.5e9, 1.5e9 + 1.25, 1.5e9 + 3, 1.5e9 + 4.5})}
	got, err := encodeFast(v)
	if err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	enc := json.NewEncoder(&want)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("goccy:\n%s\nencoding/json:\n%s", got, want.Bytes())
	}
}
