package ws

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/fleethub/fleethub/hub"
	"github.com/vmihailenco/msgpack/v5"
)

func FuzzParseControl(f *testing.F) {
	for _, s := range []string{
		`{"type":"ping"}`,
		`{"type":"ack","stream_id":"s1","offset":12}`,
		`{"type":"resume","stream_id":"s1","last_offset":0}`,
		`{"type":"subscribe","stream_id":"s2","last_offset":5}`,
		`{"type":"unsubscribe","stream_id":"s2"}`,
		`{"type":"ack","stream_id":"s1","offset":-1}`,
		`{"type":"ack","stream_id":"s1","offset":1e3}`,
		`{"type":"nope"}`, `{}`, `null`, `[]`, `"ping"`, ``, ` {"type":"ping"} `,
		`{"type":"ping","type":"ack"}`, `{"TYPE":"PING"}`,
		`{"type":"resume","stream_id":"s1","last_offset":3,"epoch":"9f2c41d07a1be3c5"}`,
		`{"type":"subscribe","stream_id":"s1","last_offset":3,"epoch":"a-b_C"}`,
		`{"type":"subscribe","stream_id":"s1","epoch":"abc"}`,
		`{"type":"ack","stream_id":"s1","offset":3,"epoch":"e1"}`,
		`{"type":"resume","stream_id":"s1","last_offset":3,"epoch":""}`,
		`{"type":"resume","stream_id":"s1","last_offset":3,"epoch":"\u00e9"}`,
		`{"type":"resume","stream_id":"s1","last_offset":3,"epoch":null}`,
		`{"type":"ack","stream_id":" ","offset":1}`, `{"type":"subscribe","stream_id":"\t\u00a0"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cf, err := parseControl(b)
		if err != nil {
			return
		}
		if cf.Epoch != nil && (cf.Type == "ack" || cf.Type == "resume" || cf.Type == "subscribe") {
			if !hub.ValidEpoch(*cf.Epoch) || cf.Type != "ack" && cf.LastOffset == nil {
				t.Fatalf("accepted epoch %q of %q", *cf.Epoch, b)
			}
			for _, r := range *cf.Epoch {
				if !strings.ContainsRune("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-", r) {
					t.Fatalf("accepted epoch %q of %q", *cf.Epoch, b)
				}
			}
		}
		if cf.StreamID != "" && strings.TrimSpace(cf.StreamID) == "" {
			t.Fatalf("accepted a blank stream_id in %q", b)
		}
		switch cf.Type {
		case "ping":
		case "ack":
			if cf.StreamID == "" || cf.Offset == nil || *cf.Offset < 0 {
				t.Fatalf("accepted %q as %+v", b, cf)
			}
		case "resume":
			if cf.StreamID == "" || cf.LastOffset == nil || *cf.LastOffset < 0 {
				t.Fatalf("accepted %q as %+v", b, cf)
			}
		case "subscribe", "unsubscribe":
			if cf.StreamID == "" || (cf.LastOffset != nil && *cf.LastOffset < 0) {
				t.Fatalf("accepted %q as %+v", b, cf)
			}
		case "subscribe_feed":
			// the feed's parameters are checked by feedParams and the feed
		case "unsubscribe_feed":
			if cf.StreamID != "" || cf.Offset != nil || cf.LastOffset != nil || cf.Epoch != nil {
				t.Fatalf("accepted %q as %+v", b, cf)
			}
		default:
			t.Fatalf("accepted type %q", cf.Type)
		}
	})
}

func FuzzJSONToMsgpack(f *testing.F) {
	for _, s := range []string{
		`{"a":1,"b":[true,false,null],"c":{"d":"e"},"f":-2.5,"g":18446744073709551615}`,
		`[]`, `{}`, `"x"`, `0`, `-9223372036854775808`, `1e400`, `[[[[1]]]]`,
		`{"a":1} {"b":2}`, `{"a":}`, `{"a":1,}`, ``, `nul`, `"\u00e9\ud83d\ude00"`,
		`"\ud800"`, `"\ud800\u0041"`, `"\udc00\ud800x"`, `"a\"\\\/\b\f\n\r\t"`,
		` { "a" : [ 1 , 2 , [ ] , { } ] , "b" : { "c" : -0.5e-3 } } `,
		`{"k":"` + strings.Repeat("x", 70000) + `"}`,
	} {
		f.Add([]byte(s))
	}
	f.Add([]byte{'"', 0xff, 0xc3, '"'})
	f.Fuzz(func(t *testing.T, b []byte) {
		mp, err := jsonToMsgpack(b)
		var want any
		if json.Unmarshal(b, &want) != nil {
			return // invalid JSON (or a number out of float64 range): any answer but a panic
		}
		if err != nil {
			if depth(b) > maxJSONDepth {
				return
			}
			t.Fatalf("valid JSON %q: %v", b, err)
		}
		var got any
		if err := msgpack.Unmarshal(mp, &got); err != nil {
			t.Fatalf("%q: msgpack does not decode: %v", b, err)
		}
		gj, err := json.Marshal(got)
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		var norm any
		_ = json.Unmarshal(gj, &norm)
		if !reflect.DeepEqual(norm, want) {
			t.Fatalf("%q: got %s", b, gj)
		}
	})
}

// depth is the deepest nesting of brackets in b, ignoring strings roughly.
func depth(b []byte) int {
	d, maxD, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case esc:
			esc = false
		case inStr:
			esc = c == '\\'
			inStr = c != '"'
		case c == '"':
			inStr = true
		case c == '[' || c == '{':
			d++
			maxD = max(maxD, d)
		case c == ']' || c == '}':
			d--
		}
	}
	return maxD
}

// The map-key order of a JSON object survives the conversion.
func TestJSONToMsgpackKeepsKeyOrder(t *testing.T) {
	mp, err := jsonToMsgpack([]byte(`{"z":1,"a":2,"m":{"y":true,"b":null}}`))
	if err != nil {
		t.Fatal(err)
	}
	dec := msgpack.NewDecoder(bytes.NewReader(mp))
	n, _ := dec.DecodeMapLen()
	var keys []string
	for range n {
		k, _ := dec.DecodeString()
		keys = append(keys, k)
		_ = dec.Skip()
	}
	if !reflect.DeepEqual(keys, []string{"z", "a", "m"}) {
		t.Fatalf("keys %v", keys)
	}
}

// Every integer and header form decodes back with msgpack.
func TestMsgpackForms(t *testing.T) {
	for _, n := range []int64{0, 1, 127, 128, 255, 256, 65535, 65536, 1<<32 - 1, 1 << 32, math.MaxInt64,
		-1, -32, -33, -128, -129, -32768, -32769, math.MinInt32, math.MinInt32 - 1, math.MinInt64} {
		var got int64
		if err := msgpack.Unmarshal(appendInt(nil, n), &got); err != nil || got != n {
			t.Fatalf("int %d: got %d, %v", n, got, err)
		}
	}
	var u uint64
	if err := msgpack.Unmarshal(appendUint(nil, math.MaxUint64), &u); err != nil || u != math.MaxUint64 {
		t.Fatalf("uint: %d %v", u, err)
	}
	for _, n := range []int{0, 15, 16, 65535, 65536} {
		arr := appendArrayHeader(nil, n)
		m := appendMapHeader(nil, n)
		s := appendStrHeader(nil, n)
		for range n {
			arr = append(arr, 0xc0)
			m = appendInt(append(m, 0xc0), 0)
		}
		s = append(s, strings.Repeat("s", n)...)
		dec := msgpack.NewDecoder(bytes.NewReader(arr))
		if l, err := dec.DecodeArrayLen(); err != nil || l != n {
			t.Fatalf("array %d: %d %v", n, l, err)
		}
		dec = msgpack.NewDecoder(bytes.NewReader(m))
		if l, err := dec.DecodeMapLen(); err != nil || l != n {
			t.Fatalf("map %d: %d %v", n, l, err)
		}
		var str string
		if err := msgpack.Unmarshal(s, &str); err != nil || len(str) != n {
			t.Fatalf("str %d: %d %v", n, len(str), err)
		}
	}
}

// A control frame naming a blank stream is invalid_frame naming
// stream_id, as a blank id is everywhere in the API.
func TestControlBlankStreamID(t *testing.T) {
	for _, b := range []string{
		`{"type":"ack","stream_id":" ","offset":1}`,
		`{"type":"resume","stream_id":"\t","last_offset":0}`,
		`{"type":"subscribe","stream_id":"\u00a0"}`,
		`{"type":"unsubscribe","stream_id":"  "}`,
	} {
		if _, err := parseControl([]byte(b)); err == nil || !strings.Contains(err.Error(), "stream_id") {
			t.Errorf("%s: %v, want a refusal naming stream_id", b, err)
		}
	}
	if _, err := parseControl([]byte(`{"type":"ack","stream_id":" s1 ","offset":1}`)); err != nil {
		t.Errorf("an id with spaces around it is an id: %v", err)
	}
}
