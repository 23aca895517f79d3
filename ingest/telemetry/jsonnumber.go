package telemetry

import "strconv"

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
