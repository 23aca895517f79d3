// Package apitime is the one form of a time the service states itself, in
// its answers and in the messages it publishes: UTC, to the millisecond.
// encoding/json writes such a time in RFC 3339 with at most three
// fractional digits (trailing zeros left out); Format writes it the same
// way where a time is carried as a string. A time a client or a device
// gave is kept and returned as given.
package apitime

import (
	"fmt"
	"time"
)

// Of returns t in UTC, truncated to the millisecond.
func Of(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// Format returns Of(t) in RFC 3339, as encoding/json writes a time.
func Format(t time.Time) string { return Of(t).Format(time.RFC3339Nano) }

// Parse reads a date-time a client sent: RFC 3339 (time.RFC3339Nano's
// layout, "T" and "Z" in upper case), held to what RFC 3339 allows where
// time.Parse is lenient: an offset of at most 23:59 (time.Parse takes
// +24:00 and a minute of 60) and fractional seconds after a point, not a
// comma.
func Parse(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, err
	}
	if err := Strict(s); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// Strict reports what, in a date-time time.Parse took as time.RFC3339Nano,
// RFC 3339 does not allow: an offset hour past 23 or minute past 59, or a
// comma before the fractional seconds. nil for anything else.
func Strict(s string) error {
	if len(s) > 19 && s[19] == ',' {
		return fmt.Errorf("parsing time %q: fractional seconds follow a point in RFC 3339, not a comma", s)
	}
	n := len(s)
	if n < 6 || s[n-1] == 'Z' {
		return nil
	}
	if z := s[n-6:]; (z[0] == '+' || z[0] == '-') && z[3] == ':' && (z[1:3] > "23" || z[4:6] > "59") {
		return fmt.Errorf("parsing time %q: time zone offset %s out of range (at most 23:59)", s, z)
	}
	return nil
}
