package ws

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"
)

// jsonToMsgpack converts one JSON value to msgpack, keeping the order of
// object keys. Integers become msgpack integers (the smallest form),
// other numbers float64. It runs once per entry and wire format.
func jsonToMsgpack(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseJSON(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("ws: trailing data after JSON value")
	}
	var buf bytes.Buffer
	buf.Grow(len(data))
	enc := msgpack.NewEncoder(&buf)
	if err := v.encode(enc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// maxJSONDepth bounds the nesting jsonToMsgpack accepts.
const maxJSONDepth = 256

// jsonValue is a parsed JSON value in document order: objects hold keys
// and values alternately in kids.
type jsonValue struct {
	tok  json.Token // for scalars
	obj  bool
	arr  bool
	kids []jsonValue
}

func parseJSON(dec *json.Decoder, depth int) (jsonValue, error) {
	if depth > maxJSONDepth {
		return jsonValue{}, errors.New("ws: JSON nested too deep")
	}
	t, err := dec.Token()
	if err != nil {
		return jsonValue{}, err
	}
	d, ok := t.(json.Delim)
	if !ok {
		return jsonValue{tok: t}, nil
	}
	v := jsonValue{obj: d == '{', arr: d == '['}
	if !v.obj && !v.arr {
		return jsonValue{}, errors.New("ws: unexpected JSON delimiter")
	}
	for dec.More() {
		if v.obj {
			k, err := dec.Token()
			if err != nil {
				return jsonValue{}, err
			}
			v.kids = append(v.kids, jsonValue{tok: k})
		}
		kid, err := parseJSON(dec, depth+1)
		if err != nil {
			return jsonValue{}, err
		}
		v.kids = append(v.kids, kid)
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return jsonValue{}, err
	}
	return v, nil
}

func (v *jsonValue) encode(enc *msgpack.Encoder) error {
	switch {
	case v.obj:
		if err := enc.EncodeMapLen(len(v.kids) / 2); err != nil {
			return err
		}
	case v.arr:
		if err := enc.EncodeArrayLen(len(v.kids)); err != nil {
			return err
		}
	default:
		return encodeScalar(enc, v.tok)
	}
	for i := range v.kids {
		if err := v.kids[i].encode(enc); err != nil {
			return err
		}
	}
	return nil
}

func encodeScalar(enc *msgpack.Encoder, t json.Token) error {
	switch t := t.(type) {
	case nil:
		return enc.EncodeNil()
	case bool:
		return enc.EncodeBool(t)
	case string:
		return enc.EncodeString(t)
	case json.Number:
		s := string(t)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return enc.EncodeInt(i)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return enc.EncodeUint(u)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return err
		}
		return enc.EncodeFloat64(f)
	}
	return errors.New("ws: unexpected JSON token")
}

// appendArrayHeader appends a msgpack array header for n elements.
func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n < 1<<16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}
