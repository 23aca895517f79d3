package emergency

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fleethub/fleethub/internal/store"
)

// TestDeliverySteps: a new alert schedules a delayed channel's first
// delivery and every repeat due before the expiration, and nothing for a
// channel without delay or repeats.
func TestDeliverySteps(t *testing.T) {
	t0 := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	exp := t0.Add(time.Hour)
	al := &Alert{AlertID: "alr_1", CreatedAt: t0, ExpiresAt: exp}
	al.DeliveryStatus.ChannelSchedule = planChannels([]Channel{
		{Channel: "in_app_alert"},
		{Channel: "sms", RepeatIntervalMinutes: 20, MaxRepeats: 5},                          // +20, +40; +60 is the expiration
		{Channel: "voice_call", DelayMinutes: 30, RepeatIntervalMinutes: 15, MaxRepeats: 3}, // +30, +45; +60 is not before it
	}, t0, exp, func(string) bool { return true })
	var got []string
	for _, d := range deliverySteps(store.Scope{Org: "o", Env: "test"}, al) {
		if d.Kind != store.AlertDueDelivery || d.AlertID != "alr_1" || d.Org != "o" {
			t.Errorf("step %+v", d)
		}
		got = append(got, fmt.Sprintf("%s %d +%v", d.Channel, d.Level, d.DueAt.Sub(t0)))
	}
	want := []string{"sms 1 +20m0s", "sms 2 +40m0s", "voice_call 0 +30m0s", "voice_call 1 +45m0s"}
	if !slices.Equal(got, want) {
		t.Errorf("steps %v, want %v", got, want)
	}
	cs := al.DeliveryStatus.ChannelSchedule
	if cs[0].Status != ChannelDone || cs[1].Status != ChannelRepeating || cs[1].RepeatsRemaining != 2 || cs[2].Status != ChannelScheduled ||
		cs[2].RepeatsRemaining != 1 || cs[2].NextRepeatAt != nil {
		t.Errorf("schedule %+v", cs)
	}
	// round 0 of the voice call is taken once; round 1 then, not before
	v := &cs[2]
	if !v.pending(0) || !v.pending(1) {
		t.Fatal("the voice call's rounds are pending")
	}
	v.sent(0, t0.Add(30*time.Minute), exp, true)
	if v.pending(0) || !v.pending(1) || v.Status != ChannelRepeating || !v.NextRepeatAt.Equal(t0.Add(45*time.Minute)) {
		t.Errorf("after round 0: %+v", v)
	}
	v.sent(1, t0.Add(45*time.Minute), exp, true)
	if v.pending(1) || v.Status != ChannelDone || v.RepeatsRemaining != 0 || v.TimesSent != 2 {
		t.Errorf("after round 1: %+v", v)
	}
	// a round that reached nobody is taken but not counted as sent
	n := planChannels([]Channel{{Channel: "sms", RepeatIntervalMinutes: 20, MaxRepeats: 1}}, t0, exp, func(string) bool { return false })[0]
	if n.TimesSent != 0 || n.LastSentAt != nil || n.Status != ChannelRepeating {
		t.Errorf("a first delivery that went out to nobody: %+v", n)
	}
	n.sent(1, t0.Add(20*time.Minute), exp, false)
	if n.TimesSent != 0 || n.LastSentAt != nil || n.Status != ChannelDone || n.pending(1) {
		t.Errorf("a repeat that went out to nobody: %+v", n)
	}
}
