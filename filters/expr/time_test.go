package expr_test

import (
	"testing"
	"time"

	"github.com/fleethub/fleethub/filters/expr"
	"github.com/fleethub/fleethub/hub/event"
)

func at(ts string) *event.Envelope {
	t, err := time.Parse(time.RFC3339, ts)
	if err != nil {
		panic(err)
	}
	env := harshBraking()
	env.Event.Timestamp = t
	return env
}

func TestTimeFilters(t *testing.T) {
	type spec struct {
		tz              string
		business, noWkd bool
	}
	tests := []struct {
		name string
		spec spec
		ts   string
		want bool
	}{
		// 2025-03-09 01:00Z is Saturday 20:00 in New York and Sunday 10:00 in Tokyo.
		{"saturday NY, weekends excluded", spec{"America/New_York", false, true}, "2025-03-09T01:00:00Z", false},
		{"sunday Tokyo, weekends excluded", spec{"Asia/Tokyo", false, true}, "2025-03-09T01:00:00Z", false},
		{"saturday NY, no time filter", spec{"America/New_York", false, false}, "2025-03-09T01:00:00Z", true},
		// 2025-03-08 01:00Z is Friday 20:00 in New York and Saturday 10:00 in Tokyo.
		{"friday evening NY, weekends excluded", spec{"America/New_York", false, true}, "2025-03-08T01:00:00Z", true},
		{"saturday morning Tokyo, weekends excluded", spec{"Asia/Tokyo", false, true}, "2025-03-08T01:00:00Z", false},
		{"friday evening NY, business hours", spec{"America/New_York", true, false}, "2025-03-08T01:00:00Z", false},
		{"saturday morning Tokyo, business hours", spec{"Asia/Tokyo", true, false}, "2025-03-08T01:00:00Z", false},
		// 2025-03-10 00:00Z is Sunday 20:00 in New York (EDT since that morning) and Monday 09:00 in Tokyo.
		{"sunday NY, business hours", spec{"America/New_York", true, false}, "2025-03-10T00:00:00Z", false},
		{"monday Tokyo, business hours", spec{"Asia/Tokyo", true, false}, "2025-03-10T00:00:00Z", true},
		{"monday UTC midnight, business hours", spec{"", true, false}, "2025-03-10T00:00:00Z", false},
		{"monday UTC midnight, weekends excluded", spec{"UTC", false, true}, "2025-03-10T00:00:00Z", true},
		// Business hours are [08:00, 18:00) local.
		{"08:00 Berlin", spec{"Europe/Berlin", true, false}, "2025-03-04T08:00:00+01:00", true},
		{"07:59:59 Berlin", spec{"Europe/Berlin", true, false}, "2025-03-04T07:59:59+01:00", false},
		{"17:59:59 Berlin", spec{"Europe/Berlin", true, false}, "2025-03-04T17:59:59+01:00", true},
		{"18:00 Berlin", spec{"Europe/Berlin", true, false}, "2025-03-04T18:00:00+01:00", false},
		{"08:00 Berlin, given in UTC", spec{"Europe/Berlin", true, false}, "2025-03-04T07:00:00Z", true},
		{"07:30Z is 07:30 UTC", spec{"", true, false}, "2025-03-04T07:30:00Z", false},
		// DST: in New York 2025-03-09 at 02:00 clocks go to 03:00; Monday 08:00 EDT is 12:00Z.
		{"monday 07:59 EDT", spec{"America/New_York", true, false}, "2025-03-10T11:59:00Z", false},
		{"monday 08:00 EDT", spec{"America/New_York", true, false}, "2025-03-10T12:00:00Z", true},
		{"half-hour zone 17:59 IST", spec{"Asia/Kolkata", true, false}, "2025-03-04T12:29:00Z", true},
		{"half-hour zone 18:00 IST", spec{"Asia/Kolkata", true, false}, "2025-03-04T12:30:00Z", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, Timezone: tt.spec.tz,
				BusinessHoursOnly: tt.spec.business, ExcludeWeekends: tt.spec.noWkd})
			if got := p.Match(at(tt.ts)); got != tt.want {
				t.Errorf("Match(%s) in %q = %v, want %v", tt.ts, tt.spec.tz, got, tt.want)
			}
		})
	}
}

// TestTimeFilterIngestedAt: a message without a timestamp is judged by
// when the hub accepted it.
func TestTimeFilterIngestedAt(t *testing.T) {
	p := mustCompile(t, expr.Spec{Kind: expr.KindEvent, ExcludeWeekends: true})
	env := harshBraking()
	env.Event.Timestamp = time.Time{}
	env.IngestedAt = time.Date(2025, 3, 8, 12, 0, 0, 0, time.UTC) // Saturday
	if p.Match(env) {
		t.Error("matched a Saturday ingestion")
	}
	env.IngestedAt = time.Date(2025, 3, 7, 12, 0, 0, 0, time.UTC) // Friday
	if !p.Match(env) {
		t.Error("did not match a Friday ingestion")
	}
}
