package routing

import (
	"bytes"
	"fmt"
	"reflect"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/jsonpath"
	gojson "github.com/goccy/go-json"
)

// bindFast decodes a large body (a trace of up to 10,000 fixes) with
// goccy/go-json, several times faster than encoding/json on such bodies;
// a body it refuses, one that is not a JSON object, or one with a
// repeated member (which goccy/go-json reads as the last) goes to
// api.DecodeJSON for the precise answer every route gives (naming each
// unknown field and repeated member, refusing null).
func bindFast(c *api.Ctx, v any) error {
	body := c.PostBody()
	if len(bytes.TrimSpace(body)) == 0 {
		return api.Errf("invalid_request", "request body is required")
	}
	if err := api.CheckJSON(c.Request.Header.ContentType()); err != nil {
		return err
	}
	return decodeFast(body, v)
}

// decodeFast decodes body into v as api.DecodeJSON does, the same value
// and the same refusals, through goccy/go-json where it can.
func decodeFast(body []byte, v any) error {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return api.DecodeJSON(body, v)
	}
	dec := gojson.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil || api.TrailingData(body, dec.InputOffset()) || jsonpath.HasRepeated(body, true) {
		reflect.ValueOf(v).Elem().SetZero()
		return api.DecodeJSON(body, v)
	}
	return nil
}

// writeFast encodes v as the 200 answer with goccy/go-json, as c.JSON
// does with encoding/json.
func writeFast(c *api.Ctx, v any) error {
	b, err := encodeFast(v)
	if err != nil {
		return api.Internal(err)
	}
	c.SetStatusCode(200)
	c.SetContentType("application/json")
	c.Response.SetBodyRaw(b)
	return nil
}

// encodeFast is v's JSON as c.JSON writes it: no HTML escaping, a
// closing newline.
func encodeFast(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := gojson.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("routing: encode: %w", err)
	}
	return buf.Bytes(), nil
}
