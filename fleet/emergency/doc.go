// Package emergency is the emergency domain: incidents and alerts, served
// over HTTP by api/emergency.
//
// Incidents (Incidents) are reported, listed, read and moved through their
// states (active → escalated | resolved | cancelled; escalated → resolved
// | cancelled). Every change is appended to the incident's timeline and
// status_updates, stored with a new version (a concurrent change is
// retried three times) and published as an emergency_events event.
//
// Alerts (Alerts) are broadcast to the recipients of their audiences,
// resolved through the people directory (Directory, fleet/contacts): the
// drivers of active trips whose last point lies in the area, field
// personnel by last known location else home area, dispatchers, the
// emergency contacts of the drivers in the area; exclude wins and each
// person is reached once. They go out over every delivery channel:
// in_app_alert is an emergency_events event on the bus, the other
// channels go through a Notifier (HTTPNotifier: a JSON POST to a
// gateway) to each contact's address for the channel, skipping contacts
// in their quiet hours. A reported incident notifies the involved
// driver's emergency contacts and the dispatchers the same way. A
// channel may wait delay_minutes before its first delivery and repeat to
// the recipients who have not acknowledged (rounds.go). An alert expires
// at its expiration and escalates level by level while acknowledgments
// are pending. When the store is also a Schedule (both backends are), the
// due times of the levels, of the channels' delayed deliveries and
// repeats, and of the expiry are stored with the alert and Run takes them
// when they fall due, on whichever node claims them first (claims are
// atomic and leased; see Tick); otherwise expiry and escalation are
// brought up to date when the alert is read, and delays and repeats are
// refused. Run is the only goroutine the alert service owns; it stops
// with its context.
//
// Areas are drawn from data (resolve): radius and polygon as given, a
// city or a state from the loaded addresses (Places), a route from a
// stored optimization's stops (RouteReader, by type assertion on the
// store); without the data the area is approximated and the alert says
// so in area_resolution.
//
// Gateway notifications go through an Outbox when one is configured: each
// is stored in the durable queue before its first attempt, retried with
// exponential backoff by Run on any node, and signed by HTTPNotifier with
// Standard Webhooks headers; reading an alert overlays the queue's state
// on its recipients' deliveries and recounts its affected area analysis.
// An escalation level's notification keeps one id (the webhook-id) per
// alert, level, contact and channel, so a node taking over a level after
// a crash does not queue it twice.
//
// Concurrency and backpressure: Create delivers every recipient on every
// channel concurrently, at most 16 deliveries at a time, each gateway call
// bounded by 5 s, and answers once all are done. A failed publish of an
// incident's lifecycle event is logged and does not fail the change (the
// incident is durable); a failed delivery is counted as failed in the
// alert's delivery status. The services hold no state between calls and
// are safe for concurrent use.
//
// The stores, the trip reader and the publisher are declared here, as
// small interfaces of what the services use.
package emergency
