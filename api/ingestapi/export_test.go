package ingestapi

// DecodeTelemetryBody exposes the body decoder to the benchmarks.
func DecodeTelemetryBody(raw []byte) ([]any, error) {
	var b telemetryBody
	err := decodeBody(raw, &b)
	return b.Messages, err
}
