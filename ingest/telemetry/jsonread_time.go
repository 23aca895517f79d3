package telemetry

import (
	"time"

	"github.com/fleethub/fleethub/internal/apitime"
)

// timestamp reads an RFC 3339 date-time as time.Parse(time.RFC3339Nano)
// does, from 1970 on and not after the limit.
func (r *bodyReader) timestamp(s []byte) (time.Time, bool) {
	t, year, ok := parseRFC3339(s)
	if !ok {
		// what time.Parse takes beyond its RFC 3339 fast path (and what
		// it refuses) is left to it
		p, err := apitime.Parse(string(s))
		if err != nil {
			return time.Time{}, false
		}
		t, year = p, p.Year()
	}
	if year < 1970 || t.After(r.limit) {
		return time.Time{}, false
	}
	return t.UTC(), true
}

// parseRFC3339 is the fast path of time.Parse for RFC 3339 layouts
// (time/format_rfc3339.go), returning the instant and the year as
// written (in the written offset, as Time.Year of the parsed time gives
// it); ok is false where time.Parse would fall back to its general
// parser.
func parseRFC3339(s []byte) (t time.Time, year int, ok bool) {
	ok = true
	num := func(s []byte, lo, hi int) int {
		x := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				ok = false
				return lo
			}
			x = x*10 + int(c-'0')
		}
		if x < lo || x > hi {
			ok = false
			return lo
		}
		return x
	}
	if len(s) < len("2006-01-02T15:04:05") {
		return t, 0, false
	}
	year = num(s[0:4], 0, 9999)
	month := num(s[5:7], 1, 12)
	day := num(s[8:10], 1, daysIn(time.Month(month), year))
	hour := num(s[11:13], 0, 23)
	minute := num(s[14:16], 0, 59)
	sec := num(s[17:19], 0, 59)
	if !ok || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return t, 0, false
	}
	s = s[19:]
	nsec := 0
	if len(s) >= 2 && s[0] == '.' && isDigit(s[1]) {
		n := 2
		for n < len(s) && isDigit(s[n]) {
			n++
		}
		// nanoseconds: the first nine digits, the rest ignored
		digits := s[1:min(n, 10)]
		for _, c := range digits {
			nsec = nsec*10 + int(c-'0')
		}
		for range 9 - len(digits) {
			nsec *= 10
		}
		s = s[n:]
	}
	t = time.Date(year, time.Month(month), day, hour, minute, sec, nsec, time.UTC)
	if len(s) == 1 && s[0] == 'Z' {
		return t, year, true
	}
	if len(s) != len("-07:00") {
		return t, 0, false
	}
	hr, mm := num(s[1:3], 0, 23), num(s[4:6], 0, 59)
	if !ok || s[0] != '-' && s[0] != '+' || s[3] != ':' {
		return t, 0, false
	}
	offset := time.Duration(hr)*time.Hour + time.Duration(mm)*time.Minute
	if s[0] == '-' {
		offset = -offset
	}
	return t.Add(-offset), year, true
}

func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int(m-1)%7%2
}
