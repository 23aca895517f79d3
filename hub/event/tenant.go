package event

// Tenant reads an envelope's organization and environment from the head
// of its encoding, without decoding the rest or allocating: Marshal and
// TelemetryEncoder both write the keys o and e first. ok is false for
// bytes that do not begin so; decode those with Unmarshal. A reader of
// the whole bus (the feed) skips another tenant's messages for the cost
// of this look instead of a full decode. The slices share b.
func Tenant(b []byte) (org, env []byte, ok bool) {
	r := mpReader{b: b}
	if n, ok := r.mapLen(); !ok || n < 2 {
		return nil, nil, false
	}
	for _, want := range [2]string{"o", "e"} {
		k, ok := r.key()
		if !ok || string(k) != want {
			return nil, nil, false
		}
		i, j, ok := r.strRange()
		if !ok {
			return nil, nil, false
		}
		if want == "o" {
			org = b[i:j]
		} else {
			env = b[i:j]
		}
	}
	return org, env, true
}

// Head reads an envelope's organization, environment and kind from the
// head of its encoding, as Tenant and without allocating; ok is false
// for bytes that do not begin so (decode those with Unmarshal). The
// pipeline skips, for the cost of this look, a message no stream of its
// scope could take. The slices share b.
func Head(b []byte) (org, env, kind []byte, ok bool) {
	r := mpReader{b: b}
	if n, ok := r.mapLen(); !ok || n < 3 {
		return nil, nil, nil, false
	}
	for n, want := range [3]string{"o", "e", "k"} {
		k, ok := r.key()
		if !ok || string(k) != want {
			return nil, nil, nil, false
		}
		i, j, ok := r.strRange()
		if !ok {
			return nil, nil, nil, false
		}
		switch n {
		case 0:
			org = b[i:j]
		case 1:
			env = b[i:j]
		default:
			kind = b[i:j]
		}
	}
	return org, env, kind, true
}

// headKind reads an envelope's kind from the head of its encoding, where
// Marshal and TelemetryEncoder write it (after o and e), without
// decoding the rest or allocating; ok is false for bytes that do not
// begin so. Unmarshal picks its decoder by it.
func headKind(b []byte) (kind []byte, ok bool) {
	r := mpReader{b: b}
	if n, ok := r.mapLen(); !ok || n < 3 {
		return nil, false
	}
	for _, want := range [3]string{"o", "e", "k"} {
		k, ok := r.key()
		if !ok || string(k) != want {
			return nil, false
		}
		i, j, ok := r.strRange()
		if !ok {
			return nil, false
		}
		kind = b[i:j]
	}
	return kind, true
}
