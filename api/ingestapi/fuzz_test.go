package ingestapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/api"
	"github.com/fleethub/fleethub/internal/jsonpath"
)

// FuzzDecodeIngestBody feeds arbitrary bodies to the decoder of
// POST /v1/telemetry (general path) and POST /v1/events: it never panics,
// refuses every body that is not a JSON object with a 400, or that
// repeats a member in one of its objects, and a body accepted once
// decodes to the same lists again.
func FuzzDecodeIngestBody(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var ta, tb telemetryBody
		same(t, body, decodeBody(body, &ta), decodeBody(body, &tb), ta, tb)
		var ea, eb eventsBody
		same(t, body, decodeBody(body, &ea), decodeBody(body, &eb), ea, eb)
	})
}

func same(t *testing.T, body []byte, errA, errB error, a, b any) {
	t.Helper()
	if (errA == nil) != (errB == nil) {
		t.Fatalf("%T: %v, then %v", a, errA, errB)
	}
	if errA != nil {
		var e *api.Error
		if !errors.As(errA, &e) || e.Status != 400 {
			t.Fatalf("%T: error %v is not a 400", a, errA)
		}
		if errA.Error() != errB.Error() {
			t.Fatalf("%T: %v, then %v", a, errA, errB)
		}
		return
	}
	if tr := bytes.TrimLeft(body, " \t\r\n"); len(tr) == 0 || tr[0] != '{' {
		t.Fatalf("%T: accepted a body that is not an object: %q", a, body)
	}
	if !json.Valid(body) {
		t.Fatalf("%T: accepted %q, which is not one JSON value", a, body)
	}
	if r := jsonpath.Repeated(body); r != nil {
		t.Fatalf("%T: accepted %q, which repeats %v", a, body, r)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%T: decoded %+v, then %+v", a, a, b)
	}
}
