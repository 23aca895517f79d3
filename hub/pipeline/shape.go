package pipeline

import (
	"github.com/fleethub/fleethub/hub/event"
	"github.com/fleethub/fleethub/hub/streams"
)

// addShaped adds a telemetry message to a stream with a Shape: the
// stream's own copy of it (or the shared encoding, base, when the shape
// leaves the message as it is), then the alert events it raises. Streams
// without a Shape never come here.
func (p *Pipeline) addShaped(b *batch, e *streams.Entry, t *event.Telemetry, base *[]byte) {
	if v := e.Shape.Message(t); v != nil {
		b.add(e, p.encode(v, e.Rec.ID), "")
	} else {
		if *base == nil {
			*base = p.encode(t, e.Rec.ID)
		}
		b.add(e, *base, "")
	}
	p.addAlerts(b, e, t)
}

// addAlerts adds the alert events t raises on a stream with a Shape.
func (p *Pipeline) addAlerts(b *batch, e *streams.Entry, t *event.Telemetry) {
	for _, a := range e.Shape.Alerts(e.Rec.ID, t) {
		b.add(e, p.encode(a, e.Rec.ID), "")
	}
}
