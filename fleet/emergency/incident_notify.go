package emergency

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fleethub/fleethub/fleet/contacts"
	"github.com/fleethub/fleethub/internal/store"
)

// notifyPeople tells the involved driver's emergency contacts and the
// organization's dispatchers about a new incident, through the gateway,
// on every channel each has an address for (sms, email, push), at most
// maxDeliveries at a time; a person in their quiet hours is sent nothing
// unless the incident is critical and they keep the override. Each notification is logged in the incident's
// communication_log, and a timeline entry emergency_contacts_notified
// names who was reached; without a gateway nothing is sent nor logged.
// The driver's own directory entry fills the involved party's
// contact_info. A directory that cannot be read is
// logged and the incident is reported anyway.
func (s *Incidents) notifyPeople(ctx context.Context, sc store.Scope, in *Incident, now time.Time) {
	if s.dir == nil {
		return
	}
	var ecs, dispatchers []contacts.Contact
	seen := map[string]bool{}
	if in.DriverID != "" {
		links := []string{in.DriverID}
		own, err := s.dir.ForDriver(ctx, sc, in.DriverID)
		if err != nil {
			s.log.Warn("emergency: directory", "incident_id", in.IncidentID, "err", err)
			return
		}
		for _, c := range own {
			links = append(links, c.ContactID)
			if len(in.InvolvedParties) > 0 && in.InvolvedParties[0].ContactInfo.Name == nil {
				in.InvolvedParties[0].ContactInfo = Contact{Name: opt(c.Name), Phone: opt(firstOf(c.Channels.SMS, c.Channels.Voice))}
			}
		}
		for _, l := range links {
			cs, err := s.dir.EmergencyContactsOf(ctx, sc, l)
			if err != nil {
				s.log.Warn("emergency: directory", "incident_id", in.IncidentID, "err", err)
				return
			}
			for _, c := range cs {
				if !seen[c.ContactID] {
					seen[c.ContactID] = true
					ecs = append(ecs, c)
				}
			}
		}
		if len(ecs) > 0 && len(in.InvolvedParties) > 0 {
			in.InvolvedParties[0].ContactInfo.EmergencyContact = opt(ecs[0].Name)
		}
	}
	ds, err := s.dir.WithRole(ctx, sc, "dispatcher")
	if err != nil {
		s.log.Warn("emergency: directory", "incident_id", in.IncidentID, "err", err)
	}
	for _, c := range ds {
		if !seen[c.ContactID] {
			seen[c.ContactID] = true
			dispatchers = append(dispatchers, c)
		}
	}
	if len(ecs)+len(dispatchers) == 0 || s.notify == nil {
		// nobody to notify, or no gateway to notify them through:
		// nothing is sent, so nothing is logged
		return
	}
	msg := fmt.Sprintf("Incident %s (%s, %s) at %.5f, %.5f", in.IncidentID, in.EventType, in.SeverityLevel, in.Location.Latitude, in.Location.Longitude)
	if in.DriverID != "" {
		msg += " involving driver " + in.DriverID
	}
	// a person in their quiet hours is sent nothing, as for alerts: only
	// a critical incident reaches them, unless they turned the override
	// off
	var jobs []job
	for i := range ecs {
		if !ecs[i].Quiet(now, in.SeverityLevel) {
			jobs = append(jobs, personJobs(&ecs[i], "emergency_contact")...)
		}
	}
	for i := range dispatchers {
		if !dispatchers[i].Quiet(now, in.SeverityLevel) {
			jobs = append(jobs, personJobs(&dispatchers[i], "dispatcher")...)
		}
	}
	log := make([]Communication, len(jobs))
	sem := make(chan struct{}, maxDeliveries)
	var wg sync.WaitGroup
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			status := "delivered"
			if err := s.send(ctx, sc, in, j.c, j.typ, j.channel, j.to, msg); errors.Is(err, ErrRetrying) {
				status = "retrying"
			} else if err != nil {
				status = "failed"
			}
			log[i] = Communication{Timestamp: now, Type: j.channel, Recipient: j.c.ContactID, Message: msg, DeliveryStatus: status}
		}()
	}
	wg.Wait()
	in.CommunicationLog = append(in.CommunicationLog, log...)
	// Reached: a person with at least one notification delivered. The
	// timeline states only that; nobody reached, no entry.
	reached := map[string]bool{}
	for _, l := range log {
		if l.DeliveryStatus == "delivered" {
			reached[l.Recipient] = true
		}
	}
	ids := func(cs []contacts.Contact) []string {
		out := []string{}
		for _, c := range cs {
			if reached[c.ContactID] {
				out = append(out, c.ContactID)
			}
		}
		return out
	}
	ec, dp := ids(ecs), ids(dispatchers)
	if len(ec)+len(dp) == 0 {
		return
	}
	in.Timeline = append(in.Timeline, TimelineEntry{Timestamp: now, Event: "emergency_contacts_notified",
		Description: counted(len(ec), "emergency contact") + " and " + counted(len(dp), "dispatcher") + " notified",
		Data:        map[string]any{"emergency_contacts": ec, "dispatchers": dp}})
}

// job is one notification of an incident: a person, as whom, on which
// channel and address.
type job struct {
	c       *contacts.Contact
	typ     string
	channel string
	to      string
}

// personJobs are the gateway channels a person has an address for; voice
// only when they have no other.
func personJobs(c *contacts.Contact, typ string) []job {
	var out []job
	for _, ch := range []string{"sms", "email", "push_notification"} {
		if to := address(c, ch); to != "" {
			out = append(out, job{c, typ, ch, to})
		}
	}
	if len(out) == 0 && c.Channels.Voice != "" {
		out = append(out, job{c, typ, "voice_call", c.Channels.Voice})
	}
	return out
}

// send is one incident notification through the gateway.
func (s *Incidents) send(ctx context.Context, sc store.Scope, in *Incident, c *contacts.Contact, typ, channel, to, msg string) error {
	if s.notify == nil {
		return ErrNoGateway
	}
	ctx, cancel := context.WithTimeout(ctx, notifyTimeout)
	defer cancel()
	return s.notify.Notify(ctx, Notification{IncidentID: in.IncidentID, Channel: channel, Recipient: c.ContactID, Title: "Incident: " + in.EventType,
		Message: msg, Severity: in.SeverityLevel, To: to, RecipientType: typ, ContactID: c.ContactID, Language: c.Language, Org: sc.Org, Env: sc.Env})
}

func firstOf(vs ...string) string {
	for _, v := range vs {
		if v != "" {
			return v
		}
	}
	return ""
}

// overlay brings the communication log's gateway notifications up to the
// queue's state (delivered, retrying, failed) when the notifier keeps
// them.
func (s *Incidents) overlay(ctx context.Context, sc store.Scope, in *Incident) error {
	sl, ok := s.notify.(statusLister)
	if !ok || len(in.CommunicationLog) == 0 {
		return nil
	}
	rows, err := sl.Statuses(ctx, sc, in.IncidentID)
	if err != nil {
		return err
	}
	for _, n := range rows {
		for i := range in.CommunicationLog {
			e := &in.CommunicationLog[i]
			if e.Recipient != n.RecipientID || e.Type != n.Channel {
				continue
			}
			switch n.Status {
			case store.NotificationDelivered:
				e.DeliveryStatus = "delivered"
			case store.NotificationFailed:
				e.DeliveryStatus = "failed"
			default:
				e.DeliveryStatus = "retrying"
			}
		}
	}
	return nil
}

// counted is n and the noun, in the plural unless n is 1: "1 dispatcher",
// "2 dispatchers", "0 dispatchers".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
