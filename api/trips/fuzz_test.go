package trips

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/fleethub/fleethub/api"
	domain "github.com/fleethub/fleethub/fleet/trips"
)

// FuzzDecodeTripsUpload feeds arbitrary bodies to the upload decoder
// (POST /v1/locations/batch and /v1/locations/single): it never panics,
// refuses every body that is not a JSON object with a 400, and a body
// accepted once decodes to the same request again.
func FuzzDecodeTripsUpload(f *testing.F) {
	f.Add(batchBody(2))
	f.Fuzz(func(t *testing.T, body []byte) {
		decodeTwice(t, body, func() any { return new(domain.BatchRequest) })
		decodeTwice(t, body, func() any { return new(domain.SingleRequest) })
	})
}

func decodeTwice(t *testing.T, body []byte, zero func() any) {
	t.Helper()
	ct := []byte("application/json")
	a, b := zero(), zero()
	errA, errB := decodeUpload(ct, body, a), decodeUpload(ct, body, b)
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
	if !isObject(body) {
		t.Fatalf("%T: accepted a body that is not an object: %q", a, body)
	}
	if !json.Valid(body) {
		t.Fatalf("%T: accepted %q, which is not one JSON value", a, body)
	}
	if !reflect.DeepEqual(a, b) {
		t.Fatalf("%T: decoded %+v, then %+v", a, a, b)
	}
}
