package event

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Marshal encodes an envelope for the bus (msgpack: compact and about
// three times faster than JSON for these shapes).
func Marshal(e *Envelope) ([]byte, error) {
	if e.Kind == KindEvent && e.Telemetry == nil && e.Point == nil && len(e.Points) == 0 {
		// an event envelope without reflection when its free-form values
		// allow (appendEventEnvelope)
		if b, ok := appendEventEnvelope(make([]byte, 0, 512), e); ok {
			return b, nil
		}
	}
	// a copy goes to the reflected encoder, so that e does not escape
	// through it: a caller's envelope stays on its stack (one allocation
	// fewer per published event)
	c := *e
	b, err := msgpack.Marshal(&c)
	if err != nil {
		return nil, fmt.Errorf("event: marshal: %w", err)
	}
	return b, nil
}

// Unmarshal decodes an envelope from the bus. Telemetry and event
// envelopes are read without reflection (decodeTelemetry, decodeEvent),
// everything else by the msgpack library.
func Unmarshal(b []byte) (*Envelope, error) {
	switch kind, _ := headKind(b); string(kind) {
	case KindTelemetry:
		if e, ok := decodeTelemetry(b); ok {
			return e, nil
		}
	case KindEvent:
		if e, ok := decodeEvent(b); ok {
			return e, nil
		}
	}
	return unmarshalReflected(b)
}

// unmarshalReflected decodes b with the msgpack library. Bytes the
// library cannot take make it panic in places (a nil where a time is
// expected: "reflect: call of reflect.Value.IsNil on struct Value",
// found by FuzzHead); such a message is an error, not a crash of its
// reader.
func unmarshalReflected(b []byte) (e *Envelope, err error) {
	defer func() {
		if r := recover(); r != nil {
			e, err = nil, fmt.Errorf("event: unmarshal: malformed message: %v", r)
		}
	}()
	var env Envelope
	if err := msgpack.Unmarshal(b, &env); err != nil {
		return nil, fmt.Errorf("event: unmarshal: %w", err)
	}
	return &env, nil
}
