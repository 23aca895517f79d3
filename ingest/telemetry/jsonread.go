package telemetry

import (
	"bytes"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/fleethub/fleethub/hub"
	"github.com/fleethub/fleethub/hub/event"
)

// bodyReader reads the JSON body of POST /v1/telemetry straight into bus
// messages: it validates each message as it scans it and writes its
// envelope with an event.TelemetryEncoder, without building the decoded
// JSON or the event.Telemetry first.
//
// It takes only bodies that are valid and plainly written, and declines
// (ok false) everything else: any validation error, more than MaxBatch
// or no messages, a repeated key, strings with escapes or invalid UTF-8,
// null, top-level keys other than messages, integers written with a sign,
// a fraction or an exponent. Declined bodies go through the general path
// (decode, then validateTelemetry), which gives the answer the API has
// always given, errors and all. So for any body it takes, the reader must
// publish exactly what the general path would publish; it checks the
// same rules in the same terms (number, integer, text, name,
// timestamp), and TestReaderMatchesGeneralPath and FuzzReadTelemetry
// hold it to that.
type bodyReader struct {
	b     []byte
	i     int
	s     *Service
	enc   *event.TelemetryEncoder
	org   string
	env   string
	now   time.Time // ingestion time
	limit time.Time // latest timestamp accepted

	names [][]byte // keys of the map being read, for repeats
}

// read reads the whole body: the messages and what the rules need of
// them.
func (r *bodyReader) read() (msgs []hub.Message, rs []reading, ok bool) {
	if !r.open('{') {
		return nil, nil, false
	}
	if k, ok := r.key(); !ok || string(k) != "messages" || !r.open('[') {
		return nil, nil, false
	}
	n := min(MaxBatch, len(r.b)/64+1)
	msgs, rs = make([]hub.Message, 0, n), make([]reading, 0, n)
	for more := true; more; {
		if len(rs) == MaxBatch {
			return nil, nil, false
		}
		var m hub.Message
		var rd reading
		if m, rd, ok = r.message(); !ok {
			return nil, nil, false
		}
		msgs, rs = append(msgs, m), append(rs, rd)
		if more, ok = r.next(']'); !ok {
			return nil, nil, false
		}
	}
	if more, ok := r.next('}'); more || !ok {
		return nil, nil, false
	}
	r.ws()
	return msgs, rs, r.i == len(r.b)
}

// Fields of a telemetry message, as bits.
const (
	fTimestamp = 1 << iota
	fVehicleID
	fDataType
	fSequence
	fData
	fQuality
)

func (r *bodyReader) message() (m hub.Message, rd reading, ok bool) {
	if !r.open('{') {
		return m, rd, false
	}
	r.enc.Begin(r.org, r.env)
	var seen int
	var id []byte
	dataType, dataAt := "", -1
	for more := true; more; {
		k, ok := r.key()
		if !ok {
			return m, rd, false
		}
		var f int
		switch string(k) {
		case "timestamp":
			f = fTimestamp
			s, ok := r.str()
			if !ok {
				return m, rd, false
			}
			if rd.timestamp, ok = r.timestamp(s); !ok {
				return m, rd, false
			}
			r.enc.Timestamp(rd.timestamp)
		case "vehicle_id":
			f = fVehicleID
			if id, ok = r.str(); !ok || len(id) == 0 || !textOK(id, MaxIDLen) {
				return m, rd, false
			}
			rd.vehicleID = string(id)
			r.enc.VehicleID(id)
		case "data_type":
			f = fDataType
			s, ok := r.str()
			if !ok {
				return m, rd, false
			}
			for _, dt := range event.DataTypes {
				if string(s) == dt {
					dataType = dt
				}
			}
			if dataType == "" {
				return m, rd, false
			}
			rd.diag = dataType == EngineDiagnostics
			r.enc.DataType(dataType)
		case "sequence":
			f = fSequence
			if rd.sequence, ok = r.count(); !ok {
				return m, rd, false
			}
			r.enc.Sequence(rd.sequence)
		case "data":
			f = fData
			if dataType == "" {
				// read once the data type is known
				dataAt = r.i
				ok = r.skip(0)
			} else {
				ok = r.data(dataType, &rd)
			}
		case "quality_indicators":
			f = fQuality
			ok = r.quality()
		}
		if !ok || f == 0 || seen&f != 0 {
			return m, rd, false
		}
		seen |= f
		if more, ok = r.next('}'); !ok {
			return m, rd, false
		}
	}
	if seen&(fTimestamp|fVehicleID|fDataType|fData) != fTimestamp|fVehicleID|fDataType|fData {
		return m, rd, false
	}
	if dataAt >= 0 {
		end := r.i
		r.i = dataAt
		if !r.data(dataType, &rd) {
			return m, rd, false
		}
		r.i = end
	}
	value := r.enc.End(r.now)
	return hub.Message{Topic: r.s.cfg.TelemetryTopic, Key: r.enc.Append(id), Value: value, Time: r.now}, rd, true
}

// data reads the data object of a message of dataType, as validateData
// checks it.
func (r *bodyReader) data(dataType string, rd *reading) bool {
	groups, structured := r.s.tables[dataType]
	if !r.open('{') || r.peek() == '}' {
		return false
	}
	r.enc.BeginData()
	// r.names holds the group names; a group's field names go above them
	// while it is read
	r.names = r.names[:0]
	for more := true; more; {
		gname, ok := r.key()
		if !ok || repeated(r.names, gname) {
			return false
		}
		r.names = append(r.names, gname)
		var fields *fieldTable
		if structured {
			if fields, ok = groups[string(gname)]; !ok {
				return false
			}
		} else if len(r.names) > MaxGroups || !name(gname) {
			return false
		}
		if !r.open('{') {
			return false
		}
		r.enc.BeginGroup(gname)
		if structured {
			ok = r.group(fields, gname, rd)
		} else {
			ok = r.freeGroup()
		}
		if !ok {
			return false
		}
		r.enc.EndGroup()
		if more, ok = r.next('}'); !ok {
			return false
		}
	}
	r.enc.EndData()
	return true
}

// group reads the fields of a documented group (checkGroup, checkKind)
// after its opening brace, and keeps what the rules read of
// engine_diagnostics.
func (r *bodyReader) group(fields *fieldTable, gname []byte, rd *reading) bool {
	if r.peek() == '}' {
		r.i++
		return true
	}
	status := rd.diag && string(gname) == "status_codes"
	engine := rd.diag && string(gname) == "engine"
	var seen uint64 // groups have fewer than 64 fields
	for more := true; more; {
		f, ok := r.key()
		if !ok {
			return false
		}
		k, n, known := fields.find(f)
		if !known || seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
		switch k {
		case kNumber, kPercent:
			n, ok := r.number()
			if !ok || k == kPercent && (n < 0 || n > 100) {
				return false
			}
			r.enc.Number(f, n)
			if engine && string(f) == "coolant_temp" {
				rd.coolant, rd.hasCoolant = n, true
			}
		case kCount:
			n, ok := r.count()
			if !ok {
				return false
			}
			r.enc.Number(f, float64(n))
			if status && string(f) == "dtc_count" {
				rd.dtc, rd.hasDTC = float64(n), true
			}
		case kBool:
			v, ok := r.boolean()
			if !ok {
				return false
			}
			r.enc.Bool(f, v)
			if status && string(f) == "mil_status" {
				rd.mil, rd.hasMil = v, true
			}
		case kText:
			s, ok := r.str()
			if !ok || !textOK(s, MaxTextLen) {
				return false
			}
			r.enc.Text(f, s)
		case kCodes:
			if !r.codes(f, status && string(f) == "pending_codes", rd) {
				return false
			}
		}
		if more, ok = r.next('}'); !ok {
			return false
		}
	}
	return true
}

// codes reads an array of diagnostic trouble codes; keep makes them the
// reading's pending codes.
func (r *bodyReader) codes(f []byte, keep bool, rd *reading) bool {
	if !r.open('[') {
		return false
	}
	start := r.i - 1
	r.enc.BeginCodes(f)
	n := 0
	if r.peek() == ']' {
		r.i++
	} else {
		for more := true; more; {
			r.ws()
			c, ok := r.str()
			if n++; !ok || n > MaxCodes || len(c) == 0 || len(c) > MaxCodeLen {
				return false
			}
			r.enc.Code(c)
			if more, ok = r.next(']'); !ok {
				return false
			}
		}
	}
	r.enc.EndCodes()
	if keep {
		rd.codesJSON, rd.hasCodes = r.b[start:r.i], true
	}
	return true
}

// freeGroup reads a free-form numeric group (checkFreeGroup) after its
// opening brace.
func (r *bodyReader) freeGroup() bool {
	if r.peek() == '}' {
		r.i++
		return true
	}
	first := len(r.names)
	defer func() { r.names = r.names[:first] }()
	for more := true; more; {
		f, ok := r.key()
		if !ok || repeated(r.names[first:], f) || !name(f) {
			return false
		}
		if r.names = append(r.names, f); len(r.names)-first > MaxFields {
			return false
		}
		n, ok := r.number()
		if !ok {
			return false
		}
		r.enc.Number(f, n)
		if more, ok = r.next('}'); !ok {
			return false
		}
	}
	return true
}

// quality reads quality_indicators (validateQuality).
func (r *bodyReader) quality() bool {
	if !r.open('{') {
		return false
	}
	var signal, completeness float64
	var health []byte
	seen := 0
	if r.peek() == '}' {
		r.i++
	} else {
		for more := true; more; {
			k, ok := r.key()
			if !ok {
				return false
			}
			var f int
			switch string(k) {
			case "signal_strength":
				f = 1
				signal, ok = r.number()
				ok = ok && signal >= 0 && signal <= 100
			case "data_completeness":
				f = 2
				completeness, ok = r.number()
				ok = ok && completeness >= 0 && completeness <= 100
			case "sensor_health":
				f = 4
				health, ok = r.str()
				ok = ok && textOK(health, MaxTextLen)
			}
			if !ok || f == 0 || seen&f != 0 {
				return false
			}
			seen |= f
			if more, ok = r.next('}'); !ok {
				return false
			}
		}
	}
	var sp, cp *float64
	if seen&1 != 0 {
		sp = &signal
	}
	if seen&2 != 0 {
		cp = &completeness
	}
	r.enc.Quality(sp, cp, health)
	return true
}

// timestamp reads an RFC 3339 date-time as time.Parse(time.RFC3339Nano)
// does, from 1970 on and not after the limit.
func (r *bodyReader) timestamp(s []byte) (time.Time, bool) {
	t, year, ok := parseRFC3339(s)
	if !ok {
		// what time.Parse takes beyond its RFC 3339 fast path (and what
		// it refuses) is left to it
		p, err := time.Parse(time.RFC3339Nano, string(s))
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

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func daysIn(m time.Month, year int) int {
	if m == time.February {
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	}
	return 31 - int(m-1)%7%2
}

// The JSON scanner. Every reader below skips the whitespace before its
// value.

func (r *bodyReader) ws() {
	for r.i < len(r.b) {
		switch r.b[r.i] {
		case ' ', '\t', '\n', '\r':
			r.i++
		default:
			return
		}
	}
}

// peek returns the next byte after whitespace (0 at the end).
func (r *bodyReader) peek() byte {
	r.ws()
	if r.i < len(r.b) {
		return r.b[r.i]
	}
	return 0
}

// open reads the opening brace or bracket c.
func (r *bodyReader) open(c byte) bool {
	if r.peek() != c {
		return false
	}
	r.i++
	return true
}

// next reads the comma before another member or element (more) or the
// closing brace or bracket end.
func (r *bodyReader) next(end byte) (more, ok bool) {
	switch r.peek() {
	case ',':
		r.i++
		return true, true
	case end:
		r.i++
		return false, true
	}
	return false, false
}

// key reads a member name and its colon.
func (r *bodyReader) key() ([]byte, bool) {
	k, ok := r.str()
	if !ok || r.peek() != ':' {
		return nil, false
	}
	r.i++
	return k, true
}

// str reads a string without escapes, in valid UTF-8; the bytes are the
// body's.
func (r *bodyReader) str() ([]byte, bool) {
	if r.peek() != '"' {
		return nil, false
	}
	b, start := r.b, r.i+1
	i := start
	for i < len(b) && plain[b[i]] {
		i++
	}
	if i < len(b) && b[i] == '"' {
		r.i = i + 1
		return b[start:i], true
	}
	// not plain ASCII: find the end, then check what lies before it
	end := bytes.IndexByte(b[i:], '"')
	if end < 0 {
		return nil, false
	}
	s := b[start : i+end]
	for _, c := range s {
		if !plain[c] && c < 0x80 {
			return nil, false // an escape, a control character
		}
	}
	r.i = i + end + 1
	return s, utf8.Valid(s)
}

// plain marks the bytes a string holds as they are, but its closing
// quote: ASCII but for the backslash, the quote and the control
// characters.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '\\' && c != '"'
	}
	return t
}()

func (r *bodyReader) boolean() (bool, bool) {
	r.ws()
	switch {
	case bytes.HasPrefix(r.b[r.i:], []byte("true")):
		r.i += 4
		return true, true
	case bytes.HasPrefix(r.b[r.i:], []byte("false")):
		r.i += 5
		return false, true
	}
	return false, false
}

// literal reads a JSON number as the JSON grammar writes it; integer is
// true when it has no sign, fraction or exponent.
func (r *bodyReader) literal() (lit []byte, integer bool, ok bool) {
	r.ws()
	b, i := r.b, r.i
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i < len(b) && isDigit(b[i]) {
			i++
		}
	default:
		return nil, false, false
	}
	integer = b[start] != '-'
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return nil, false, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		integer = false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return nil, false, false
		}
		for i < len(b) && isDigit(b[i]) {
			i++
		}
		integer = false
	}
	r.i = i
	return b[start:i], integer, true
}

// count reads an integer ≥ 0 written as plain digits, as integer() reads
// it (up to 18 digits; longer ones are left to the general path).
func (r *bodyReader) count() (int64, bool) {
	lit, integer, ok := r.literal()
	if !ok || !integer || len(lit) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range lit {
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// number reads a finite number as number() reads a json.Number:
// strconv.ParseFloat, here by its exact fast path when the decimal
// mantissa and exponent allow it (exactFloat). It checks the JSON
// grammar and gathers the mantissa in the same pass.
func (r *bodyReader) number() (float64, bool) {
	r.ws()
	b, i := r.b, r.i
	start := i
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	exp, exact := 0, true
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for ; i < len(b) && isDigit(b[i]); i++ {
			if mant >= 1<<53/10 {
				exact = false
				continue
			}
			mant = mant*10 + uint64(b[i]-'0')
		}
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		i++
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		for ; i < len(b) && isDigit(b[i]); i++ {
			if mant >= 1<<53/10 {
				exact = false
				continue
			}
			mant = mant*10 + uint64(b[i]-'0')
			exp--
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		eneg := i < len(b) && b[i] == '-'
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if i >= len(b) || !isDigit(b[i]) {
			return 0, false
		}
		e := 0
		for ; i < len(b) && isDigit(b[i]); i++ {
			if e < 10000 {
				e = e*10 + int(b[i]-'0')
			}
		}
		if eneg {
			e = -e
		}
		exp += e
	}
	r.i = i
	if exact {
		if f, ok := exactFloat(mant, exp); ok {
			if neg {
				f = -f
			}
			return f, true
		}
	}
	f, err := strconv.ParseFloat(string(b[start:i]), 64)
	return f, err == nil && finite(f)
}

// float64pow10 are the powers of ten a float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat is mant × 10^exp when the mantissa (below 2^53) and the
// power of ten are both exact in a float64: one multiplication or
// division, correctly rounded, then gives what strconv.ParseFloat gives
// (it takes the same path).
func exactFloat(mant uint64, exp int) (float64, bool) {
	f := float64(mant)
	switch {
	case mant == 0 || exp == 0:
	case exp > 0 && exp <= 22:
		f *= float64pow10[exp]
	case exp < 0 && exp >= -22:
		f /= float64pow10[-exp]
	default:
		return 0, false
	}
	return f, true
}

// skip passes over one value, checking its syntax (strings as str does).
func (r *bodyReader) skip(depth int) bool {
	if depth > MaxDepth {
		return false
	}
	switch r.peek() {
	case '"':
		_, ok := r.str()
		return ok
	case '{', '[':
		end := byte('}')
		if r.b[r.i] == '[' {
			end = ']'
		}
		r.i++
		if r.peek() == end {
			r.i++
			return true
		}
		for more := true; more; {
			if end == '}' {
				if _, ok := r.key(); !ok {
					return false
				}
			}
			if !r.skip(depth + 1) {
				return false
			}
			var ok bool
			if more, ok = r.next(end); !ok {
				return false
			}
		}
		return true
	case 't', 'f':
		_, ok := r.boolean()
		return ok
	}
	_, _, ok := r.literal()
	return ok
}

// repeated reports whether k is among names.
func repeated(names [][]byte, k []byte) bool {
	for _, n := range names {
		if bytes.Equal(n, k) {
			return true
		}
	}
	return false
}

// textOK is text's length rule: at most max characters.
func textOK(s []byte, max int) bool { return len(s) <= max || utf8.RuneCount(s) <= max }
