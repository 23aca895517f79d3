// Package contacts is the people directory of an organization: drivers,
// field personnel, dispatchers, supervisors, emergency management and the
// emergency contacts of drivers, each with the channels that reach them
// (sms and voice numbers in E.164, e-mail, a push token), a home area or a
// last known location, links to the drivers and vehicles they belong to,
// quiet hours and a preferred language. It is served over HTTP by
// api/contacts and read by the emergency service (fleet/emergency) to
// resolve an alert's audiences.
//
// A contact is stored whole as JSON beside its roles and link tokens
// ("driver:<id>", "vehicle:<id>", "for:<driver id>"), which listings
// filter on. Two contacts of a scope with the same name (case and spaces
// aside) and the same sms, voice, e-mail and driver ids are duplicates:
// the second is refused. Listings run oldest first with keyset cursors.
//
// The Directory holds no state between calls and is safe for concurrent
// use; its store is declared here as the small interface it uses.
package contacts
