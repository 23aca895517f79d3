package emergency

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// IncidentLister lists a scope's incidents (store.Incidents): an alert
// names the incidents related to it. When the alert store is one, the
// alert service uses it.
type IncidentLister interface {
	ListIncidents(ctx context.Context, f store.IncidentFilter) ([]store.Incident, int, error)
}

// relatedPage is how many incidents one look-up reads; relatedMax bounds
// the incidents an alert looks through.
const (
	relatedPage = 500
	relatedMax  = 10000
)

// related are the incidents of the scope related to a new alert: those
// active or escalated whose location lies in the alert's area (every one
// for an approximated area, which holds the whole organization, as for
// its drivers) or whose vehicle or driver the target audience names.
// nil when the service keeps no incidents.
func (a *Alerts) related(ctx context.Context, sc store.Scope, b *AlertBody, area region) ([]string, error) {
	if a.incidents == nil {
		return nil, nil
	}
	out := []string{}
	for _, status := range []string{"active", "escalated"} {
		for off := 0; off < relatedMax; off += relatedPage {
			recs, _, err := a.incidents.ListIncidents(ctx, store.IncidentFilter{Scope: sc, Status: status, Limit: relatedPage, Offset: off})
			if err != nil {
				return nil, fmt.Errorf("emergency: related incidents: %w", err)
			}
			for _, rec := range recs {
				var in Incident
				if err := json.Unmarshal(rec.Doc, &in); err != nil {
					return nil, fmt.Errorf("emergency: incident %s: %w", rec.ID, err)
				}
				if relates(b, area, &in) {
					out = append(out, in.IncidentID)
				}
			}
			if len(recs) < relatedPage {
				break
			}
		}
	}
	return out, nil
}

// relates says whether an incident relates to an alert of body b over
// area (nil: the whole organization).
func relates(b *AlertBody, area region, in *Incident) bool {
	if ta := b.TargetAudience; ta != nil {
		if in.VehicleID != "" && slices.Contains(ta.SpecificVehicles, in.VehicleID) ||
			in.DriverID != "" && slices.Contains(ta.SpecificDrivers, in.DriverID) {
			return true
		}
	}
	return area == nil || area.Contains(in.Location.Latitude, in.Location.Longitude)
}

// nextCheck is when the alert's next scheduled step falls due: the
// earliest of its next escalation level, its channels' next rounds and
// its expiration; nil when it is no longer active.
func (al *Alert) nextCheck() *time.Time {
	if al.Status != "active" {
		return nil
	}
	next := al.ExpiresAt
	if t := al.EscalationStatus.NextEscalationAt; t != nil && t.Before(next) {
		next = *t
	}
	for i := range al.DeliveryStatus.ChannelSchedule {
		if t := al.DeliveryStatus.ChannelSchedule[i].next(); t != nil && t.Before(next) {
			next = *t
		}
	}
	return &next
}

// timed adds the successful deliveries of a round sent at start to the
// alert's delivery timings: the first that went through sets
// creation_to_first_delivery_ms, and each one counts in the average.
func (m *Metrics) timed(created, start time.Time, outs []outcome) {
	first, total := timings(outs)
	n := 0
	for _, o := range outs {
		if o.ok {
			n++
		}
	}
	if n == 0 {
		return
	}
	if m.CreationToFirstDeliveryMS == nil {
		v := round2(float64(start.Sub(created).Microseconds()+first.Microseconds()) / 1000)
		m.CreationToFirstDeliveryMS = &v
	}
	prev := 0.0
	if m.AverageDeliveryTimeMS != nil {
		prev = *m.AverageDeliveryTimeMS * float64(m.TimedDeliveries)
	}
	m.TimedDeliveries += n
	avg := round2((prev + float64(total.Microseconds())/1000) / float64(m.TimedDeliveries))
	m.AverageDeliveryTimeMS = &avg
}
