// Package apitime is the one form of a time the service states itself, in
// its answers and in the messages it publishes: UTC, to the millisecond.
// encoding/json writes such a time in RFC 3339 with at most three
// fractional digits (trailing zeros left out); Format writes it the same
// way where a time is carried as a string. A time a client or a device
// gave is kept and returned as given.
package apitime

import "time"

// Of returns t in UTC, truncated to the millisecond.
func Of(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// Format returns Of(t) in RFC 3339, as encoding/json writes a time.
func Format(t time.Time) string { return Of(t).Format(time.RFC3339Nano) }
