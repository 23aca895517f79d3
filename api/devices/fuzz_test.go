package devices

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/api"
)

// FuzzDecodeDeviceSettings feeds arbitrary bodies to the settings decoder
// (PUT /v1/devices/{id}/settings): it never panics, answers a 400 for a
// bad body, refuses every non-empty body that is not a JSON object, and a
// body accepted once decodes to the same settings again.
func FuzzDecodeDeviceSettings(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		ct := []byte("application/json")
		a, errA := decodeSettings(ct, body)
		b, errB := decodeSettings(ct, body)
		if (errA == nil) != (errB == nil) {
			t.Fatalf("%v, then %v", errA, errB)
		}
		if errA != nil {
			var e *api.Error
			if !errors.As(errA, &e) || e.Status != 400 {
				t.Fatalf("error %v is not a 400", errA)
			}
			if errA.Error() != errB.Error() {
				t.Fatalf("%v, then %v", errA, errB)
			}
			return
		}
		if tr := bytes.TrimLeft(body, " \t\r\n"); len(tr) == 0 || tr[0] != '{' {
			t.Fatalf("accepted a body that is not an object: %q", body)
		}
		if !json.Valid(body) {
			t.Fatalf("accepted %q, which is not one JSON value", body)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("decoded %+v, then %+v", a, b)
		}
	})
}
