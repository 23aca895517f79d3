package ingestapi

import (
	"time"

	"github.com/fleethub/fleethub/api"
)

// DecodeTelemetryBody exposes the body decoder to the benchmarks.
func DecodeTelemetryBody(raw []byte) ([]any, error) {
	var b telemetryBody
	err := decodeBody(raw, &b)
	return b.Messages, err
}

// AcceptEvents answers c as POST /v1/events answers an accepted request
// of the given event ids, for the benchmarks.
func AcceptEvents(c *api.Ctx, ids []string, at time.Time) error {
	return accepted(c, EventsAccepted{Accepted: len(ids), EventIDs: ids, IngestedAt: at})
}

// AcceptTelemetry answers c as POST /v1/telemetry answers an accepted
// request of the given sequences, for the benchmarks.
func AcceptTelemetry(c *api.Ctx, seqs []int64, at time.Time) error {
	return accepted(c, TelemetryAccepted{Accepted: len(seqs), Sequence: seqs, IngestedAt: at})
}
