package emergency

import (
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"
)

// pt is a point of an affected area.
func pt(lat, lon float64) AreaPoint { return AreaPoint{Latitude: &lat, Longitude: &lon} }

func TestAlertBodyValidate(t *testing.T) {
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	radius := 5.0
	valid := func() AlertBody {
		return AlertBody{AlertType: "road_hazard", Severity: "high", Title: "Flood", Message: "Avoid the river road",
			AffectedArea:     &AffectedArea{Type: "radius", Center: new(pt(40, -83)), RadiusKm: &radius},
			TargetAudience:   &Audience{Include: []string{"active_drivers"}},
			DeliveryChannels: []Channel{{Channel: "in_app_alert"}}, Expiration: "2024-05-01T14:00:00Z"}
	}
	for _, c := range []struct {
		name string
		edit func(b *AlertBody)
		bad  []string
	}{
		{"valid", func(*AlertBody) {}, nil},
		{"unknown type and severity", func(b *AlertBody) { b.AlertType, b.Severity = "x", "y" }, []string{"alert_type", "severity"}},
		{"title too long", func(b *AlertBody) { b.Title = string(make([]rune, 101)) }, []string{"title"}},
		{"no area", func(b *AlertBody) { b.AffectedArea = nil }, []string{"affected_area"}},
		{"radius out of range", func(b *AlertBody) { r := 20001.0; b.AffectedArea.RadiusKm = &r }, []string{"affected_area.radius_km"}},
		{"polygon of two vertices", func(b *AlertBody) {
			b.AffectedArea = &AffectedArea{Type: "polygon", Polygon: []AreaPoint{pt(1, 1), pt(2, 2)}}
		}, []string{"affected_area.polygon"}},
		{"center without longitude", func(b *AlertBody) { lat := 39.97; b.AffectedArea.Center = &AreaPoint{Latitude: &lat} },
			[]string{"affected_area.center.longitude"}},
		{"center without coordinates", func(b *AlertBody) { b.AffectedArea.Center = &AreaPoint{} },
			[]string{"affected_area.center.latitude", "affected_area.center.longitude"}},
		{"polygon vertices without a coordinate", func(b *AlertBody) {
			one, two, three := 1.0, 2.0, 3.0
			b.AffectedArea = &AffectedArea{Type: "polygon", Polygon: []AreaPoint{{Latitude: &one}, {Latitude: &two}, {Longitude: &three}}}
		}, []string{"affected_area.polygon[0].longitude", "affected_area.polygon[1].longitude", "affected_area.polygon[2].latitude"}},
		{"polygon vertex out of range", func(b *AlertBody) {
			b.AffectedArea = &AffectedArea{Type: "polygon", Polygon: []AreaPoint{pt(1, 1), pt(91, 2), pt(2, 3)}}
		}, []string{"affected_area.polygon[1].latitude"}},
		{"state code", func(b *AlertBody) { b.AffectedArea = &AffectedArea{Type: "state", State: "oh"} }, []string{"affected_area.state"}},
		{"unknown audience", func(b *AlertBody) { b.TargetAudience.Exclude = []string{"everyone"} }, []string{"target_audience.exclude[0]"}},
		{"empty audience", func(b *AlertBody) { b.TargetAudience = &Audience{} }, []string{"target_audience"}},
		{"every included audience excluded", func(b *AlertBody) {
			b.TargetAudience = &Audience{Include: []string{"dispatchers"}, Exclude: []string{"dispatchers", "field_personnel"}}
		}, []string{"target_audience"}},
		{"only specific drivers", func(b *AlertBody) { b.TargetAudience = &Audience{SpecificDrivers: []string{"drv_1"}} }, nil},
		{"only specific vehicles", func(b *AlertBody) { b.TargetAudience = &Audience{SpecificVehicles: []string{"veh_1"}} }, nil},
		{"1,000 specific vehicles and drivers", func(b *AlertBody) {
			b.TargetAudience = &Audience{SpecificVehicles: slices.Repeat([]string{"veh_1"}, 1000), SpecificDrivers: slices.Repeat([]string{"drv_1"}, 1000)}
		}, nil},
		{"1,001 specific vehicles and drivers", func(b *AlertBody) {
			b.TargetAudience = &Audience{SpecificVehicles: slices.Repeat([]string{"veh_1"}, 1001), SpecificDrivers: slices.Repeat([]string{""}, 1001)}
		}, []string{"target_audience.specific_drivers", "target_audience.specific_vehicles"}},
		{"emergency contacts by the action", func(b *AlertBody) {
			b.TargetAudience, b.AutomatedActions = &Audience{}, []string{"notify_emergency_contacts"}
		}, nil},
		{"emergency contacts by the action, excluded", func(b *AlertBody) {
			b.TargetAudience, b.AutomatedActions = &Audience{Exclude: []string{"emergency_contacts"}}, []string{"notify_emergency_contacts"}
		}, []string{"target_audience"}},
		{"unknown audiences in both lists", func(b *AlertBody) {
			b.TargetAudience.Include = []string{"dispatchers", "martians"}
			b.TargetAudience.Exclude = []string{"field_personnel", "everyone"}
		}, []string{"target_audience.exclude[1]", "target_audience.include[1]"}},
		{"no channel", func(b *AlertBody) { b.DeliveryChannels = nil }, []string{"delivery_channels"}},
		{"bad channel", func(b *AlertBody) {
			b.DeliveryChannels = []Channel{{Channel: "fax", MaxRepeats: 21, RepeatIntervalMinutes: 5}}
		},
			[]string{"delivery_channels[0].channel", "delivery_channels[0].max_repeats"}},
		{"channel twice", func(b *AlertBody) {
			b.DeliveryChannels = []Channel{{Channel: "sms"}, {Channel: "email"}, {Channel: "sms"}}
		},
			[]string{"delivery_channels[2].channel"}},
		{"repeats and delay in bounds", func(b *AlertBody) {
			b.DeliveryChannels = []Channel{{Channel: "sms", RepeatIntervalMinutes: 1440, MaxRepeats: 20}, {Channel: "voice_call", DelayMinutes: 119}}
		}, nil},
		{"repeats out of bounds", func(b *AlertBody) {
			b.DeliveryChannels = []Channel{{Channel: "sms", RepeatIntervalMinutes: 1441, MaxRepeats: -1}, {Channel: "email", RepeatIntervalMinutes: -5, MaxRepeats: 2}}
		}, []string{"delivery_channels[0].max_repeats", "delivery_channels[0].repeat_interval_minutes", "delivery_channels[1].repeat_interval_minutes"}},
		{"interval without max_repeats", func(b *AlertBody) { b.DeliveryChannels = []Channel{{Channel: "sms", RepeatIntervalMinutes: 5}} },
			[]string{"delivery_channels[0].max_repeats"}},
		{"max_repeats without interval", func(b *AlertBody) { b.DeliveryChannels = []Channel{{Channel: "sms", MaxRepeats: 3}} },
			[]string{"delivery_channels[0].repeat_interval_minutes"}},
		{"negative delay", func(b *AlertBody) { b.DeliveryChannels = []Channel{{Channel: "voice_call", DelayMinutes: -1}} },
			[]string{"delivery_channels[0].delay_minutes"}},
		{"delay past a day", func(b *AlertBody) {
			b.Expiration = "2024-05-03T12:00:00Z"
			b.DeliveryChannels = []Channel{{Channel: "voice_call", DelayMinutes: 1441}}
		}, []string{"delivery_channels[0].delay_minutes"}},
		{"delay at the expiration", func(b *AlertBody) { b.DeliveryChannels = []Channel{{Channel: "voice_call", DelayMinutes: 120}} },
			[]string{"delivery_channels[0].delay_minutes"}},
		{"expired", func(b *AlertBody) { b.Expiration = "2024-05-01T11:00:00Z" }, []string{"expiration"}},
		{"unknown action", func(b *AlertBody) { b.AutomatedActions = []string{"show_safe_route", "launch"} }, []string{"automated_actions[1]"}},
		{"escalation level without delay", func(b *AlertBody) {
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{Action: "notify_supervisors"}}}
		}, []string{"escalation_policy.escalation_levels[0].delay_minutes"}},
		{"escalation levels in bounds", func(b *AlertBody) {
			b.Expiration = "2024-05-03T12:00:00Z"
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 1, Action: "notify_supervisors"},
				{DelayMinutes: 1440, Action: "notify_emergency_management"}}}
		}, nil},
		{"escalation level past a day", func(b *AlertBody) {
			// minutes that would overflow the due time
			b.Expiration = "2024-05-03T12:00:00Z"
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 1441, Action: "notify_supervisors"},
				{DelayMinutes: 200000000, Action: "notify_emergency_management"}}}
		}, []string{"escalation_policy.escalation_levels[0].delay_minutes", "escalation_policy.escalation_levels[1].delay_minutes"}},
		{"escalation levels out of order", func(b *AlertBody) {
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 30, Action: "notify_supervisors"},
				{DelayMinutes: 15, Action: "notify_emergency_management"}, {DelayMinutes: 15, Action: "notify_dispatchers"}}}
		}, []string{"escalation_policy.escalation_levels[1].delay_minutes", "escalation_policy.escalation_levels[2].delay_minutes"}},
		{"escalation level at the expiration", func(b *AlertBody) {
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 119, Action: "notify_supervisors"},
				{DelayMinutes: 120, Action: "notify_emergency_management"}}}
		}, []string{"escalation_policy.escalation_levels[1].delay_minutes"}},
		{"escalation level with an unknown action", func(b *AlertBody) {
			b.AcknowledgmentRequired = true
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 5, Action: "notify_dispatchers"},
				{DelayMinutes: 10, Action: "panic"}, {DelayMinutes: 15}}}
		}, []string{"escalation_policy.escalation_levels[1].action", "escalation_policy.escalation_levels[2].action"}},
		{"escalation without acknowledgment_required", func(b *AlertBody) {
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(true), EscalationLevels: []EscalationLevel{{DelayMinutes: 5, Action: "notify_supervisors"}}}
		}, []string{"escalation_policy.enabled"}},
		{"escalation off without acknowledgment_required", func(b *AlertBody) {
			b.EscalationPolicy = &EscalationPolicy{Enabled: new(false), EscalationLevels: []EscalationLevel{{DelayMinutes: 5, Action: "notify_supervisors"}}}
		}, nil},
		{"channel priority", func(b *AlertBody) {
			b.DeliveryChannels = []Channel{{Channel: "sms", Priority: "whenever"}, {Channel: "email", Priority: "immediate"}}
		}, []string{"delivery_channels[0].priority"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := valid()
			c.edit(&b)
			_, bad := b.validate(now)
			if got := slices.Sorted(maps.Keys(bad)); !slices.Equal(got, c.bad) {
				t.Errorf("bad fields %v, want %v (%v)", got, c.bad, bad)
			}
		})
	}
}

func TestDeliveryCounts(t *testing.T) {
	first, total := timings([]outcome{
		{"sms", true, 3 * time.Millisecond}, {"sms", false, time.Millisecond}, {"voice_call", true, 5 * time.Millisecond},
		{"voice_call", false, time.Millisecond}, {"in_app_alert", true, 2 * time.Millisecond},
	})
	if first != 2*time.Millisecond || total != 10*time.Millisecond {
		t.Errorf("timings = %v, %v; want 2ms, 10ms", first, total)
	}
	rs := []Recipient{
		{Deliveries: []RecipientDelivery{{Channel: "sms", Status: "delivered"}, {Channel: "sms", Status: "retrying"}, {Channel: "voice_call", Status: "delivered"}}},
		{Deliveries: []RecipientDelivery{{Channel: "voice_call", Status: "failed", NotificationID: "ntf_1"}, {Channel: "in_app_alert", Status: "delivered"},
			{Channel: "email", Status: "skipped"}, {Channel: "sms", Status: "delivered", Level: 1},
			// no gateway configured: failed, never sent
			{Channel: "push_notification", Status: "failed", Reason: ErrNoGateway.Error()}}},
	}
	want := DeliveryStatus{TotalRecipients: 2, SuccessfulDeliveries: 3, FailedDeliveries: 2, PendingDeliveries: 1, DeliveryBreakdown: Breakdown{
		SMS: ChannelCounts{Sent: 2, Delivered: 1}, Voice: VoiceCounts{Initiated: 2, Failed: 1},
		InApp: ChannelCounts{Sent: 1, Delivered: 1}, Push: ChannelCounts{Failed: 1}}}
	if ds := deliveryStatus(rs); !reflect.DeepEqual(ds, want) {
		t.Errorf("deliveryStatus = %+v; want %+v", ds, want)
	}
}
