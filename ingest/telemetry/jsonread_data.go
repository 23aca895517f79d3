package telemetry

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
