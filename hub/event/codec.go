package event

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Marshal encodes an envelope for the bus (msgpack: compact and about
// three times faster than JSON for these shapes).
func Marshal(e *Envelope) ([]byte, error) {
	b, err := msgpack.Marshal(e)
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
	var e Envelope
	if err := msgpack.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("event: unmarshal: %w", err)
	}
	return &e, nil
}
